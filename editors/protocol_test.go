package editors

import (
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
