package acp

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/tools"
)

// The MCP servers a client offers in session/new, load or resume
// (mcpServers) come from the editor's settings, which a project can
// fill: each is a program (or an endpoint) the user approves. One the
// user's config file trusts (acp_mcp_allow, agent.ACPServerKey) starts
// unasked; any other is asked once with session/request_permission —
// start it for this session, always (kept in acp_mcp_allow), or not — and
// one not started is told, with why. Those that start join the session at
// its start, after the config file's servers, as agent/mcp runs those: the
// tool list stays fixed, byte for byte, until a fold. A conversation that
// session/load resumes keeps the tools its requests carried until its
// next fold, and carries those of its servers now from there on (the
// user is told; /compact folds at once).

// editorMCP is what became of the servers a client offered: those to
// start, and what the user is told of the others.
type editorMCP struct {
	trusted []agent.MCPServerConfig // in acp_mcp_allow: started unasked
	asked   []agent.MCPServerConfig // to ask about
	told    []string                // refused, with why
	// config is the user's config file, where "always" is kept.
	config string
}

// offeredServers sorts the client's servers by what becomes of them, under
// the user's settings (those of the config file: the client gives none).
func (s *Server) offeredServers(list []sdk.McpServer) editorMCP {
	var m editorMCP
	if len(list) == 0 {
		return m
	}
	settings, path, err := agent.Setup{Getenv: s.opts.Getenv}.Resolve()
	if err != nil {
		m.told = append(m.told, fmt.Sprintf("the MCP servers the editor offered are not started: %v", err))
		return m
	}
	m.config = path
	taken := map[string]bool{}
	for _, c := range settings.MCPServers.Value {
		taken[strings.ToLower(c.Name)] = true
	}
	for _, o := range list {
		srv, why := fromClient(o)
		switch {
		case why != "":
		case taken[strings.ToLower(srv.Name)]:
			why = "its name is taken by a server of your config file's mcp_servers or an earlier one"
		case slices.Contains(settings.ACPMCPAllow.Value, agent.ACPServerKey(srv)):
			m.trusted = append(m.trusted, srv)
		default:
			m.asked = append(m.asked, srv)
		}
		if why != "" {
			m.told = append(m.told, fmt.Sprintf("the MCP server %s the editor offered is not started: %s", offeredName(o), why))
			continue
		}
		taken[strings.ToLower(srv.Name)] = true
	}
	return m
}

// fromClient is a server the client offered as the config names one, or
// why it cannot start.
func fromClient(o sdk.McpServer) (agent.MCPServerConfig, string) {
	switch {
	case o.Stdio != nil:
		srv := agent.MCPServerConfig{Name: o.Stdio.Name, Command: o.Stdio.Command, Args: o.Stdio.Args}
		for _, e := range o.Stdio.Env {
			if srv.Env == nil {
				srv.Env = map[string]string{}
			}
			srv.Env[e.Name] = e.Value
		}
		if strings.TrimSpace(srv.Command) == "" {
			return srv, "it names no command"
		}
		return srv, nameProblem(srv.Name)
	case o.Http != nil:
		srv := agent.MCPServerConfig{Name: o.Http.Name, URL: o.Http.Url}
		for _, h := range o.Http.Headers {
			if srv.Headers == nil {
				srv.Headers = map[string]string{}
			}
			srv.Headers[h.Name] = h.Value
		}
		if u, err := url.Parse(srv.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return srv, fmt.Sprintf("its url %q is not an http(s) URL with a host", srv.URL)
		}
		return srv, nameProblem(srv.Name)
	case o.Sse != nil:
		return agent.MCPServerConfig{}, "Reika speaks MCP over stdio and streamable HTTP, not SSE (initialize says so)"
	}
	return agent.MCPServerConfig{}, "its transport is not one Reika knows"
}

// nameProblem says why a server's name will not do, or "".
func nameProblem(name string) string {
	if strings.TrimSpace(name) == "" || len(name) > 64 {
		return "its name is empty or longer than 64 bytes"
	}
	return ""
}

// offeredName names a server the client offered, whatever its transport.
func offeredName(o sdk.McpServer) string {
	switch {
	case o.Stdio != nil:
		return strconv.Quote(o.Stdio.Name)
	case o.Http != nil:
		return strconv.Quote(o.Http.Name)
	case o.Sse != nil:
		return strconv.Quote(o.Sse.Name)
	}
	return "(unnamed)"
}

// The options of the question to start a server.
const (
	startOnce   sdk.PermissionOptionId = "start-once"
	startAlways sdk.PermissionOptionId = "start-always"
	startNo     sdk.PermissionOptionId = "start-no"
)

