package editors

import (
	"testing"
	"time"
)

// TestEglotPackage plays what the package does beyond the client
// scenarios, in Emacs 28 (eglot 1.9) and in Emacs 30, with the README's
// snippets: "progress", the run's rounds in the mode line with the
// server's messages read only as they arrive (Emacs 28's jsonrpc leaves
// those that came with a command's answer unread until more arrive; the
// package reads them at once, or the server waits in vain for the answer
// to its progress's create and shows none), the ask M-x reika and in
// "progress-action" eglot's code action; and "undo-run",
// reika-undo-run right after a run whose edit eglot has not sent yet
// (the package sends eglot's pending changes before every command, or
// the server sees the run's edit missing and undoes nothing).
func TestEglotPackage(t *testing.T) {
	for _, e := range []struct{ name, exe, snippet string }{{"28", "emacs", "emacs-28"}, {"current", "emacs-current", "emacs-29"}} {
		t.Run(e.name, func(t *testing.T) {
			if e.name == "28" {
				longBoot(t, "TestEglotPackage/current")
			}
			emacs := need(t, e.exe)
			for _, sc := range []struct{ play, script string }{
				{"progress", `[{"tool_calls": [{"name": "read", "arguments": {"path": "greet.go"}}]}, {"content": "Greet says hello to the name it is given."}]`},
				{"progress-action", `[{"tool_calls": [{"name": "read", "arguments": {"path": "greet.go"}}]}, {"content": "Greet says hello to the name it is given."}]`},
				{"undo-run", `[` + greetEdit + `, {"content": "Done."}]`},
			} {
				t.Run(sc.play, func(t *testing.T) {
					r := newRig(t, sc.script, map[string]string{"greet.go": greetGo})
					t.Log(runEmacs(t, r, emacs, e.snippet, sc.play, r.Env(), 45*time.Second))
				})
			}
		})
	}
}
