package agent

import (
	"context"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
)

// The session's id in the headers routers read is the same before and
// after a fold, a resume and a restart of the editor's server and the
// engine: the transcript's.
func TestSessionIdentityAcrossFoldAndResume(t *testing.T) {
	ws, state := slotWorkspace(t), t.TempDir()
	cfg := sim.Config{Ctx: 32768, Root: ws}
	srv1, url := simURL(t, cfg)
	a := startOn(t, url, ws, state, "")
	ask(t, a, "rounds=4 look at the files")
	if before, after, err := a.Compact(context.Background(), nil); err != nil || after >= before {
		t.Fatalf("Compact: %d → %d tokens, %v; want a fold", before, after, err)
	}
	ask(t, a, "rounds=2 and now the rest")
	id, path := a.ID(), a.TranscriptPath()
	a.Close()
	srv2, url2 := simURL(t, cfg) // the engine restarted too
	b := startOn(t, url2, ws, state, path)
	ask(t, b, "rounds=1 one more thing")
	if id == "" || b.ID() != id {
		t.Fatalf("ids: %q, then %q after the resume; want the transcript's, twice", id, b.ID())
	}
	for i, srv := range []*sim.Server{srv1, srv2} {
		recs := srv.Requests()
		if len(recs) == 0 {
			t.Fatalf("engine %d recorded no request", i+1)
		}
		for _, r := range recs {
			if got := r.Headers.Get("x-session-id"); got != id {
				t.Errorf("engine %d, request %d: x-session-id %q, want %q", i+1, r.Seq, got, id)
			}
		}
	}
}
