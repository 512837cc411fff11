// Package acp is Reika's second front end: the Agent Client Protocol
// (ACP, protocol version 1) over stdio, for editors that show an agent's
// conversation themselves (Zed, JetBrains, Neovim's CodeCompanion and
// avante, Emacs' agent-shell). It builds its sessions with agent.Start,
// the one constructor the language server uses, and turns a run's events
// into session/update notifications:
//
//	err := acp.Serve(ctx, os.Stdin, os.Stdout, acp.Options{Log: os.Stderr})
//
// A session is one workspace (session/new's cwd, confined as the
// language server's folders); its id is its transcript's, so that
// session/load resumes a session of either front end and replays its
// conversation as updates. Each prompt is a run (agent.Session.Run) or a
// command (/compact, /recap, /status, /new, /save); the reply streams
// as agent_message_chunk and agent_thought_chunk, each tool call is a
// tool_call with its kind and place and a tool_call_update with its
// status and, for a change, its diff; the ctx chip is a usage_update;
// the run's task list, as the agent ticks it from what it saw (a step
// the model only claims is pending, " (claimed, not seen)"), is the
// plan; sheds, folds and warnings are one finished tool call of kind
// other each, titled with their one line, never in the answer. The
// modes are normal, ask and plan (read-only: no edits and no command off
// the read-only list, the answer a numbered plan).
//
// Changes land through fs/write_text_file when the client offers it,
// else on the disk, placed on the file's text as it is now (the client's,
// through fs/read_text_file, for the files the prompt named or the agent
// changed) by the language server's rule, tools.PlanEdit; what landed is
// read back. A retried request's reply is not streamed twice. Questions of the tools (commands off the
// allow list, protected paths, new hosts; every change in the "ask"
// mode) are session/request_permission with the answers the tools offer.
// Commands run in the agent's sandbox; one the user lets out of it (or
// every one, where there is no sandbox) runs in the client's terminal
// when it offers terminal/*, shown on its tool call (terminal.go).
//
// The wire is github.com/coder/acp-go-sdk v0.13.5's (newline-delimited
// JSON-RPC, each request on a goroutine of its own, notifications in
// order, session/cancel cancelling the prompt's context). Its
// defects, the first three pinned by a test each in sdk_test.go:
//
//  1. A line that is not JSON is logged and dropped: no -32700 answer,
//     so a client that sent a broken request waits for its answer.
//     Serve's reader (lines) answers such a line with the parse error
//     itself and passes the SDK only JSON.
//  2. A line over 10 MiB ends the connection (bufio.Scanner's limit).
//  3. Its errors put the reason in data under "Internal error" (or
//     "Invalid params"); failure and invalid give the client the reason
//     as the message instead.
//  4. SetLogger writes a field its reader goroutine, started by the
//     constructor, reads: Serve holds the input shut until the logger is
//     set (gated). A race is not pinned by a test that fails when it is
//     mended; `go test -race ./acp` fails if the gate goes.
//
// The methods of Server are called by the SDK and are safe for concurrent
// use.
package acp