// approve asks the user about each server m.asked holds, in turn, and
// returns those to start: the trusted, then those allowed. An "always"
// is written to the config file's acp_mcp_allow; a server refused, or
// asked of a client that does not answer, is told.
func (s *session) approve(ctx context.Context, m *editorMCP) []agent.MCPServerConfig {
	start := slices.Clone(m.trusted)
	for _, srv := range m.asked {
		switch s.askStart(ctx, srv, m.config != "") {
		case startAlways:
			if err := agent.AllowACPServerAlways(m.config, agent.ACPServerKey(srv)); err != nil {
				m.told = append(m.told, fmt.Sprintf("the MCP server %s starts for this session, but could not be kept as always allowed: %v", srv.Name, err))
			}
			start = append(start, srv)
		case startOnce:
			start = append(start, srv)
		default:
			m.told = append(m.told, fmt.Sprintf("the MCP server %s the editor offered is not started: you did not allow it (a server in your config file's acp_mcp_allow starts unasked)", srv.Name))
		}
	}
	return start
}

// askStart puts one server to the user: its command line with its
// arguments and the names (not the values) of its variables, or its URL
// and its headers' names, and why it is asked.
func (s *session) askStart(ctx context.Context, srv agent.MCPServerConfig, always bool) sdk.PermissionOptionId {
	title := fmt.Sprintf("Start the MCP server %s: %s", srv.Name, commandLine(srv))
	why := "The editor asks Reika to start this MCP server (from its settings, which a project can fill). " +
		"It would run as a program of yours, outside the sandbox; its tools would join this session, each call asked."
	opts := []sdk.PermissionOption{{OptionId: startOnce, Name: "Start for this session", Kind: sdk.PermissionOptionKindAllowOnce}}
	if always {
		opts = append(opts, sdk.PermissionOption{OptionId: startAlways, Name: "Always start (kept in acp_mcp_allow)", Kind: sdk.PermissionOptionKindAllowAlways})
	}
	opts = append(opts, sdk.PermissionOption{OptionId: startNo, Name: "Do not start", Kind: sdk.PermissionOptionKindRejectOnce})
	s.mu.Lock()
	s.serial++
	id := sdk.ToolCallId("mcp-start-" + itoa(s.serial))
	s.mu.Unlock()
	kind := sdk.ToolKindExecute
	call := sdk.ToolCallUpdate{ToolCallId: id, Title: &title, Kind: &kind, Content: []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(why))}}
	res, err := s.srv.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: s.id, ToolCall: call, Options: opts})
	if err != nil || ctx.Err() != nil || res.Outcome.Selected == nil {
		return startNo
	}
	for _, o := range opts {
		if o.OptionId == res.Outcome.Selected.OptionId {
			return o.OptionId
		}
	}
	return startNo
}

// commandLine shows a server as the question names it: the program and
// its arguments, then its variables' names; or its URL and its headers'
// names.
func commandLine(srv agent.MCPServerConfig) string {
	line, vars, what := srv.URL, srv.Headers, "headers"
	if srv.URL == "" {
		parts := []string{quoteArg(srv.Command)}
		for _, a := range srv.Args {
			parts = append(parts, quoteArg(a))
		}
		line, vars, what = strings.Join(parts, " "), srv.Env, "environment"
	}
	if len(vars) > 0 {
		var names []string
		for k := range vars {
			names = append(names, k)
		}
		sort.Strings(names)
		line += fmt.Sprintf(" (%s: %s)", what, strings.Join(names, ", "))
	}
	return tools.Visible(line)
}

// quoteArg quotes an argument that holds a space, a quote or nothing, as
// agent.ACPServerKey does.
func quoteArg(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\n'\"\\") {
		return a
	}
	return strconv.Quote(a)
}

// started waits for the start of a session answered before it started,
// and says why it failed, if it did.
func (s *session) started(ctx context.Context) error {
	if s.ready == nil {
		return nil
	}
	select {
	case <-s.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.startErr != nil {
		return failure(fmt.Errorf("the session did not start: %w", s.startErr))
	}
	return nil
}

// isReady reports whether a session answered before it started has
// started (or failed to).
func (s *session) isReady() bool {
	select {
	case <-s.ready:
		return true
	default:
		return false
	}
}

// startAsked starts a session answered before it started, once its
// answer is out: the user is asked about the client's servers m holds,
// then the agent starts with those allowed; a prompt waits for it.
func (s *session) startAsked(m *editorMCP) {
	ctx := s.srv.ctx
	servers := s.approve(ctx, m)
	s.mu.Lock()
	s.mcp = servers
	s.mu.Unlock()
	err := s.startAgent(ctx, "", string(s.id))
	s.mu.Lock()
	s.startErr = err
	closed, a, mode := s.closed, s.agent, s.mode
	s.mu.Unlock()
	close(s.ready)
	if closed {
		s.close() // closed while it started: what started stops
		return
	}
	s.tell(m.told)
	if err != nil {
		s.status(fmt.Sprintf("the session did not start: %s", oneLine(err.Error())))
		return
	}
	if mode != tools.Normal && mode != "" {
		a.SetMode(string(mode)) // set while it started
	}
	// The model's option needed the engine, which it knows now.
	s.update(sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: s.configOptions(), SessionUpdate: "config_option_update"}})
}

// tell says each line as a status line of the session.
func (s *session) tell(lines []string) {
	for _, l := range lines {
		s.status(l)
	}
}
