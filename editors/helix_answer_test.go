package editors

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestHelixAnswer: an answer longer than Helix's status line, which cuts
// a message at the terminal's width, opens as a Markdown document beside
// the code (Helix takes window/showDocument though it does not advertise
// it), its prose wrapped so that every word is on the screen.
func TestHelixAnswer(t *testing.T) {
	answer := strings.TrimSpace(strings.Repeat("Greet joins the literal with the name and nothing else calls it. ", 3)) + " The end."
	script, err := json.Marshal([]map[string]string{{"content": answer}})
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, string(script), map[string]string{"greet.go": greetGo})
	m := startHelixArgs(t, r, "-v", "greet.go:5")
	m.codeAction("Reika: fix this code")
	screen := m.waitFor("the answer's last words", "The end.", 15*time.Second)
	// The words on the screen, in order, right of the split's border.
	var shown []string
	for _, line := range strings.Split(screen, "\n") {
		if _, right, ok := strings.Cut(line, "│"); ok {
			f := strings.Fields(right)
			if len(f) > 1 && strings.Trim(f[0], "0123456789") == "" {
				shown = append(shown, f[1:]...) // after the line number
			}
		}
	}
	if got := strings.Join(shown, " "); !strings.Contains(got, answer) {
		t.Errorf("the answer on the screen is %q, want all of %q\n%s", got, answer, screen)
	}
}
