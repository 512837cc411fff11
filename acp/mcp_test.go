package acp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/mcp/mcptest"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
)

// The test binary serves as the stub MCP server of these tests (mcptest).
func TestMain(m *testing.M) { mcptest.Main(m) }

// stdioServer is a client's mcpServers entry for a program.
func stdioServer(name, command string, args []string, env map[string]string) sdk.McpServer {
	s := &sdk.McpServerStdio{Name: name, Command: command, Args: args, Env: []sdk.EnvVariable{}}
	for k, v := range env {
		s.Env = append(s.Env, sdk.EnvVariable{Name: k, Value: v})
	}
	return sdk.McpServer{Stdio: s}
}

// startQuestions are the questions to start an MCP server the client
// was asked.
func (c *client) startQuestions() []sdk.RequestPermissionRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []sdk.RequestPermissionRequest
	for _, q := range c.asked {
		if strings.HasPrefix(string(q.ToolCall.ToolCallId), "mcp-start-") {
			out = append(out, q)
		}
	}
	return out
}

// toldLine waits for a status line holding want.
func toldLine(t *testing.T, c *client, want string) {
	t.Helper()
	waitFor(t, func() bool {
		for _, tc := range c.matching("tool_call") {
			if title, _ := tc["title"].(string); strings.Contains(title, want) {
				return true
			}
		}
		return false
	}, "a line saying "+want)
}

