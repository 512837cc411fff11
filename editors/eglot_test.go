package editors

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEglot runs the client scenarios in Emacs's eglot (Emacs 28, eglot
// 1.9 from Debian), in batch mode, with the README's Emacs 28 snippet and
// its `M-x reika` command loaded verbatim (the endpoint aside, replaced by
// the simulated engine's). The scenarios are emacs/test/reika-test.el.
// The subtest "settings" plays "apply" without REIKA_ENDPOINT: the server
// finds the engine only through the snippet's :initializationOptions.
func TestEglot(t *testing.T) { testEglot(t, need(t, "emacs"), "emacs-28") }

// TestEglotCurrent runs them in a current Emacs (Debian trixie's 30.1, its
// own eglot, `emacs-current` from .ci/install-emacs) with the README's
// snippet for Emacs 29 and later, Go files in go-ts-mode.
func TestEglotCurrent(t *testing.T) { testEglot(t, need(t, "emacs-current"), "emacs-29") }

func testEglot(t *testing.T, emacs, snippetName string) {
	driver, err := filepath.Abs(filepath.Join("emacs", "test", "reika-test.el"))
	if err != nil {
		t.Fatal(err)
	}
	scenarios := clientScenarios()
	settings := scenarios[0]
	settings.name = "settings"
	for _, sc := range append(scenarios, settings) {
		t.Run(sc.name, func(t *testing.T) {
			r := newRig(t, sc.script, sc.files)
			play, env := sc.name, r.Env()
			if sc.name == "settings" {
				play, env = "apply", r.envNoEndpoint()
			}
			init := filepath.Join(r.Tmp, "init.el")
			text := r.withEndpoint(t, snippet(t, snippetName)) + "\n" + snippet(t, "emacs-command")
			if err := os.WriteFile(init, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, err := r.runEnv(t, 30*time.Second, env, emacs, "--batch",
				// What an interactive Emacs does at startup, before the init
				// file: the installed packages' autoloads (go-mode's
				// auto-mode-alist entry among them).
				"--eval", "(package-activate-all)", "-l", init, "-l", driver,
				"--eval", `(reika-test-main "`+play+`")`)
			if err != nil || !strings.Contains(out, "ok "+play) {
				t.Fatalf("emacs: %v\n%s", err, out)
			}
			t.Logf("%s in %v\n%s", sc.name, time.Since(start).Round(time.Millisecond), out)
			if got := r.read(t, "greet.go"); got != greetGo {
				t.Errorf("greet.go on disk changed (eglot edits the buffer, unsaved):\n%s", got)
			}
		})
	}
}
