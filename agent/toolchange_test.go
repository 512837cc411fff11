package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/mcp"
	"github.com/reika-lsp/reika/agent/mcp/mcptest"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
)

// mcpConfig writes a config file naming the test MCP server docs and
// returns its path.
func mcpConfig(t *testing.T) string {
	t.Helper()
	cmd, args, env := mcptest.Server(t)
	file, _ := json.Marshal(config.FileContents{MCPServers: []config.MCPServer{{Name: "docs", Command: cmd, Args: args, Env: env}}})
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startMCP starts a session on the engine at url with the config file
// path, every question answered yes always.
func startMCP(t *testing.T, url, path, ws, state, resume string) *Session {
	t.Helper()
	s, err := Start(context.Background(), Setup{
		Getenv:     func(string) string { return "" },
		ConfigFile: path,
		Override: func(st *config.Settings) {
			st.Endpoint = config.Value[string]{Value: url, Source: config.Source{Layer: config.Flag, Detail: "test"}}
		},
		Folders:  []string{ws},
		StateDir: state,
		Resume:   resume,
		Ask:      func(context.Context, tools.Question) tools.Answer { return tools.Always },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestToolsChangeAtFold: an MCP server that adds a tool mid-session
// (tools/list_changed) changes nothing in the requests until the next
// fold: each before it is an append of the one before, the model told of
// the change with the server's next result; the request after the fold
// carries the new tool, which the model can call, and the user is told.
// A resume replays the change at the same fold, and goes on from the
// last request byte for byte.
func TestToolsChangeAtFold(t *testing.T) {
	echo := func(text string) sim.Turn {
		return sim.Turn{ToolCalls: []sim.ScriptCall{{Name: "mcp__docs__echo", Arguments: []byte(`{"text":"` + text + `"}`)}}}
	}
	big := sim.Turn{ToolCalls: []sim.ScriptCall{{Name: "mcp__docs__big", Arguments: []byte(`{"lines":150}`)}}}
	srv, url := simURL(t, sim.Config{Ctx: 16384, Script: []sim.Turn{
		echo("add a tool"), big, {Content: "Added."},
		echo("x"), {Content: "Noted."},
		{Content: "Fold note."},
		{ToolCalls: []sim.ScriptCall{{Name: "mcp__docs__late", Arguments: []byte(`{}`)}}}, {Content: "Late ran."},
		{Content: "Resumed."},
	}})
	ws, state := t.TempDir(), t.TempDir()
	s := startMCP(t, url, mcpConfig(t), ws, state, "")
	ask(t, s, "Add a tool.")
	box := s.cfg.Tools.(*mcp.Toolbox)
	deadline := time.Now().Add(10 * time.Second)
	for !box.Pending() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !box.Pending() {
		t.Fatal("no new tool list pending 10 s after the server added a tool")
	}
	ask(t, s, "Echo x.")
	var told []string
	if _, _, err := s.Compact(context.Background(), func(e Event) {
		if e.Kind == Warning {
			told = append(told, e.Text)
		}
	}); err != nil {
		t.Fatal(err)
	}
	ask(t, s, "Call the late tool.")
	reqs := recorded(t, srv, 8)
	if len(reqs) != 8 {
		t.Fatalf("%d requests, want 8", len(reqs))
	}
	for i := 1; i < 6; i++ { // up to the note round, appends on the first tools
		mcptest.Appends(t, reqs[i-1].Body, reqs[i].Body, "mcp__docs__echo")
		if strings.Contains(strings.Join(reqs[i].Tools, " "), "late") {
			t.Errorf("request %d, before the fold, offers the late tool", i+1)
		}
	}
	if !strings.Contains(string(reqs[4].Body), "the new list takes effect at the next fold") {
		t.Errorf("the model was not told the list changes at the next fold:\n%s", reqs[4].Body)
	}
	after := reqs[6].Tools
	if len(after) != len(reqs[5].Tools)+1 || after[len(after)-1] != "mcp__docs__late" {
		t.Errorf("tools after the fold = %q, want those before and the late tool", after)
	}
	mcptest.Appends(t, reqs[6].Body, reqs[7].Body, "mcp__docs__late")
	t.Logf("prompt tokens reused of the requests: %v", cacheNs(reqs))
	if !strings.Contains(strings.Join(told, "\n"), "added: mcp__docs__late") {
		t.Errorf("warnings %q: want the user told of the new tool", told)
	}

	path := s.TranscriptPath()
	s.Close()
	resumed := startMCP(t, url, mcpConfig(t), ws, state, path)
	if strings.Contains(resumed.resumed, "differs") {
		t.Errorf("resume: %s", resumed.resumed)
	}
	if !engine.SameTools(resumed.Prefix().Tools, s.Prefix().Tools) {
		t.Errorf("the resumed prefix's tools are not those the fold put in force")
	}
	ask(t, resumed, "Go on.")
	mcptest.Appends(t, reqs[7].Body, recorded(t, srv, 9)[8].Body, "mcp__docs__late")
}

// cacheNs are the prompt tokens the engine reused of each request, of
// how many.
func cacheNs(reqs []sim.RequestRecord) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, fmt.Sprintf("%d/%d", r.CacheN, r.PromptTokens))
	}
	return out
}
