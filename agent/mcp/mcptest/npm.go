package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
