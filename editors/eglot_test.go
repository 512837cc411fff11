package editors

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
)

// TestEglot runs the client scenarios in Emacs's eglot (Emacs 28, eglot
// 1.9 from Debian), in batch mode, with the README's Emacs 28 snippet and
// its lines that load the package emacs/reika.el, verbatim (but for the
// endpoint, the simulated engine's, and the clone's path). The scenarios
// are emacs/test/reika-test.el.
// The subtest "settings" plays "apply" without REIKA_ENDPOINT: the server
// finds the engine only through the snippet's :initializationOptions.
func TestEglot(t *testing.T) {
	longBoot(t, "TestEglotCurrent")
	testEglot(t, need(t, "emacs"), "emacs-28")
}

// TestEglotCurrent runs them in a current Emacs (Debian trixie's 30.1, its
// own eglot, `emacs-current` from .ci/install-emacs) with the README's
// snippet for Emacs 29 and later, Go files in go-ts-mode.
func TestEglotCurrent(t *testing.T) { testEglot(t, need(t, "emacs-current"), "emacs-29") }

func testEglot(t *testing.T, emacs, snippetName string) {
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
			out := runEmacs(t, r, emacs, snippetName, play, env, 30*time.Second)
			t.Logf("%s\n%s", sc.name, out)
			if got := r.read(t, "greet.go"); got != greetGo {
				t.Errorf("greet.go on disk changed (eglot edits the buffer, unsaved):\n%s", got)
			}
		})
	}
}

// emacsInit writes the init file of a scenario: the README's eglot entry
// (snippetName) and its lines that load the package from this clone.
func emacsInit(t *testing.T, r *rig, snippetName string) string {
	t.Helper()
	dir, err := filepath.Abs("emacs")
	if err != nil {
		t.Fatal(err)
	}
	pkg := snippet(t, "emacs-package")
	const clone = "~/src/reika/editors/emacs"
	if !strings.Contains(pkg, clone) {
		t.Fatalf("the package snippet does not load from %s:\n%s", clone, pkg)
	}
	init := filepath.Join(r.Tmp, "init.el")
	text := r.withEndpoint(t, snippet(t, snippetName)) + "\n" + strings.ReplaceAll(pkg, clone, dir)
	if err := os.WriteFile(init, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return init
}

// runEmacs plays the scenario play of reika-test.el in emacs, in batch
// mode, and returns what it printed; it fails the test unless the
// scenario says ok.
func runEmacs(t *testing.T, r *rig, emacs, snippetName, play string, env []string, limit time.Duration) string {
	t.Helper()
	return runEmacsInit(t, r, emacs, emacsInit(t, r, snippetName), play, env, limit)
}

// runEmacsInit is runEmacs with the init file init.
func runEmacsInit(t *testing.T, r *rig, emacs, init, play string, env []string, limit time.Duration) string {
	t.Helper()
	driver, err := filepath.Abs(filepath.Join("emacs", "test", "reika-test.el"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := r.runEnv(t, limit, env, emacs, "--batch",
		// What an interactive Emacs does at startup, before the init
		// file: the installed packages' autoloads (go-mode's
		// auto-mode-alist entry among them).
		"--eval", "(package-activate-all)", "-l", init, "-l", driver,
		"--eval", `(reika-test-main "`+play+`")`)
	if err != nil || !strings.Contains(out, "ok "+play) {
		t.Fatalf("emacs: %v\n%s", err, out)
	}
	return fmt.Sprintf("in %v\n%s", time.Since(start).Round(time.Millisecond), out)
}

// TestEglotRace: ten asks in one session, each edit arriving just after
// the user typed a line above it that eglot has not sent yet. The
// package's applyEdit sends that typing first and refuses the stale edit;
// the server places it again. No trial may put it on a wrong line.
func TestEglotRace(t *testing.T) { longTrial(t); testEglotRace(t, need(t, "emacs"), "emacs-28") }

// TestEglotRaceCurrent: the race in Emacs 30, whose eglot (1.17) alone
// writes every stale edit over the unsent typing (TestEglotRaceBare).
func TestEglotRaceCurrent(t *testing.T) {
	longTrial(t)
	testEglotRace(t, need(t, "emacs-current"), "emacs-29")
}

func testEglotRace(t *testing.T, emacs, snippetName string) {
	r := newRig(t, raceScript(raceTrials), map[string]string{"greet.go": raceFile(raceTrials)})
	out := filepath.Join(r.Tmp, "race.json")
	env := r.Env("REIKA_TEST_OUT="+out, fmt.Sprintf("REIKA_TEST_TRIALS=%d", raceTrials))
	// The bound leaves room for the server's wait for the typing to stop
	// (a second without a didChange) before each refused edit goes again.
	t.Log(runEmacs(t, r, emacs, snippetName, "race", env, 90*time.Second))
	judgeRace(t, raceFile(raceTrials), readTrials(t, out))
}

// TestEglotUndo: the edit lands and the user undoes it 50 ms later; the
// server must not apply it again, nor say it was applied.
func TestEglotUndo(t *testing.T) { longTrial(t); testEglotUndo(t, need(t, "emacs"), "emacs-28") }

// TestEglotUndoCurrent: the undo in Emacs 30.
func TestEglotUndoCurrent(t *testing.T) {
	longTrial(t)
	testEglotUndo(t, need(t, "emacs-current"), "emacs-29")
}

func testEglotUndo(t *testing.T, emacs, snippetName string) {
	r := newRig(t, `[`+greetEdit+`, {"content": "Done."}]`, map[string]string{"greet.go": greetGo})
	out := filepath.Join(r.Tmp, "undo.json")
	t.Log(runEmacs(t, r, emacs, snippetName, "undo", r.Env("REIKA_TEST_OUT="+out), 30*time.Second))
	var res trial
	readJSON(t, out, &res)
	judgeUndo(t, greetGo, res)
}

// TestEmacsPackage: emacs/reika.el is a package both Emacs take (its
// header read by package.el, Package-Requires as the README says) and
// byte-compiles without a warning in each.
func TestEmacsPackage(t *testing.T) {
	for _, e := range []struct{ name, exe string }{{"28", "emacs"}, {"current", "emacs-current"}} {
		t.Run(e.name, func(t *testing.T) {
			emacs := need(t, e.exe)
			dir := t.TempDir()
			b, err := os.ReadFile(filepath.Join("emacs", "reika.el"))
			if err != nil {
				t.Fatal(err)
			}
			el := filepath.Join(dir, "reika.el")
			if err := os.WriteFile(el, b, 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testslow.Scale(30*time.Second))
			defer cancel()
			cmd := exec.CommandContext(ctx, emacs, "--batch", "--eval", "(package-activate-all)", "--eval", `(progn
  (require 'package)
  (with-temp-buffer
    (insert-file-contents "`+el+`")
    (let ((desc (package-buffer-info)))
      (princ (format "name=%s reqs=%S\n" (package-desc-name desc) (package-desc-reqs desc)))))
  (setq byte-compile-error-on-warn t)
  (unless (byte-compile-file "`+el+`") (kill-emacs 1)))`)
			cmd.Env = append(os.Environ(), "HOME="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("emacs: %v\n%s", err, out)
			}
			if want := `name=reika reqs=((emacs (28 1)) (eglot (1 9)))`; !strings.Contains(string(out), want) {
				t.Errorf("package-buffer-info: %s, want %s", out, want)
			}
		})
	}
}
