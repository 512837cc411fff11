package editors

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodeProtocol returns node and the directory of the protocol-library
// client, whose node_modules `npm ci` installs (.ci/install-node-client).
func nodeProtocol(t *testing.T) (node, dir string) {
	t.Helper()
	node = need(t, "node")
	dir, err := filepath.Abs("protocol")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "vscode-languageserver-protocol")); err != nil {
		need(t, "vscode-languageserver-protocol (npm ci in editors/protocol)")
	}
	return node, dir
}

// TestProtocolLibrary drives reika-lsp with VS Code's own protocol
// library (vscode-languageserver-protocol, vscode-jsonrpc,
// vscode-languageserver-textdocument) as VS Code does: full client
// capabilities, documents kept as TextDocuments, workspace edits applied
// to them. Each scenario is a node process; see protocol/scenarios.js.
func TestProtocolLibrary(t *testing.T) {
	node, dir := nodeProtocol(t)
	for _, sc := range clientScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			r := newRig(t, sc.script, sc.files)
			start := time.Now()
			out, err := r.run(t, 30*time.Second, node, filepath.Join(dir, "scenarios.js"), sc.name)
			if err != nil || !strings.Contains(out, "ok "+sc.name) {
				t.Fatalf("node scenarios.js %s: %v\n%s", sc.name, err, out)
			}
			t.Logf("%s in %v: %s", sc.name, time.Since(start).Round(time.Millisecond), strings.TrimSpace(out))
			if sc.name != "compact" {
				// The client changes its buffer, not the file: an unsaved
				// editor leaves the disk as it was.
				if got := r.read(t, "greet.go"); got != greetGo {
					t.Errorf("greet.go on disk changed:\n%s", got)
				}
			}
		})
	}
}

// runProtocolTrial runs the scenario name of scenarios.js with
// REIKA_TEST_OUT (where it writes what it recorded) and extra
// environment, and returns that file's path.
func runProtocolTrial(t *testing.T, r *rig, name string, limit time.Duration, extra ...string) string {
	t.Helper()
	node, dir := nodeProtocol(t)
	out := filepath.Join(r.Tmp, name+".json")
	r.Extra = append([]string{"REIKA_TEST_OUT=" + out}, extra...)
	start := time.Now()
	res, err := r.run(t, limit, node, filepath.Join(dir, "scenarios.js"), name)
	if err != nil || !strings.Contains(res, "ok "+name) {
		t.Fatalf("node scenarios.js %s: %v\n%s", name, err, res)
	}
	t.Logf("%s in %v", name, time.Since(start).Round(time.Millisecond))
	return out
}

// TestProtocolRace: ten asks in one session of the protocol-library
// client; the user types a line above each edit's function just before
// it arrives, or as it arrives (the didChange sent before or after the
// client's answer). No trial may put the edit on a wrong line.
func TestProtocolRace(t *testing.T) {
	r := newRig(t, withLatency(t, raceScript(raceTrials), 300*time.Millisecond), map[string]string{"greet.go": raceFile(raceTrials)})
	out := runProtocolTrial(t, r, "race", 45*time.Second, fmt.Sprintf("REIKA_TEST_TRIALS=%d", raceTrials))
	var trials []struct {
		How string `json:"how"`
		trial
	}
	readJSON(t, out, &trials)
	var plain []trial
	for i, tr := range trials {
		t.Logf("trial %d: typed %s", i+1, tr.How)
		plain = append(plain, tr.trial)
	}
	judgeRace(t, raceFile(raceTrials), plain)
}

// TestProtocolUndo: the edit lands and the user undoes it 50 ms later,
// in a change of its own, while the run waits for the engine's last
// words. The server must not apply it again, and the end line says it was
// undone by the user.
func TestProtocolUndo(t *testing.T) {
	r := newRig(t, `[`+greetEdit+`, {"content": "Done.", "fault": {"latency": "500ms"}}]`, map[string]string{"greet.go": greetGo})
	out := runProtocolTrial(t, r, "undo", 30*time.Second)
	var res trial
	readJSON(t, out, &res)
	t.Logf("answers %q; end line %q", res.Answers, res.Final)
	judgeUndo(t, greetGo, res)
	if !strings.Contains(res.Final, "undone by you") {
		t.Errorf("server: the end line does not say the change was undone by you: %q", res.Final)
	}
}
