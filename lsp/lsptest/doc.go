// Package lsptest is a fake editor for testing Reika's language server
// end to end: a JSON-RPC client over a real transport (net.Pipe to
// lsp.Serve, or a built reika-lsp over stdio) in front of a simulated
// engine on loopback.
//
//	e := lsptest.Start(t, lsptest.Config{
//		Caps:   lsptest.Full(),
//		Files:  map[string]string{"main.go": src},
//		Engine: sim.Config{Script: turns},
//	})
//	e.Open("main.go")
//	a := e.PickAction(e.CodeActions("main.go", e.FindLine("main.go", `println`)), "fix")
//	e.RunAction(a)
//	e.WaitRunEnd(0)
//	got := e.Text("main.go") // the edit the server sent, applied
//
// The editor behaves as a careful client: it offers the capabilities it is
// given (progress, applyEdit, annotations, documentChanges, resource
// operations, code action literals, position encodings, numeric or string
// ids, Neovim 0.7's escaped slashes and junk value set), keeps its own
// copies of open documents, applies the workspace edits it receives —
// checking versions and ranges with its own position arithmetic — and
// answers applyEdit, showMessageRequest and showDocument as the test says.
// It records every message the server sends; waits are bounded (10 s by
// default) and fail the test with everything received. Anything the server
// does that a real client would reject (an edit the client cannot take, a
// request its capabilities rule out) fails the test at its end.
//
// Start also starts the engine (sim) on 127.0.0.1 and gives the server
// REIKA_ENDPOINT, private XDG_* directories and REIKA_WARMUP=0 through
// Options.Getenv (or the process environment), and a temp state directory.
// Methods are for the test's goroutine; ApplyAnswer.Before runs on the
// editor's.
//
// The files follow the editor's concerns: editor.go (Config, Caps, Start,
// initialize and shutdown), transport.go (the connection: framing reader,
// dispatcher, calls, notifications, raw bytes), events.go (the record of
// what the server sent and the waits on it), requests.go (the server's
// requests to the client: applyEdit, showMessageRequest, showDocument,
// progress tokens), buffers.go (open documents, typing, saving, finding
// text), code_actions.go, uris.go, apply.go (applying workspace edits),
// positions.go, engine.go (the simulated engine) and injection.go (the
// prompt-injection attack).
package lsptest
