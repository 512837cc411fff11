package agent

import (
	"os"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/tools"
)

// A long message of the user's is saved where the read tool reads it
// back, and the planner's message says where; a short one is not.
func TestLongUserMessageIsSpilled(t *testing.T) {
	ts, err := tools.New(tools.Config{Folders: []string{t.TempDir()}, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{cfg: sessionConfig{Tools: ts}}
	long := "Here is the log:\n" + strings.Repeat("    at main.go:12 +0x1f\n", 100)
	m := s.userMessage(long)
	if m.Payload.Spill == "" {
		t.Fatal("a 2.4 KB paste was not saved")
	}
	if b, err := os.ReadFile(m.Payload.Spill); err != nil || string(b) != long {
		t.Errorf("the saved paste = %d bytes, %v; want the message", len(b), err)
	}
	if m := s.userMessage("Fix the build."); m.Payload.Spill != "" {
		t.Errorf("a short message was saved to %s", m.Payload.Spill)
	}
}
