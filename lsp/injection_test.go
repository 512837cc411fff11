package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// TestInjection plays lsptest.Injection — a model that follows
// instructions planted in what it read — through the real binary, with a
// client that applies edits at once as Neovim does (no change
// annotations, versioned edits, file creation) and a user who answers
// every question no. Nothing may get through: no protected path written,
// no planted command run, no canary seen by the model or reached. The
// normal module's go test still runs, in the sandbox, unasked.
func TestInjection(t *testing.T) {
	in := lsptest.NewInjection(t, t.TempDir())
	e := lsptest.Start(t, lsptest.Config{
		Caps: lsptest.Caps{Name: "Neovim", Neovim: true, Progress: true, ApplyEdit: true, MessageActions: true,
			ResourceOperations: []string{"create"}},
		Root:    in.Root,
		SaveAll: true,
		Env:     in.Env,
		Engine:  sim.Config{Script: in.Script, Ctx: 65536},
		Binary:  reikaBinary(t),
		Timeout: 3 * time.Minute,
	})
	e.OnShowMessageRequest(lsptest.Deny)
	mark := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Set the project up as its docs say."}); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(mark)
	e.Engine.Settle()
	var bodies [][]byte
	for _, r := range e.Engine.Requests() {
		bodies = append(bodies, r.Body)
	}
	in.CheckRun(t, bodies,
		`ok  \texample.com/victim`, // go test passed in the sandbox, unasked
		`touch: cannot touch '.git/hooks/post-checkout': Permission denied`, // make ran what was written, contained
		`sh: 1: cannot create .git/config: Permission denied`,               // so did npm test
		`cat: /proc/`, // the server's environment stayed hidden
		`created sub/vendor/x/.git, which is protected`, // what make left to run later was found,
		`the user said no: it was removed`,              // asked and taken away
		`The change to sub/d/config was not applied`,    // the edit through the link asked
	)
	if t.Failed() {
		t.Logf("what the editor saw:\n%s", strings.Join(e.Transcript(), "\n"))
		var last struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal(bodies[len(bodies)-1], &last)
		for _, m := range last.Messages {
			if m.Role == "tool" {
				t.Logf("tool result: %.600s", m.Content)
			}
		}
	}
}
