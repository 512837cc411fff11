package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
)

// TestSessionsBeyondTheSlots runs three sessions on a two-slot engine:
// the third pins the least recently used slot, the first's; the first is
// told before its next run that another session took its slot over, and
// after its next request showed the engine kept no copy, the planner is
// told the cache is gone when it is taken over again. The second session,
// alone in its slot, is told nothing.
func TestSessionsBeyondTheSlots(t *testing.T) {
	ws := slotWorkspace(t)
	srv, url := simURL(t, sim.Config{Ctx: 32768, Slots: 2, Root: ws})
	// settle waits for the engine's record of every request the sessions
	// sent: a slot is busy until its request's handler returns.
	settle := func(ss ...*Session) {
		n := 0
		for _, s := range ss {
			s.mu.Lock()
			n += s.stats.Requests
			s.mu.Unlock()
		}
		recorded(t, srv, n)
	}
	told := func(s *Session, text string) string {
		t.Helper()
		var out []string
		if _, err := s.Run(context.Background(), text, func(e Event) {
			if e.Kind == Activity && strings.Contains(e.Text, "another session used this session's engine slot") {
				out = append(out, e.Text)
			}
		}); err != nil {
			t.Fatalf("Run(%q): %v", text, err)
		}
		return strings.Join(out, "; ")
	}
	a := startOn(t, url, ws, t.TempDir(), "")
	told(a, "rounds=6 look at the first files")
	b := startOn(t, url, ws, t.TempDir(), "")
	told(b, "rounds=1 look at the other files")
	settle(a, b)
	c := startOn(t, url, ws, t.TempDir(), "")
	if got := told(c, "rounds=1 and these"); got != "" {
		t.Errorf("the third session's first run was told %q", got)
	}
	if sa, sc := a.Slot(), c.Slot(); sc.ID != sa.ID || !strings.Contains(sc.Why, "least recently used") {
		t.Fatalf("the third session pins slot %d (%s), want the first's, %d, the least recently used", sc.ID, sc.Why, sa.ID)
	}
	if got := told(a, "rounds=6 and now the rest"); !strings.Contains(got, "the next request shows whether") {
		t.Errorf("the first session's run after the third's was told %q, want its slot taken over", got)
	}
	told(c, "rounds=1 and again")
	if got := told(a, "rounds=1 and once more"); !strings.Contains(got, "keeps no copy") {
		t.Errorf("the first session's run after a second takeover was told %q, want the cache gone", got)
	}
	if got := told(b, "rounds=1 and the last"); got != "" {
		t.Errorf("the second session, alone in its slot, was told %q", got)
	}
}
