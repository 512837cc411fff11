package agent

import (
	"context"
	"slices"
	"strings"

	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/mcp"
	"github.com/reika-lsp/reika/agent/tools"
)

// MCPServer is what became of an MCP server of the config file at Start,
// for a front end's report.
type MCPServer struct {
	Name  string `json:"name"`
	Tools int    `json:"tools"`           // the tools it offers the model
	Error string `json:"error,omitempty"` // why it did not start
}

// mcpTools wraps the built-in tools in the tools of the MCP servers the
// user's config file names (agent/mcp), then of those the front end adds
// (Setup.MCPServers), the config's mcp_allow running unasked and
// an "always" kept there, noting in info what became of each; the cleanup it returns stops the servers, then does what done
// did. Without servers it returns the built-in tools as they are.
func (st Setup) mcpTools(ctx context.Context, settings *config.Settings, configPath string, builtin Toolbox, info *Info, done func()) (Toolbox, func()) {
	if len(settings.MCPServers.Value) == 0 && len(st.MCPServers) == 0 {
		return builtin, done
	}
	cfg := mcp.Config{Dir: st.root(), Ask: st.Ask, Unasked: st.Unasked, Allowed: settings.MCPAllow.Value}
	if configPath != "" {
		cfg.Remember = func(tool string) error { return config.AllowMCPAlways(configPath, tool) }
	}
	if set, ok := builtin.(*tools.Set); ok {
		cfg.Spill = set.Spill
	}
	for _, s := range settings.MCPServers.Value {
		cfg.Servers = append(cfg.Servers, mcp.Server{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers})
	}
	for _, s := range st.MCPServers {
		cfg.Servers = append(cfg.Servers, mcp.Server{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers, FromClient: true})
	}
	box, notices := mcp.Start(ctx, builtin, cfg)
	for _, n := range notices {
		info.notice(n.Warning, n.Text)
	}
	for _, st := range box.Servers() {
		info.MCP = append(info.MCP, MCPServer{Name: st.Name, Tools: st.Tools, Error: st.Error})
	}
	return box, func() { box.Close(); done() }
}

// beforeMCP adds def to defs after Reika's own tools, before the MCP
// servers' (which come last, in the order of their names).
func beforeMCP(defs []engine.Tool, def engine.Tool) []engine.Tool {
	i := slices.IndexFunc(defs, func(d engine.Tool) bool { return strings.HasPrefix(d.Name, mcp.Prefix) })
	if i < 0 {
		i = len(defs)
	}
	return slices.Insert(defs, i, def)
}
