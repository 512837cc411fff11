package config

import (
	"crypto/sha256"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// MCPServer is one MCP server of the config file's mcp_servers list: a
// program the agent starts and speaks MCP with over its stdin and stdout,
// or an HTTP endpoint, whose tools the model gets as
// mcp__<name>__<tool>, each call asked.
//
//	"mcp_servers": [
//	  {"name": "github", "command": "github-mcp-server", "args": ["stdio"],
//	   "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "…"}},
//	  {"name": "docs", "url": "http://127.0.0.1:8931/mcp",
//	   "headers": {"Authorization": "Bearer …"}}
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
	// URL, in place of Command, is the endpoint of a server that speaks
	// MCP's streamable HTTP transport; Headers are sent with every request
	// to it (an Authorization header, say).
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// mcpName is what a server's name may be.
var mcpName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// applyMCP takes the file's MCP servers, each checked (a bad or repeated
// one is left out with a warning), and its mcp_allow list, and warns
// about any the editor gave.
func (r *resolver) applyMCP(in Inputs, editor, pushed map[string]any) {
	for _, key := range []string{"mcp_servers", "mcp_allow", "acp_mcp_allow"} {
		_, e := editor[key]
		_, p := pushed[key]
		if e || p {
			r.warn("%s from the editor's settings is ignored: MCP servers run programs, so they and their allowed tools come only from %s", key, displayPath(in.FilePath))
		}
	}
	if in.File == nil {
		return
	}
	if len(in.File.MCPAllow) > 0 {
		r.s.MCPAllow = Value[[]string]{in.File.MCPAllow, fileSource(in.FilePath, "")}
	}
	if len(in.File.ACPMCPAllow) > 0 {
		r.s.ACPMCPAllow = Value[[]string]{in.File.ACPMCPAllow, fileSource(in.FilePath, "")}
	}
	if len(in.File.MCPServers) == 0 {
		return
	}
	seen := map[string]bool{}
	var list []MCPServer
	for i, s := range in.File.MCPServers {
		s.Name, s.Command, s.URL = strings.TrimSpace(s.Name), strings.TrimSpace(s.Command), strings.TrimSpace(s.URL)
		where := fmt.Sprintf("mcp_servers[%d] (%s)", i, displayPath(in.FilePath))
		switch {
		case !mcpName.MatchString(s.Name):
			r.warn("%s: the name %q is not 1 to 32 letters, digits, '-' or '_'; left out", where, s.Name)
		case seen[strings.ToLower(s.Name)]:
			r.warn("%s: the name %q is taken by an earlier server; left out", where, s.Name)
		case (s.Command == "") == (s.URL == ""):
			r.warn("%s: server %q needs a command or a url, not both; left out", where, s.Name)
		case s.URL != "" && !httpURL(s.URL):
			r.warn("%s: server %q: url %q is not an http(s) URL with a host; left out", where, s.Name, s.URL)
		case s.URL == "" && s.Headers != nil:
			r.warn("%s: server %q: headers go with a url, not a command; left out", where, s.Name)
		default:
			seen[strings.ToLower(s.Name)] = true
			list = append(list, s)
		}
	}
	if list != nil {
		r.s.MCPServers = Value[[]MCPServer]{list, fileSource(in.FilePath, "")}
	}
}

// httpURL reports whether s is an http or https URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// ACPServerKey is how the acp_mcp_allow list names a server an ACP client
// offers: its command line (the program and its arguments, each quoted
// where it holds a space or a quote), or its URL; then the names of its
// environment variables (or headers) and a hash of their values, so that
// a workspace that changes a value (NODE_OPTIONS, say) is asked again,
// without the values, which may be secrets, written to the file.
//
//	npx -y @modelcontextprotocol/server-everything
//	my-server --stdio env API_TOKEN sha256:3f2a9c0d1e7b
func ACPServerKey(s MCPServer) string {
	var b strings.Builder
	vars := s.Env
	if s.URL != "" {
		b.WriteString(s.URL)
		vars = s.Headers
	} else {
		b.WriteString(quoteArg(s.Command))
		for _, a := range s.Args {
			b.WriteString(" " + quoteArg(a))
		}
	}
	if len(vars) == 0 {
		return b.String()
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, k := range names {
		fmt.Fprintf(h, "%s=%s\x00", k, vars[k])
	}
	what := " env "
	if s.URL != "" {
		what = " headers "
	}
	fmt.Fprintf(&b, "%s%s sha256:%x", what, strings.Join(names, ","), h.Sum(nil)[:6])
	return b.String()
}

// quoteArg quotes an argument that holds a space, a quote or nothing.
func quoteArg(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\n'\"\\") {
		return a
	}
	return strconv.Quote(a)
}