// TestNpmMCPServerFromClient: a real MCP server from npm
// (server-filesystem, .ci/install-mcp) offered in session/new's
// mcpServers. The user is asked to start it, with its command line, and
// allows it for the session; the model calls one of its tools, which is
// asked and allowed; the request after the call goes on from the first
// byte for byte: its tools, and its messages as far as the first's go.
func TestNpmMCPServerFromClient(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from npm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, args := mcptest.NpmServer(t, root)
	arg, _ := json.Marshal(map[string]string{"path": filepath.Join(root, "hello.txt")})
	w := newWorld(t, sim.Config{Ctx: 32768, Script: []sim.Turn{
		{ToolCalls: []sim.ScriptCall{{Name: "mcp__fs__read_text_file", Arguments: arg}}},
		{Content: "It says hello from npm."},
	}}, map[string]string{"main.go": mainGo})
	c := &client{answer: func(p sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
		if strings.HasPrefix(string(p.ToolCall.ToolCallId), "mcp-start-") {
			return selected("start-once")
		}
		return selected(string(tools.Once))
	}}
	cn := w.connect(c)
	res, err := cn.NewSession(cn.ctx, sdk.NewSessionRequest{Cwd: w.ws, McpServers: []sdk.McpServer{stdioServer("fs", cmd, args, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cn.prompt(t, res.SessionId, "what does hello.txt say?"); err != nil {
		t.Fatal(err)
	}
	qs := c.startQuestions()
	if len(qs) != 1 || qs[0].SessionId != res.SessionId || !strings.Contains(*qs[0].ToolCall.Title, cmd+" "+strings.Join(args, " ")) {
		t.Fatalf("the questions to start a server = %+v, want one naming %s %v", qs, cmd, args)
	}
	if len(c.asked) != 2 || !strings.Contains(*c.asked[1].ToolCall.Title, "read_text_file") {
		t.Errorf("asked %d questions, want the start, then the tool's call", len(c.asked))
	}
	reqs := w.requests(t, 2)
	if !strings.Contains(string(reqs[1].Body), "hello from npm") {
		t.Errorf("the second request does not carry the file's text")
	}
	mcptest.Appends(t, reqs[0].Body, reqs[1].Body, "mcp__fs__read_text_file")
}

// A server the user does not allow is not started (its program never
// runs), the client is told why, and the model gets none of its tools.
func TestClientMCPServerDenied(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "Done."}}}, map[string]string{"main.go": mainGo})
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd, args, env := mcptest.Server(t, "REIKA_MCPTEST_PIDFILE="+pidfile)
	c := &client{answer: func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome { return selected("start-no") }}
	cn := w.connect(c)
	res, err := cn.NewSession(cn.ctx, sdk.NewSessionRequest{Cwd: w.ws, McpServers: []sdk.McpServer{stdioServer("stub", cmd, args, env)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cn.prompt(t, res.SessionId, "hello"); err != nil {
		t.Fatal(err)
	}
	qs := c.startQuestions()
	if len(qs) != 1 || !strings.Contains(*qs[0].ToolCall.Title, "stub") || !strings.Contains(*qs[0].ToolCall.Title, "REIKA_MCPTEST_PIDFILE") ||
		strings.Contains(*qs[0].ToolCall.Title, pidfile) {
		t.Fatalf("the questions to start a server = %+v, want one naming stub and its variables' names, not their values", qs)
	}
	toldLine(t, c, "the MCP server stub the editor offered is not started: you did not allow it")
	for _, name := range w.requests(t, 1)[0].Tools {
		if strings.HasPrefix(name, "mcp__") {
			t.Errorf("the model was offered %s", name)
		}
	}
	if _, err := os.Stat(pidfile); err == nil {
		t.Errorf("the server the user refused ran")
	}
}

// A server the user's config file trusts (acp_mcp_allow) starts unasked,
// its tools after those of the config file's own servers; one the client
// offers over SSE is refused with why.
func TestClientMCPServerTrusted(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "Done."}}}, map[string]string{"main.go": mainGo})
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd, args, env := mcptest.Server(t, "REIKA_MCPTEST_PIDFILE="+pidfile)
	own, ownArgs, ownEnv := mcptest.Server(t)
	key := config.ACPServerKey(config.MCPServer{Name: "anything", Command: cmd, Args: args, Env: env})
	file, _ := json.Marshal(config.FileContents{
		MCPServers:  []config.MCPServer{{Name: "zeta", Command: own, Args: ownArgs, Env: ownEnv}},
		ACPMCPAllow: []string{key},
	})
	path := filepath.Join(w.env["XDG_CONFIG_HOME"], "reika", "config.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	c := &client{}
	cn := w.connect(c)
	res, err := cn.NewSession(cn.ctx, sdk.NewSessionRequest{Cwd: w.ws, McpServers: []sdk.McpServer{
		stdioServer("alpha", cmd, args, env),
		{Sse: &sdk.McpServerSseInline{Name: "old", Type: "sse", Url: "http://127.0.0.1:1/sse", Headers: []sdk.HttpHeader{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cn.prompt(t, res.SessionId, "hello"); err != nil {
		t.Fatal(err)
	}
	if qs := c.startQuestions(); len(qs) != 0 {
		t.Errorf("a trusted server was asked about: %+v", qs)
	}
	toldLine(t, c, `the MCP server "old" the editor offered is not started: Reika speaks MCP over stdio and streamable HTTP, not SSE`)
	var mcpTools []string
	for _, name := range w.requests(t, 1)[0].Tools {
		if strings.HasPrefix(name, "mcp__") {
			mcpTools = append(mcpTools, name)
		}
	}
	want := []string{"mcp__zeta__big", "mcp__zeta__echo", "mcp__alpha__big", "mcp__alpha__echo"}
	if !slices.Equal(mcpTools, want) {
		t.Errorf("the MCP tools offered = %q, want %q (the config file's servers first)", mcpTools, want)
	}
	if _, err := os.Stat(pidfile); err != nil {
		t.Errorf("the trusted server did not run: %v", err)
	}
}

// "Always" starts the server and keeps it in the config file's
// acp_mcp_allow: the next session that offers it starts it unasked. A
// session/load that offers another asks with the id the client loads,
// before it answers, and starts it when allowed.
func TestClientMCPServerAlwaysAndLoad(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "One."}, {Content: "Two."}}}, map[string]string{"main.go": mainGo})
	cmd, args, env := mcptest.Server(t)
	answer := "start-always"
	c := &client{answer: func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome { return selected(answer) }}
	cn := w.connect(c)
	offer := []sdk.McpServer{stdioServer("stub", cmd, args, env)}
	first, err := cn.NewSession(cn.ctx, sdk.NewSessionRequest{Cwd: w.ws, McpServers: offer})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cn.prompt(t, first.SessionId, "hello"); err != nil {
		t.Fatal(err)
	}
	f, err := config.ReadFile(filepath.Join(w.env["XDG_CONFIG_HOME"], "reika", "config.json"))
	if err != nil || len(f.ACPMCPAllow) != 1 || f.ACPMCPAllow[0] != config.ACPServerKey(config.MCPServer{Command: cmd, Args: args, Env: env}) {
		t.Fatalf("the config file after always = %+v (%v), want the server in acp_mcp_allow", f, err)
	}
	if _, err := cn.NewSession(cn.ctx, sdk.NewSessionRequest{Cwd: w.ws, McpServers: offer}); err != nil {
		t.Fatal(err)
	}
	if n := len(c.startQuestions()); n != 1 {
		t.Errorf("asked %d times to start the server, want once: the second session trusts it", n)
	}

	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd2, args2, env2 := mcptest.Server(t, "REIKA_MCPTEST_PIDFILE="+pidfile)
	answer = "start-once"
	if _, err := cn.LoadSession(cn.ctx, sdk.LoadSessionRequest{SessionId: first.SessionId, Cwd: w.ws, McpServers: []sdk.McpServer{stdioServer("other", cmd2, args2, env2)}}); err != nil {
		t.Fatal(err)
	}
	qs := c.startQuestions()
	if len(qs) != 2 || qs[1].SessionId != first.SessionId || !strings.Contains(*qs[1].ToolCall.Title, "other") {
		t.Fatalf("the questions to start a server = %+v, want a second about other, on the loaded session", qs)
	}
	if _, err := os.Stat(pidfile); err != nil {
		t.Errorf("the server allowed at load did not run: %v", err)
	}
}

// A streamable HTTP server the client offers is asked about by its URL
// and its headers' names (not their values), and once allowed its tools
// are the model's, the header sent with every request to it.
func TestClientMCPServerHTTP(t *testing.T) {
	url, stop := mcptest.HTTP(t, "Authorization: Bearer s3cret")
	defer stop()
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "Done."}}}, map[string]string{"main.go": mainGo})
	c := &client{answer: func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome { return selected("start-once") }}
	cn := w.connect(c)
	res, err := cn.NewSession(cn.ctx, sdk.NewSessionRequest{Cwd: w.ws, McpServers: []sdk.McpServer{{Http: &sdk.McpServerHttpInline{
		Name: "web", Type: "http", Url: url, Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer s3cret"}},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cn.prompt(t, res.SessionId, "hello"); err != nil {
		t.Fatal(err)
	}
	qs := c.startQuestions()
	if len(qs) != 1 || *qs[0].ToolCall.Title != "Start the MCP server web: "+url+" (headers: Authorization)" {
		t.Fatalf("the questions to start a server = %+v, want one naming its URL and its header's name", qs)
	}
	tools := w.requests(t, 1)[0].Tools
	if !slices.Contains(tools, "mcp__web__echo") {
		t.Errorf("the tools offered = %q, want the HTTP server's", tools)
	}
}

// A server the client offers first at session/load, and the user
// allows, reaches the resumed conversation's tools at its next fold: the
// request after the load goes on from the last one before it, on the
// tools it had; the user is told when the new tools come; after /compact
// the model has them and calls one.
func TestClientMCPServerAtLoad(t *testing.T) {
	var b strings.Builder
	for l := 1; l <= 120; l++ {
		fmt.Fprintf(&b, "build step %d: compiled package pkg%d in %dms without warnings\n", l, l, 100+l*7%90)
	}
	w := newWorld(t, sim.Config{Ctx: 16384, Script: []sim.Turn{
		{Content: "Reading.", ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: []byte(`{"path":"build.log"}`)}}},
		{Content: "It built."},
		{Content: "Two."},
		{Content: "Fold note: the build passed."},
		{ToolCalls: []sim.ScriptCall{{Name: "mcp__stub__echo", Arguments: []byte(`{"text":"after the load"}`)}}},
		{Content: "Three."},
	}}, map[string]string{"main.go": mainGo, "build.log": b.String()})
	first := w.connect(&client{})
	id := first.newSession(t, w.ws)
	if _, err := first.prompt(t, id, "Did it build?"); err != nil {
		t.Fatal(err)
	}
	first.stop()
	sent := len(w.requests(t, 2))

	cmd, args, env := mcptest.Server(t)
	c := &client{answer: func(p sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
		if strings.HasPrefix(string(p.ToolCall.ToolCallId), "mcp-start-") {
			return selected("start-once")
		}
		return selected(string(tools.Once))
	}}
	second := w.connect(c)
	if _, err := second.LoadSession(second.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: w.ws, McpServers: []sdk.McpServer{stdioServer("stub", cmd, args, env)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := second.prompt(t, id, "Still?"); err != nil {
		t.Fatal(err)
	}
	toldLine(t, c, "added: mcp__stub__big, mcp__stub__echo; removed: none): the requests carry them from the conversation's next fold on")
	reqs := w.requests(t, sent+1)
	mcptest.Appends(t, reqs[sent-1].Body, reqs[sent].Body, "read")
	if _, err := second.prompt(t, id, "/compact"); err != nil {
		t.Fatal(err)
	}
	if _, err := second.prompt(t, id, "Echo it."); err != nil {
		t.Fatal(err)
	}
	reqs = w.requests(t, sent+4)
	if tl := strings.Join(reqs[sent+2].Tools, " "); !strings.Contains(tl, "mcp__stub__echo") {
		t.Errorf("the tools after the fold = %s, want the server's allowed at the load", tl)
	}
	if !strings.Contains(string(reqs[sent+3].Body), "echo: after the load") {
		t.Errorf("the request after the call does not carry its answer")
	}
	mcptest.Appends(t, reqs[sent+2].Body, reqs[sent+3].Body, "mcp__stub__echo")
}
