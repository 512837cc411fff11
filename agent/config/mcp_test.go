package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMCPServers: the file's top-level mcp_servers are taken, bad ones
// left out with a warning; a profile cannot hold them, and neither the
// editor's startup options nor its pushes can add one.
func TestMCPServers(t *testing.T) {
	f, err := ParseFile("/cfg/reika/config.json", []byte(`{
  "mcp_servers": [
    {"name": "docs", "command": "docs-mcp", "args": ["--stdio"], "env": {"DOCS_TOKEN": "x"}},
    {"name": "bad name", "command": "x"},
    {"name": "DOCS", "command": "again"},
    {"name": "nocmd"},
    {"name": "web", "url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer t"}},
    {"name": "both", "command": "x", "url": "https://mcp.example/mcp"},
    {"name": "ftp", "url": "ftp://mcp.example/"},
    {"name": "hdr", "command": "x", "headers": {"A": "b"}}
  ]
}`))
	if err != nil {
		t.Fatalf("ParseFile: %v", err)
	}
	s := Resolve(Inputs{File: f, FilePath: "/cfg/reika/config.json",
		Editor: map[string]any{"mcpServers": []any{map[string]any{"name": "ws", "command": "evil"}}},
		Pushed: map[string]any{"mcp_servers": []any{map[string]any{"name": "ws", "command": "evil"}}}})
	want := []MCPServer{{Name: "docs", Command: "docs-mcp", Args: []string{"--stdio"}, Env: map[string]string{"DOCS_TOKEN": "x"}},
		{Name: "web", URL: "https://mcp.example/mcp", Headers: map[string]string{"Authorization": "Bearer t"}}}
	if d := cmp.Diff(want, s.MCPServers.Value); d != "" {
		t.Errorf("MCPServers (-want +got):\n%s", d)
	}
	if s.MCPServers.Source.Layer != File {
		t.Errorf("MCPServers source = %v, want the file", s.MCPServers.Source)
	}
	warned := strings.Join(s.Warnings, "\n")
	for _, w := range []string{`"bad name"`, `"DOCS" is taken`, `"nocmd" needs a command or a url`, `"both" needs a command or a url, not both`, `"ftp": url`, `"hdr": headers go with a url`, "mcp_servers from the editor's settings is ignored"} {
		if !strings.Contains(warned, w) {
			t.Errorf("warnings lack %q:\n%s", w, warned)
		}
	}

	if _, err := ParseFile("/cfg/reika/config.json", []byte(`{"profiles": {"p": {"mcp_servers": []}}}`)); err == nil {
		t.Errorf("ParseFile took mcp_servers in a profile, want an unknown-field error")
	}
	none := Resolve(Inputs{Pushed: map[string]any{"reika": map[string]any{"mcpServers": []any{}}}})
	if none.MCPServers.Value != nil {
		t.Errorf("a push gave MCPServers %v, want none", none.MCPServers.Value)
	}
}

// TestAllowMCPAlways: an MCP tool the user always allows joins the file's
// mcp_allow, the servers and the other keys kept; the resolver takes it.
func TestAllowMCPAlways(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(path, []byte(`{"bash_allow": ["ls"], "mcp_servers": [{"name": "docs", "command": "docs-mcp"}]}`), 0o600)
	for _, tool := range []string{"mcp__docs__echo", "mcp__docs__big", "mcp__docs__echo"} {
		if err := AllowMCPAlways(path, tool); err != nil {
			t.Fatalf("AllowMCPAlways(%q) = %v", tool, err)
		}
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := Resolve(Inputs{File: f, FilePath: path, Pushed: map[string]any{"mcpAllow": []any{"mcp__ws__x"}}})
	if d := cmp.Diff([]string{"mcp__docs__echo", "mcp__docs__big"}, s.MCPAllow.Value); d != "" {
		t.Errorf("mcp_allow (-want +got):\n%s", d)
	}
	if len(s.MCPServers.Value) != 1 || len(s.BashAllow.Value) != 1 {
		t.Errorf("other keys changed: servers %v, bash_allow %v", s.MCPServers.Value, s.BashAllow.Value)
	}
	if !strings.Contains(strings.Join(s.Warnings, "\n"), "mcp_allow from the editor's settings is ignored") {
		t.Errorf("warnings = %q, want the push's mcp_allow told", s.Warnings)
	}
}

// TestACPServerKey: a client-offered server's key is its command line, or
// its URL, then its variables' names and a hash of their values: a value
// changed is another key, and no value is written in it. "Always" keeps
// it in acp_mcp_allow, which the resolver takes from the file alone.
func TestACPServerKey(t *testing.T) {
	plain := MCPServer{Name: "a", Command: "npx", Args: []string{"-y", "my server"}}
	if got := ACPServerKey(plain); got != `npx -y "my server"` {
		t.Errorf("ACPServerKey = %q", got)
	}
	withEnv := MCPServer{Name: "a", Command: "srv", Env: map[string]string{"TOKEN": "s3cret", "NODE_OPTIONS": ""}}
	key := ACPServerKey(withEnv)
	if !strings.HasPrefix(key, "srv env NODE_OPTIONS,TOKEN sha256:") || strings.Contains(key, "s3cret") {
		t.Errorf("ACPServerKey with variables = %q", key)
	}
	withEnv.Env["NODE_OPTIONS"] = "--require ./evil.js"
	if ACPServerKey(withEnv) == key {
		t.Errorf("a changed variable's value kept the key %q", key)
	}
	web := MCPServer{Name: "w", URL: "http://127.0.0.1:9/mcp", Headers: map[string]string{"Authorization": "Bearer t"}}
	if got := ACPServerKey(web); !strings.HasPrefix(got, "http://127.0.0.1:9/mcp headers Authorization sha256:") {
		t.Errorf("ACPServerKey of a URL = %q", got)
	}
	path := filepath.Join(t.TempDir(), "config.json")
	if err := AllowACPServerAlways(path, key); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := Resolve(Inputs{File: f, FilePath: path, Editor: map[string]any{"acp_mcp_allow": []any{"sh"}}})
	if d := cmp.Diff([]string{key}, s.ACPMCPAllow.Value); d != "" {
		t.Errorf("acp_mcp_allow (-want +got):\n%s", d)
	}
	if !strings.Contains(strings.Join(s.Warnings, "\n"), "acp_mcp_allow from the editor's settings is ignored") {
		t.Errorf("warnings = %q, want the editor's acp_mcp_allow told", s.Warnings)
	}
}
