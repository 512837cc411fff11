package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layers point one way (ARCHITECTURE.md): this test fails when an
// import breaks them.
func TestLayering(t *testing.T) {
	const mod = "github.com/reika-lsp/reika/"
	out, err := exec.Command("go", "list", "-deps=false", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}:{{join .Deps \" \"}}", "github.com/reika-lsp/reika/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	under := func(pkg, dir string) bool { return pkg == mod+dir || strings.HasPrefix(pkg, mod+dir+"/") }
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		pkg, imports, deps := parts[0], strings.Fields(parts[1]), strings.Fields(parts[2])
		for _, imp := range imports {
			switch {
			case (under(pkg, "contextwin") || under(pkg, "repomap")) && pure[imp]:
				t.Errorf("%s imports %s: contextwin and repomap do no I/O and read no clock", pkg, imp)
			case strings.HasPrefix(imp, "go.lsp.dev/") && !under(pkg, "lsp") && pkg != mod+"agent/langserver":
				t.Errorf("%s imports %s: only lsp (the server) and agent/langserver (the client of the workspace's servers) speak the protocol", pkg, imp)
			case imp == mod+"agent/langserver" && pkg != mod+"agent":
				t.Errorf("%s imports %s: the client of the workspace's language servers is agent's to start (its answers reach the tools as a tools.Navigator)", pkg, imp)
			case strings.HasPrefix(imp, "github.com/coder/acp-go-sdk") && !under(pkg, "acp"):
				t.Errorf("%s imports %s: only acp speaks the Agent Client Protocol", pkg, imp)
			case pkg == mod+"acp" && strings.HasPrefix(imp, mod) && !acpMay[strings.TrimPrefix(imp, mod)]:
				t.Errorf("acp imports %s: it builds on agent and the tools' vocabulary, beside lsp, never on it", imp)
			case strings.HasPrefix(imp, "github.com/modelcontextprotocol/go-sdk") && !under(pkg, "agent/mcp"):
				t.Errorf("%s imports %s: only agent/mcp (and its test server) speaks MCP", pkg, imp)
			case under(pkg, "agent/mcp") && !isTestSupport(pkg) && strings.HasPrefix(imp, mod) && !mcpMay[strings.TrimPrefix(imp, mod)]:
				t.Errorf("agent/mcp imports %s: it wraps the tools in the engine's and the tools' vocabulary, and agent composes it", imp)
			case strings.HasPrefix(imp, "github.com/sashabaranov/go-openai") && pkg != mod+"agent/engine":
				t.Errorf("%s imports %s: only the engine client (agent/engine) does", pkg, imp)
			case pkg == mod+"lsp" && strings.HasPrefix(imp, mod) && !lspMay[strings.TrimPrefix(imp, mod)]:
				t.Errorf("lsp imports %s: it builds on agent and the tools' vocabulary (and keeps the repo map of open documents)", imp)
			case (under(pkg, "contextwin") || under(pkg, "repomap") || under(pkg, "agent/sim")) && strings.HasPrefix(imp, mod) && !under(imp, "repomap/internal"):
				t.Errorf("%s imports %s: contextwin, repomap and the simulator import nothing of ours (contextwin is the vocabulary the others share)", pkg, imp)
			case imp == mod+"agent" && !under(pkg, "lsp") && !under(pkg, "acp") && !under(pkg, "cmd") && !under(pkg, "agent/replay"):
				t.Errorf("%s imports agent: the parts agent composes (config, engine, tools, transcript) know nothing of it", pkg)
			case imp == mod+"lsp" && !under(pkg, "cmd/reika-lsp") && !isTestSupport(pkg):
				t.Errorf("%s imports lsp: only the binary (and test support) starts the server", pkg)
			case isTestSupport(imp) && !isTestSupport(pkg):
				t.Errorf("%s imports %s: a test-support package is for tests only", pkg, imp)
			case imp == mod+"agent/replay/synth" && pkg != mod+"cmd/reika-gensessions":
				t.Errorf("%s imports %s: the session generator is a developer's command, not part of the product", pkg, imp)
			}
		}
		// go.lsp.dev reaches the agent (and acp, through it) only as the
		// client of the workspace's language servers.
		viaClient := pkg == mod+"agent/langserver" || slices.Contains(deps, mod+"agent/langserver")
		for _, dep := range deps {
			switch {
			case under(pkg, "agent") && (strings.HasPrefix(dep, "go.lsp.dev/") && !viaClient || under(dep, "lsp")):
				t.Errorf("%s depends on %s: the agent knows no LSP but as agent/langserver's client", pkg, dep)
			case under(pkg, "agent") && (strings.HasPrefix(dep, "github.com/coder/acp-go-sdk") || under(dep, "acp")):
				t.Errorf("%s depends on %s: the agent knows no ACP", pkg, dep)
			case under(pkg, "acp") && (strings.HasPrefix(dep, "go.lsp.dev/") && !viaClient || under(dep, "lsp")):
				t.Errorf("%s depends on %s: the two front ends stand side by side", pkg, dep)
			case under(pkg, "agent/sim") && dep == mod+"agent/engine":
				t.Errorf("%s depends on the engine client: the simulator is the other side of the wire", pkg)
			case under(pkg, "agent/engine") && dep == mod+"agent/config":
				t.Errorf("%s depends on agent/config: the engine takes plain values", pkg)
			case under(pkg, "agent/sandbox") && strings.HasPrefix(dep, mod):
				t.Errorf("%s depends on %s: the sandbox takes plain values and imports nothing of ours", pkg, dep)
			}
		}
	}
}

// isTestSupport reports whether pkg is one of the packages that exist for
// tests only (agenttest, lsptest, llamatest): the names end in "test".
func isTestSupport(pkg string) bool { return strings.HasSuffix(pkg, "test") }

// pure lists what contextwin and repomap may not import.
var pure = map[string]bool{
	"os": true, "os/exec": true, "io/fs": true, "io/ioutil": true, "net": true, "net/http": true,
	"time": true, "syscall": true,
	"go.lsp.dev/protocol": true, "go.lsp.dev/jsonrpc2": true, "github.com/sashabaranov/go-openai": true,
}

// lspMay lists the packages of this module lsp may import.
var lspMay = map[string]bool{"agent": true, "agent/tools": true, "repomap": true}

var acpMay = map[string]bool{"agent": true, "agent/tools": true}

// mcpMay lists the packages of this module agent/mcp may import: it is a
// part agent composes (beside agent/tools, which it wraps), so never agent.
var mcpMay = map[string]bool{"agent/engine": true, "agent/tools": true, "contextwin": true}
