package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/mcp/mcptest"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
)

// The test binary serves as the MCP server of these tests (mcptest).
func TestMain(m *testing.M) { mcptest.Main(m) }

// TestMCPSession: a session started on a config file with an MCP server
// offers its tools after the built-in ones; the model calls one, the user
// is asked (and says always, which the config file keeps), and the
// answer reaches the model. A server that cannot start
// is a warning, and the session starts without it; Close stops the
// servers.
func TestMCPSession(t *testing.T) {
	srv, opts := simServer(t, sim.Config{Ctx: 16384})
	srv.AppendScript(sim.Turn{ToolCalls: []sim.ScriptCall{{Name: "mcp__docs__echo", Arguments: []byte(`{"text":"hello"}`)}}},
		sim.Turn{Content: "The server said hello."})
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd, args, env := mcptest.Server(t, "REIKA_MCPTEST_PIDFILE="+pidfile)
	file, _ := json.Marshal(config.FileContents{MCPServers: []config.MCPServer{
		{Name: "docs", Command: cmd, Args: args, Env: env},
		{Name: "gone", Command: filepath.Join(t.TempDir(), "no-such-server")},
	}})
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	var asked []tools.Question
	s, err := Start(context.Background(), Setup{
		Getenv:     func(string) string { return "" },
		ConfigFile: path,
		Override: func(st *config.Settings) {
			st.Endpoint = config.Value[string]{Value: opts.BaseURL, Source: config.Source{Layer: config.Flag, Detail: "test"}}
		},
		// An editor's push cannot add a server.
		Pushed:   json.RawMessage(`{"mcp_servers":[{"name":"ws","command":"sh"}]}`),
		Folders:  []string{t.TempDir()},
		StateDir: NoTranscript,
		Ask: func(_ context.Context, q tools.Question) tools.Answer {
			asked = append(asked, q)
			return tools.Always
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, n := range s.Info().Notices {
		notes = append(notes, n.Text)
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"MCP server docs: 2 tools", "MCP server gone did not start", "mcp_servers from the editor's settings is ignored"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notices lack %q:\n%s", want, joined)
		}
	}
	if m := s.Info().MCP; len(m) != 2 || m[0] != (MCPServer{Name: "docs", Tools: 2}) || m[1].Name != "gone" || m[1].Error == "" {
		t.Errorf("Info().MCP = %+v, want docs with 2 tools, gone with its error", m)
	}
	res, err := s.Run(context.Background(), "ask the docs server", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Answer, "hello") {
		t.Errorf("the answer = %q", res.Answer)
	}
	reqs := recorded(t, srv, 2)
	if tl := reqs[0].Tools; len(tl) < 2 || tl[len(tl)-2] != "mcp__docs__big" || tl[len(tl)-1] != "mcp__docs__echo" || strings.Contains(strings.Join(tl, " "), "ws") {
		t.Errorf("tools offered = %q, want the built-in ones then docs' two", tl)
	}
	if !strings.Contains(string(reqs[1].Body), "echo: hello") {
		t.Errorf("the second request does not carry the tool's answer")
	}
	if len(asked) != 1 || asked[0].Kind != tools.AskMCP || asked[0].Subject != "docs echo" {
		t.Errorf("asked %+v, want one MCP question about docs echo", asked)
	}
	if f, err := config.ReadFile(path); err != nil || len(f.MCPAllow) != 1 || f.MCPAllow[0] != "mcp__docs__echo" {
		t.Errorf("the config file's mcp_allow = %v (%v), want the tool the user always allowed", f, err)
	}
	b, _ := os.ReadFile(pidfile)
	var pid int
	json.Unmarshal(b, &pid)
	s.Close()
	if pid == 0 || syscall.Kill(pid, 0) == nil {
		t.Errorf("the server (pid %d) still runs after Close", pid)
	}
}

// TestNpmMCPServerFromConfig: a real MCP server from npm
// (server-filesystem, .ci/install-mcp), named in the user's config file;
// the model calls one of its tools, the user is asked and allows it once,
// the file's text reaches the model, and the second request goes on from
// the first byte for byte: its tools and its messages start as the
// first's did.
func TestNpmMCPServerFromConfig(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from npm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, args := mcptest.NpmServer(t, root)
	srv, opts := simServer(t, sim.Config{Ctx: 32768})
	arg, _ := json.Marshal(map[string]string{"path": filepath.Join(root, "hello.txt")})
	srv.AppendScript(sim.Turn{ToolCalls: []sim.ScriptCall{{Name: "mcp__fs__read_text_file", Arguments: arg}}},
		sim.Turn{Content: "It says hello from npm."})
	file, _ := json.Marshal(config.FileContents{MCPServers: []config.MCPServer{{Name: "fs", Command: cmd, Args: args}}})
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	var asked []tools.Question
	s, err := Start(context.Background(), Setup{
		Getenv:     func(string) string { return "" },
		ConfigFile: path,
		Override: func(st *config.Settings) {
			st.Endpoint = config.Value[string]{Value: opts.BaseURL, Source: config.Source{Layer: config.Flag, Detail: "test"}}
		},
		Folders:  []string{t.TempDir()},
		StateDir: NoTranscript,
		Ask: func(_ context.Context, q tools.Question) tools.Answer {
			asked = append(asked, q)
			return tools.Once
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Run(context.Background(), "what does hello.txt say?", nil); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0].Kind != tools.AskMCP || asked[0].Subject != "fs read_text_file" {
		t.Errorf("asked %+v, want one MCP question about fs read_text_file", asked)
	}
	reqs := recorded(t, srv, 2)
	if !strings.Contains(string(reqs[1].Body), "hello from npm") {
		t.Errorf("the second request does not carry the file's text")
	}
	mcptest.Appends(t, reqs[0].Body, reqs[1].Body, "mcp__fs__read_text_file")
}
