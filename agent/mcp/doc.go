// Package mcp gives the agent the tools of the MCP servers the user's
// config file names (agent/config, mcp_servers), and of those an ACP
// client offered that the user let start (Server.FromClient, after the
// config's; acp asks), on the official MCP Go
// SDK (github.com/modelcontextprotocol/go-sdk), which only this package
// imports.
//
//	box, notices := mcp.Start(ctx, builtin, mcp.Config{Servers: servers, Ask: ask, Spill: set.Spill})
//	defer box.Close()
//
// Start runs each server (a program over stdio, or an endpoint of the
// streamable HTTP transport with its headers) and lists its tools, waiting at
// most Config.Wait (10 s) for each, all at once; a server that fails is a
// notice and is left out. Its tools become definitions named
// mcp__<server>__<tool> (cut to the characters and length the engines
// take), their description and input schema the server's, after the
// built-in tools': the config's servers', then the client's, each in the
// order of their names. That list is fixed, byte for byte (it is in the
// prefix the engine caches), until the session's next fold: a server's
// tools/list_changed has its new list fetched at once (Pending), told to
// the model with that server's next result, and put in force when the
// session takes it (TakeChange) at a fold, which rewrites the request
// anyway (change.go).
//
// A call asks the user first (tools.AskMCP: the server, the tool and the
// arguments whole; once, this run, always — kept in the user's mcp_allow
// list, which Config.Allowed gives — or deny),
// never runs in a plan-mode run, and its result is untrusted text: its
// text parts joined, other parts named by type and size, spilled as long
// command output is. A server that died is started again once; after that
// its calls are told it is not running.
//
// A Toolbox is safe for concurrent use; Close stops the servers.
package mcp
