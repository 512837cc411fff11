package config

import (
	"fmt"
	"regexp"
	"strings"
)

// MCPServer is one MCP server of the config file's mcp_servers list: a
// program the agent starts and speaks MCP with over its stdin and stdout,
// whose tools the model gets as mcp__<name>__<tool>, each call asked.
//
//	"mcp_servers": [
//	  {"name": "github", "command": "github-mcp-server", "args": ["stdio"],
//	   "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "…"}}
//	]
//
// The list widens what the agent may do (it runs programs, outside the
// sandbox, with the user's environment), so it comes only from the user's
// config file: never from a profile, REIKA_*, the editor's startup options
// or its settings pushes, which a workspace can fill.
type MCPServer struct {
	// Name names the server in its tools' names and in questions: letters,
	// digits, '-' and '_', at most 32.
	Name string `json:"name"`
	// Command is the program to run (found on PATH when it has no slash);
	// Args its arguments.
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	// Env are variables set for the server on top of the user's
	// environment.
	Env map[string]string `json:"env,omitempty"`
}

// mcpName is what a server's name may be.
var mcpName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// applyMCP takes the file's MCP servers, each checked (a bad or repeated
// one is left out with a warning), and warns about any the editor gave.
func (r *resolver) applyMCP(in Inputs, editor, pushed map[string]any) {
	for _, m := range []map[string]any{editor, pushed} {
		if _, ok := m["mcp_servers"]; ok {
			r.warn("mcp_servers from the editor's settings is ignored: MCP servers run programs, so they come only from %s", displayPath(in.FilePath))
			break
		}
	}
	if in.File == nil || len(in.File.MCPServers) == 0 {
		return
	}
	seen := map[string]bool{}
	var list []MCPServer
	for i, s := range in.File.MCPServers {
		s.Name, s.Command = strings.TrimSpace(s.Name), strings.TrimSpace(s.Command)
		where := fmt.Sprintf("mcp_servers[%d] (%s)", i, displayPath(in.FilePath))
		switch {
		case !mcpName.MatchString(s.Name):
			r.warn("%s: the name %q is not 1 to 32 letters, digits, '-' or '_'; left out", where, s.Name)
		case seen[strings.ToLower(s.Name)]:
			r.warn("%s: the name %q is taken by an earlier server; left out", where, s.Name)
		case s.Command == "":
			r.warn("%s: server %q has no command; left out", where, s.Name)
		default:
			seen[strings.ToLower(s.Name)] = true
			list = append(list, s)
		}
	}
	if list != nil {
		r.s.MCPServers = Value[[]MCPServer]{list, fileSource(in.FilePath, "")}
	}
}
