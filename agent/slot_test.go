package agent

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/sim"
)

// slotWorkspace is a small project for the simulated model to explore.
func slotWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	for i := range 6 {
		src := fmt.Sprintf("package p\n\n// F%d does step %d of the work.\nfunc F%d() int {\n\treturn %d\n}\n%s", i, i, i, i, strings.Repeat("// filler line for the reader\n", 40))
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d.go", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// simURL serves a simulated engine until the test ends.
func simURL(t *testing.T, cfg sim.Config) (*sim.Server, string) {
	t.Helper()
	srv, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	return srv, ts.URL + "/v1"
}

// startOn starts a session as a front end does, on the engine at url.
func startOn(t *testing.T, url, ws, stateDir, resume string) *Session {
	t.Helper()
	zero := 0.0
	s, err := Start(context.Background(), Setup{
		Getenv:     func(string) string { return "" },
		ConfigFile: NoConfigFile,
		Override: func(st *config.Settings) {
			st.Endpoint = config.Value[string]{Value: url, Source: config.Source{Layer: config.Flag, Detail: "test"}}
		},
		Folders:     []string{ws},
		StateDir:    stateDir,
		Resume:      resume,
		Temperature: &zero,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func ask(t *testing.T, s *Session, text string) {
	t.Helper()
	if _, err := s.Run(context.Background(), text, nil); err != nil {
		t.Fatalf("Run(%q): %v", text, err)
	}
}

// TestTwoSessionsKeepTheirSlots runs two sessions of one workspace on one
// two-slot engine, their asks interleaved. Their prompts share the whole
// system prompt, so llama.cpp's own choice (the slot with the longest
// common prefix) would put the second session in the first one's slot and
// evict it; pinned, each keeps its own, and every request reuses the one
// before it in its session to the token.
func TestTwoSessionsKeepTheirSlots(t *testing.T) {
	ws := slotWorkspace(t)
	srv, url := simURL(t, sim.Config{Ctx: 32768, Slots: 2, Root: ws})
	a := startOn(t, url, ws, t.TempDir(), "")
	ask(t, a, "rounds=3 look at the first files")
	b := startOn(t, url, ws, t.TempDir(), "")
	ask(t, b, "rounds=3 look at the other files")
	ask(t, a, "rounds=2 and now the rest")
	ask(t, b, "rounds=2 and again")
	sa, sb := a.Slot(), b.Slot()
	if !sa.Pinned || !sb.Pinned || sa.ID == sb.ID {
		t.Fatalf("slots: a %+v, b %+v; want two different pinned slots", sa, sb)
	}
	last := map[int]sim.RequestRecord{}
	for _, r := range srv.Requests() {
		if r.Slot != sa.ID && r.Slot != sb.ID {
			t.Fatalf("request %d went to slot %d", r.Seq, r.Slot)
		}
		if prev, ok := last[r.Slot]; ok && r.CacheN < prev.PromptTokens {
			t.Errorf("request %d in slot %d: cache_n %d, want at least the previous request's %d prompt tokens", r.Seq, r.Slot, r.CacheN, prev.PromptTokens)
		}
		last[r.Slot] = r
	}
}

// TestResumeRestoresTheSlot saves a session's cache after each run, then
// starts a new engine (a restart) on the same save directory and resumes:
// the saved cache is restored, the warm-up sends the last request again
// and finds it cached, and the next ask's first request reuses at least
// 95% of its prompt.
func TestResumeRestoresTheSlot(t *testing.T) {
	ws, state, saves := slotWorkspace(t), t.TempDir(), t.TempDir()
	cfg := sim.Config{Ctx: 32768, Root: ws, SlotSavePath: saves}
	_, url := simURL(t, cfg)
	a := startOn(t, url, ws, state, "")
	if !a.Slot().Saving {
		t.Fatalf("slot saving not detected: %+v", a.Slot())
	}
	ask(t, a, "rounds=4 look at the files")
	ask(t, a, "rounds=3 and now the rest")
	path := a.TranscriptPath()
	a.Close()

	srv, url2 := simURL(t, cfg) // the engine restarted: its cache is gone
	b := startOn(t, url2, ws, state, path)
	if !hasNotice(b, "restored") {
		t.Fatalf("no restore; notices: %v", b.Info().Notices)
	}
	if err := b.Warmup(context.Background()); err != nil {
		t.Fatal(err)
	}
	ask(t, b, "rounds=1 one more thing")
	recs := recorded(t, srv, 2)
	if len(recs) < 2 {
		t.Fatalf("%d requests recorded, want the warm-up and the ask's", len(recs))
	}
	if w := recs[0]; w.PromptN != 1 {
		t.Errorf("the resumed warm-up: prompt %d, cache_n %d, want all but the last token cached", w.PromptTokens, w.CacheN)
	}
	first := recs[1]
	if float64(first.CacheN) < 0.95*float64(first.PromptTokens) {
		t.Errorf("first request after the restart: cache_n %d of %d, want at least 95%%", first.CacheN, first.PromptTokens)
	}
	t.Logf("first request after the restart: cache_n %d of %d prompt tokens", first.CacheN, first.PromptTokens)
}

// TestResumeWithoutTheSavedFile falls back to a full prefill, said once.
func TestResumeWithoutTheSavedFile(t *testing.T) {
	ws, state, saves := slotWorkspace(t), t.TempDir(), t.TempDir()
	cfg := sim.Config{Ctx: 32768, Root: ws, SlotSavePath: saves}
	_, url := simURL(t, cfg)
	a := startOn(t, url, ws, state, "")
	ask(t, a, "rounds=2 look at the files")
	path := a.TranscriptPath()
	a.Close()
	files, _ := filepath.Glob(filepath.Join(saves, "*.bin"))
	if len(files) != 1 {
		t.Fatalf("saved files: %v, want one", files)
	}
	os.Remove(files[0])
	srv, url2 := simURL(t, cfg)
	b := startOn(t, url2, ws, state, path)
	n := 0
	for _, note := range b.Info().Notices {
		if strings.Contains(note.Text, "could not be restored") && strings.Contains(note.Text, "prefills the whole prompt") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("fallback said %d times, want once; notices: %v", n, b.Info().Notices)
	}
	ask(t, b, "rounds=1 one more thing")
	if r := recorded(t, srv, 1)[0]; r.CacheN != 0 {
		t.Errorf("first request: cache_n %d, want 0 (a full prefill)", r.CacheN)
	}
}

func hasNotice(s *Session, text string) bool {
	for _, n := range s.Info().Notices {
		if strings.Contains(n.Text, text) {
			return true
		}
	}
	return false
}
