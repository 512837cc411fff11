package mcptest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// NpmServer is the command that starts a real MCP server from npm over
// stdio: @modelcontextprotocol/server-filesystem, as .ci/install-mcp
// installs it under agent/mcp/testdata/npm, allowed the directory root.
// Without the install (or Node) the test is skipped, or fails where
// REIKA_EDITORS=require (CI) says every such tool must be there.
func NpmServer(t testing.TB, root string) (command string, args []string) {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("mcptest: cannot tell where its source is")
	}
	script := filepath.Join(filepath.Dir(file), "..", "testdata", "npm", "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(script); err != nil || serr != nil {
		msg := "the npm MCP server is not installed (.ci/install-mcp installs it)"
		if os.Getenv("REIKA_EDITORS") == "require" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, []string{script, root}
}

// Appends checks that the chat request body second is an append of
// first: the same tools, tool among them, and first's messages byte for
// byte at the start of second's; so the engine's cache of the first holds.
func Appends(t testing.TB, first, second []byte, tool string) {
	t.Helper()
	var a, b struct {
		Tools    json.RawMessage   `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(first, &a) != nil || json.Unmarshal(second, &b) != nil {
		t.Fatal("the requests are not JSON")
	}
	if string(a.Tools) != string(b.Tools) || !strings.Contains(string(a.Tools), tool) {
		t.Errorf("the tools changed between the requests, or lack %s", tool)
	}
	if len(b.Messages) <= len(a.Messages) {
		t.Fatalf("the second request has %d messages, the first %d", len(b.Messages), len(a.Messages))
	}
	for i := range a.Messages {
		if string(a.Messages[i]) != string(b.Messages[i]) {
			t.Errorf("message %d changed between the requests:\n%s\n%s", i, a.Messages[i], b.Messages[i])
		}
	}
}
