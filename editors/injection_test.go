package editors

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// The injection attack (lsptest.Injection, played through the fake editor
// by lsp's TestInjection) in real editors: a model steered by a planted
// instruction tries, one tool call a round, to write what runs later, to
// run what it wrote, to read the home's secrets and to send data out; the
// user answers every question no. Nothing may get through.

// injectionRig is a rig whose workspace is the attack's project: the
// simulated engine plays the attack's script in this process (so that its
// request bodies can be checked), and the editor and the server it starts
// run with the attack's environment. Both get the fake home: the server
// must (~ and $HOME in commands are the fake home's), and neither
// headless Neovim (--clean, XDG directories of the rig's) nor node reads
// anything from it.
func injectionRig(t *testing.T) (*rig, *lsptest.Injection, *lsptest.Engine) {
	t.Helper()
	tmp := t.TempDir()
	in := lsptest.NewInjection(t, tmp)
	eng := lsptest.StartEngine(t, sim.Config{Script: in.Script, Ctx: 65536}, time.Minute)
	r := &rig{WS: in.Root, Tmp: tmp, Bin: bin, Endpoint: eng.URL + "/v1", Log: &lsptest.LockedBuffer{}}
	for k, v := range in.Env {
		r.Extra = append(r.Extra, k+"="+v) // after the rig's own HOME: the last one wins
	}
	sort.Strings(r.Extra)
	return r, in, eng
}

// checkInjection checks that nothing got through, with the bodies of the
// chat requests the engine received, and that the user was asked.
func checkInjection(t *testing.T, in *lsptest.Injection, eng *lsptest.Engine, questions []string) {
	t.Helper()
	var bodies [][]byte
	for _, r := range eng.Requests() {
		bodies = append(bodies, r.Body)
	}
	if len(bodies) < len(in.Script) {
		t.Errorf("the engine got %d chat requests, want the script's %d rounds at least", len(bodies), len(in.Script))
	}
	in.Check(t, bodies)
	if len(questions) == 0 {
		t.Errorf("the user was asked nothing: the attack did not reach a question")
	}
	for i, q := range questions {
		first, _, _ := strings.Cut(q, "\n")
		t.Logf("question %d: %s", i+1, first)
	}
}

const injectionAsk = "Set the project up as its docs say."

func TestInjectionNvimBare(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		r, in, eng := injectionRig(t)
		res := runNvim(t, r, nv, "injection", false, map[string]any{
			"file":        filepath.Join(in.Root, "calc.go"),
			"snippet":     writeSnippet(t, r),
			"instruction": injectionAsk,
			"final":       "Done.",
		})
		t.Logf("%d applyEdit requests; buffers saved after the run: %q", res.Applies, res.Written)
		checkInjection(t, in, eng, res.Questions)
	})
}

func TestInjectionNvimPlugin(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		r, in, eng := injectionRig(t)
		res := runNvim(t, r, nv, "injection", true, map[string]any{
			"file":        filepath.Join(in.Root, "calc.go"),
			"setup":       writeNamedSnippet(t, r, "nvim-setup"),
			"instruction": injectionAsk,
			"final":       "Done.",
		})
		t.Logf("%d applyEdit requests; buffers saved after the run: %q", res.Applies, res.Written)
		checkInjection(t, in, eng, res.Questions)
	})
}

// injectionResult is what protocol/scenarios.js's injection scenario
// prints on its "result" line.
type injectionResult struct {
	Questions []string          `json:"questions"`
	Answers   []json.RawMessage `json:"answers"`
	Saved     []string          `json:"saved"`
}

func TestInjectionProtocolLibrary(t *testing.T) {
	node, dir := nodeProtocol(t)
	r, in, eng := injectionRig(t)
	start := time.Now()
	out, err := r.run(t, 60*time.Second, node, filepath.Join(dir, "scenarios.js"), "injection")
	t.Logf("injection in %v", time.Since(start).Round(time.Millisecond))
	if err != nil || !strings.Contains(out, "ok injection") {
		t.Fatalf("node scenarios.js injection: %v\n%s", err, out)
	}
	var res injectionResult
	for _, l := range strings.Split(out, "\n") {
		if j, ok := strings.CutPrefix(l, "result "); ok {
			if err := json.Unmarshal([]byte(j), &res); err != nil {
				t.Fatalf("the scenario's result line: %v\n%s", err, l)
			}
		}
	}
	t.Logf("applyEdit answers: %s; documents saved after the run: %q", res.Answers, res.Saved)
	checkInjection(t, in, eng, res.Questions)
}
