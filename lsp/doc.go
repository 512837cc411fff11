// Package lsp is Reika's language server: it speaks the Language Server
// Protocol over a stream (stdio, when an editor starts reika-lsp), keeps
// the editor's open documents, offers code actions and commands, runs the
// agent in the background with progress and status, and turns the agent's
// proposals into minimal, versioned edits the editor applies.
//
//	err := lsp.Serve(ctx, stdio, lsp.Options{})
//
// It is the only package that imports go.lsp.dev/protocol. Positions are
// converted to byte offsets in one place (Mapper), in the encoding the
// client and server agreed on (UTF-16 unless the client offers UTF-8).
//
// # What lives where
//
// One file per LSP feature holds its handlers, which decode the params,
// take the state they need, call, and convert the result: initialize.go,
// text_sync.go, code_action.go, execute_command.go, workspace.go (the
// workspace notifications), cancel.go (both cancel paths), and
// unimplemented.go (what is deliberately ignored). server.go dispatches;
// client.go holds what the server sends the client. The names Reika adds
// to the protocol, and the shapes of its results, are in names.go.
//
// The connection's state is split by concern, each part with its own
// lock: runs (runs.go: the agent run under way and the requests that can
// be cancelled), offers (offers.go: proposals waiting in code actions),
// the client's capabilities (capabilities.go: written once by initialize),
// the workspace folders (folders.go), the open documents (documents.go)
// and the repo map; Server.mu guards only the agent session and what it is
// built from (session.go).
//
// # Concurrency
//
// Messages are handled one at a time, in order, and every handler returns
// at once: a request that waits on the engine or the user replies from a
// goroutine the connection owns, under a context that $/cancelRequest
// cancels, and an agent run reports with $/progress and
// window/showMessage. Serve stops every goroutine it started before it
// returns. A Server is used only through Serve.
//
// # go.lsp.dev/protocol v0.12.0 and jsonrpc2 v0.10.0
//
// Reika stays on these versions (jsonrpc2 v1 does not compile with the
// protocol module) and uses the library's types wherever they work. Its
// known defects, each with its workaround and the test that pins it (in
// wire_test.go unless named otherwise), so that a fixed library shows up
// as a failing test:
//
//  1. $/cancelRequest with a numeric id is dropped: ids decode as float64,
//     which the library's cancellation never matches, and VS Code and
//     Neovim send numbers. Workaround: cancelParams keeps the id raw and
//     runs cancels by it (cancel.go). Pinned by TestProtocolOverJSONRPC2.
//  2. The connection answers requests strictly in order: a handler that
//     waits blocks every later message, didChange and cancels included.
//     Workaround: handlers return at once; work runs in Server.later and
//     owned goroutines (server.go). Pinned by the scenarios
//     cancel_request and codeaction_churn_while_running.
//  3. TextDocumentContentChangeEvent holds its range as a value, so a
//     whole-document change reads as an insertion at 0:0. Workaround:
//     didChangeParams keeps the changes raw for DecodeChanges
//     (text_sync.go, documents.go). Pinned by TestContentChangeRangeIsAValue.
//  4. The logger and client context keys are equal, so WithClient hides
//     WithLogger. Workaround: Reika puts neither in a context; it logs to
//     Options.Log. Pinned by TestContextKeysCollide.
//  5. ProgressToken marshals itself only through a pointer: ProgressParams
//     or WorkDoneProgressCreateParams passed by value send the token as {}.
//     Workaround: both always go by pointer (client.go). Pinned by
//     TestProgressParamsByValue.
//  6. WorkspaceEdit.DocumentChanges holds only plain TextDocumentEdits: no
//     CreateFile, no annotated edits. Workaround: Reika's own WorkspaceEdit
//     (workspace_edit.go), sent with a raw workspace/applyEdit and inside
//     codeAction (code_action.go). window/showDocument sits on the Server
//     interface, not the Client one: it is a raw call with the library's
//     params (ask.go). Pinned by TestWorkspaceEditDocumentChanges.
//  7. Custom methods reach Server.Request, and the fallback handler given
//     to ServerHandler is ignored. Workaround: Reika does not use
//     ServerHandler; Server.handle dispatches every method itself.
//  8. One message the library cannot decode ends the connection, with no
//     answer: a well-framed body that is not JSON, "jsonrpc": "1.0", a
//     batch, an id that is not a string or a 32-bit integer (1.5). Any run
//     under way is lost. Workaround: Reika frames messages itself and
//     checks every body before the library sees it (stream.go): a bad one
//     is answered with ParseError or InvalidRequest and the server reads
//     on; only broken framing ends the connection. A body over its
//     method's limit (64 MiB for didOpen and didChange, 4 MiB for the
//     rest) is skipped, never decoded, and held only until its "method"
//     is read (skim.go). Pinned by TestOneBadMessageEndsTheConnection; the
//     server's side by TestStream, TestStreamLimitByMethod,
//     FuzzStreamBody, FuzzStreamWire, the scenario wire_garbage and
//     TestFaultHugeBodiesMemory (fault_wire_test.go).
//  9. A request whose id is null is taken for a notification: its handler
//     runs and its answer is never sent; the client waits for ever.
//     JSON-RPC 2.0 discourages a null id, LSP's ids are strings or
//     integers, and a notification has no id at all. Workaround: the
//     stream refuses it with InvalidRequest and the id null, which is what
//     JSON-RPC answers when it cannot tell a request's id (stream.go).
//     Pinned by TestNullIDIsANotification; the server's side by
//     TestStream and TestFaultNullID (fault_wire_test.go).
//
// The library models LSP 3.15–3.16, so the position encodings of 3.17
// (general.positionEncodings, capabilities.positionEncoding) are read and
// written by initializeParams and initializeResult around its types
// (initialize.go). Pinned by TestPositionEncodingNotModelled.
package lsp
