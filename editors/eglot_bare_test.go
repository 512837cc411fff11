package editors

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
)

// TestEglotRaceBare: the race in Emacs 30 with eglot alone, the README's
// snippet without the package. eglot 1.17 counts a buffer's versions only
// when it sends the user's typing, so it takes the edit as current and
// writes it at the positions it was sent for, over typing it has not sent
// (a line typed above moves it onto the line above its own). The server
// sees that in the didChange that follows, and once the typing stops puts
// the text back and the change where it belongs. No trial may end with it
// on a wrong line. One trial (typing at the top of the file) by default;
// ten under the build tag long.
func TestEglotRaceBare(t *testing.T) {
	emacs := need(t, "emacs-current")
	n := 1
	if testslow.Long {
		n = 10
	}
	r := newRig(t, raceScript(n), map[string]string{"greet.go": raceFile(n)})
	init := filepath.Join(r.Tmp, "init.el")
	if err := os.WriteFile(init, []byte(r.withEndpoint(t, snippet(t, "emacs-29"))), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(r.Tmp, "race.json")
	env := r.Env("REIKA_TEST_BARE=1", "REIKA_TEST_OUT="+out, fmt.Sprintf("REIKA_TEST_TRIALS=%d", n))
	t.Log(runEmacsInit(t, r, emacs, init, "race", env, time.Duration(n)*10*time.Second+30*time.Second))
	judgeRaceOf(t, raceFile(n), readTrials(t, out), n)
}
