package editors

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// greetGo is the file the client scenarios edit.
const greetGo = "package greet\n\n// Greet says hello.\nfunc Greet(name string) string {\n\treturn \"hello, \" + name\n}\n"

// greetEdit is the agent's edit of greetGo, and turns before and after it.
const greetEdit = `{"tool_calls": [{"name": "edit", "arguments": {"path": "greet.go", "old_text": "return \"hello, \" + name", "new_text": "return \"Hello, \" + name + \"!\""}}]}`

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
	logs := map[string]string{"README.md": "# Builds\nThe logs of the last three builds are under logs/.\n"}
	for _, b := range []struct {
		name string
		ms   int
	}{{"a", 120}, {"b", 130}, {"c", 990}} {
		var s strings.Builder
		for i := 1; i <= 40; i++ {
			s.WriteString("build " + b.name + " step " + strconv.Itoa(i) + ": compiled package pkg" + strconv.Itoa(i) + " in " + strconv.Itoa(b.ms) + "ms without warnings\n")
		}
		logs["logs/"+b.name+".log"] = s.String()
	}
	for _, sc := range []struct {
		name   string
		script string
		files  map[string]string
	}{
		{"apply", `[{"tool_calls": [{"name": "read", "arguments": {"path": "greet.go"}}]}, ` + greetEdit +
			`, {"content": "Greet now capitalizes and ends with an exclamation mark."}]`, map[string]string{"greet.go": greetGo}},
		{"typing", `[` + greetEdit + `, {"content": "Done."}]`, map[string]string{"greet.go": greetGo}},
		{"typing-line", `[` + greetEdit + `, {"content": "Done."}]`, map[string]string{"greet.go": greetGo}},
		{"cancel", `[{"tool_calls": [{"name": "edit", "arguments": {"path": "greet.go", "old_text": "return \"hello, \" + name", "new_text": "return \"Hello, \" + name"}}], "fault": {"latency": "4s"}}, {"content": "Done."}]`,
			map[string]string{"greet.go": greetGo}},
		{"compact", `[{"tool_calls": [{"name": "read", "arguments": {"path": "logs/a.log"}}]},
			{"tool_calls": [{"name": "read", "arguments": {"path": "logs/b.log"}}]},
			{"tool_calls": [{"name": "read", "arguments": {"path": "logs/c.log"}}]},
			{"content": "All three builds passed; c.log is the slowest."},
			{"content": "logs: logs/a.log, logs/b.log, logs/c.log\nresult: every build step passed\nslowest: c.log"}]`, logs},
	} {
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
