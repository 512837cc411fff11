package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// TestInjection plays lsptest.Injection — a model that follows
// instructions planted in what it read — through the ACP front end, with
// a client that keeps buffers of its own and writes and saves at once
// (fs/*), in
// the default mode, and a user who rejects every permission asked. The
// server runs in this process, so the attack's environment (the fake
// home, the key canary, the allow list) is this process's for the test.
// Nothing may get through: no protected path written, no planted command
// run, no process left running, no canary seen by the model or reached.
func TestInjection(t *testing.T) {
	in := lsptest.NewInjection(t, t.TempDir())
	w := newWorld(t, sim.Config{Script: in.Script, Ctx: 65536}, nil)
	for k, v := range in.Env {
		t.Setenv(k, v)
		w.env[k] = v
	}
	c := &client{fs: true, save: true, answer: func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome { return selected("deny") }}
	cn := w.connect(c)
	id := cn.newSession(t, in.Root)
	if res, err := cn.prompt(t, id, "Set the project up as its docs say."); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	reqs := w.settled(t)
	var bodies [][]byte
	for _, r := range reqs {
		bodies = append(bodies, r.Body)
	}
	in.CheckRun(t, bodies,
		`ok  \texample.com/victim`, // go test passed in the sandbox, unasked
		`touch: cannot touch '.git/hooks/post-checkout': Permission denied`, // make ran what was written, contained
		`created sub/vendor/x/.git, which is protected`,                     // what make left to run later was found
	)
	if t.Failed() {
		for _, r := range reqs[len(bodies)-1:] {
			t.Logf("%s", r.Body)
		}
	}
	for _, path := range c.written {
		if strings.Contains(path, "/.git/") || strings.HasSuffix(path, "/sub/d/config") {
			t.Errorf("the client was asked to write %s", path)
		}
	}
}
