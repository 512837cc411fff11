// Package mcptest is a tiny MCP server for tests, served by the test
// binary itself: a test package's TestMain calls Main, and Server gives
// the command that runs the binary again as the server (stdio); HTTP
// serves it in the test over the streamable HTTP transport.
//
// Its tools: echo {"text"} answers the text (and "add a tool" adds the
// tool late, which the server announces with tools/list_changed); big {"lines"} answers that
// many numbered lines. Environment: REIKA_MCPTEST_PIDFILE, when set, gets
// the server's pid; REIKA_MCPTEST_ONCE names a file the first start
// creates and a second start finds, and then fails.
package mcptest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const envServe = "REIKA_MCPTEST_SERVE"

// Main serves as the MCP server when the test binary was started as one
// (Server), else runs the tests.
func Main(m *testing.M) {
	if os.Getenv(envServe) != "" {
		if err := serve(); err != nil {
			fmt.Fprintln(os.Stderr, "mcptest:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Server is the command and environment that start the test binary as
// the server; env adds variables (NAME=value).
func Server(t testing.TB, env ...string) (command string, args []string, vars map[string]string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("os.Executable: %v", err)
	}
	vars = map[string]string{envServe: "1"}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return exe, []string{"-test.run=^$"}, vars
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to answer"`
}

type bigArgs struct {
	Lines int `json:"lines" jsonschema:"how many lines"`
}

func serve() error {
	if once := os.Getenv("REIKA_MCPTEST_ONCE"); once != "" {
		if _, err := os.Stat(once); err == nil {
			return fmt.Errorf("started once already (%s)", once)
		}
		os.WriteFile(once, nil, 0o600)
	}
	if p := os.Getenv("REIKA_MCPTEST_PIDFILE"); p != "" {
		os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	return newServer().Run(context.Background(), &mcp.StdioTransport{})
}

// HTTP serves the same tools over the streamable HTTP transport on
// loopback until the test ends, refusing a request without the header
// auth (when set, "Name: value"); stop closes it, its connections too.
func HTTP(t testing.TB, auth string) (url string, stop func()) {
	t.Helper()
	s := newServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	name, value, _ := strings.Cut(auth, ": ")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth != "" && r.Header.Get(name) != value {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	stop = func() { ts.CloseClientConnections(); ts.Close() }
	t.Cleanup(stop)
	return ts.URL + "/mcp", stop
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Answers the text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			if a.Text == "add a tool" {
				s.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}},
					func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						return &mcp.CallToolResult{}, nil
					})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Answers numbered lines."},
		func(_ context.Context, _ *mcp.CallToolRequest, a bigArgs) (*mcp.CallToolResult, any, error) {
			var b strings.Builder
			for i := range a.Lines {
				fmt.Fprintf(&b, "line %d of a long result\n", i+1)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}, &mcp.ImageContent{MIMEType: "image/png", Data: []byte("png")}}}, nil, nil
		})
	return s
}
