package lsp_test

// The scenario language: the one page that describes
// lsp/testdata/scenarios/*.txtar, which TestScenarios runs against the real
// server (lsp.Serve over net.Pipe, or the built reika-lsp over stdio) with
// the fake editor of lsp/lsptest and a scripted engine (agent/sim).
//
// # Sections
//
// A scenario is a txtar archive. Its comment (before the first section)
// says what it shows; its sections are:
//
//	-- config --        settings, one "key: value" a line (below); # starts a comment
//	-- engine.json --   the engine's scripted turns: a JSON array of sim.Turn
//	-- ws/PATH --       a file of the workspace, written to disk before the server starts
//	-- steps --         the steps, one a line (below); blank lines and # lines are skipped
//	-- want/... --      golden sections, produced by the run (below)
//
// Any other section name fails the scenario.
//
// # Config
//
//	caps: full|bare [+NAME|-NAME]…   the editor's capabilities: lsptest.Full() or
//	                                 lsptest.Bare(), then each NAME turned on or off:
//	                                 progress, applyEdit, documentChanges, annotations,
//	                                 create (resource operations), literal (code action
//	                                 literals), showDocument, messageActions, stringIDs,
//	                                 escapeSlashes, junkValueSet, neovim (also names the
//	                                 client Neovim), eglot19 (Emacs 28's eglot: no
//	                                 clientInfo, no progress, refuses a stale edit),
//	                                 eglot117 (Emacs 30's eglot: applies a stale edit
//	                                 over unsent typing); default full
//	encodings: ENC…                  the position encodings the editor offers (utf-8, utf-16, …)
//	ctx: N                           the engine's window in tokens (default lsptest's 16384)
//	env: KEY=VALUE                   one variable of the server's environment; repeat
//	transport: pipe|binary…          run over each; the second's goldens must equal the
//	                                 first's (default pipe)
//	apply-timeout: DURATION          lsp.Options.ApplyTimeout (time.ParseDuration)
//	client-timeout: DURATION         lsp.Options.ClientTimeout
//
// # Steps
//
// A step is words: bare words, Go-quoted strings ("a b\n"), /regexps/
// (alone or after key=; they may hold spaces, \/ is a slash, ^ and $ match
// at line breaks), key="quoted", and JSON from a { to the end of the line.
// JSON may name $URI(PATH) (the file's URI) and $WS (the workspace root);
// a PATH may be @shown, the last file the server opened with showDocument.
// Each step but the waits and expectations is written to want/transcript
// as "> step"; a step that sends a notification lets the server's answer
// land before the next step's line.
//
//	open PATH                        textDocument/didOpen with the text on disk
//	close PATH                       textDocument/didClose
//	save PATH                        write the buffer, textDocument/didSave
//	edit PATH "old" "new"            the user replaces the first "old" (didChange)
//	type PATH "old" "new"            the same, held until the editor's next didChange
//	                                 (Neovim's debounce; eglot's idle timer)
//	stale-change PATH "old" "new"    a didChange that does not raise the version
//	gen PATH N "format %d"           write an N-line file to disk, %d the line's number;
//	                                 it is left out of want/docs
//	codeaction PATH line=/re/|at=/re/ [diag="message"]…
//	                                 textDocument/codeAction on the first line matching
//	                                 /re/ (line=) or the match itself (at=), with a
//	                                 compiler diagnostic there for each diag=; the
//	                                 titles go to want/results
//	codeaction-churn PATH line=/re/  as VS Code does: a request cancelled at once, then
//	                                 the same asked again; the second must be answered
//	pick "title"                     the first code action of the last codeaction whose
//	                                 title contains "title": apply its edit, run its command (the
//	                                 answer is collected at the end)
//	exec CMD [JSON]                  workspace/executeCommand, waiting for the answer
//	exec-async CMD [JSON]            the same, its answer collected at the end (or by
//	                                 wait answer) into its place in want/results
//	call METHOD JSON                 a request, waiting for the answer
//	notify METHOD JSON               a notification
//	on-apply accept                  how the editor answers the next workspace/applyEdit
//	on-apply refuse "why"            (one answer per step, queued; with none queued it
//	on-apply ignore                  applies the edit): applied; refused with the
//	on-apply undo                    reason; never answered; applied and undone at
//	on-apply revert                  once (one didChange with both); the buffer
//	on-apply user-edit PATH "old" "new"   reverted before the edit was sent; the user
//	on-apply user-types PATH "old" "new"  edits first; the user types first, unsent
//	on-ask "title"                   the user's answer to the next showMessageRequest;
//	                                 none queued: dismissed
//	cancel command                   reika.cancel (its answer goes to want/results)
//	cancel progress                  window/workDoneProgress/cancel of the server's token
//	cancel request                   $/cancelRequest of the last async request
//	wait run-end                     until a run's end message (bounded, as every wait)
//	wait line /re/                   until the server sends what reads, normalized, /re/
//	wait progress KIND               until a $/progress of KIND (begin, report, end)
//	wait streaming N                 until chat request N (from 1) has sent its first byte
//	wait answer                      the last async request's answer, now
//	expect …                         one expectation, now (below)
//	shutdown                         shutdown and exit; Serve must return (its result
//	                                 goes to want/results); it cancels a run under way
//	raw "BYTES"                      write BYTES (Go-quoted) to the server as they are
//	raw-body TEXT                    the rest of the line as one message's body, framed
//	                                 with its Content-Length (the server's answers to
//	                                 raw and raw-body show as "answer id …" lines)
//
// Waits look from the start of the last step that was not a wait or an
// expectation.
//
// # Expectations
//
//	expect cancelled                 the engine saw a chat stream closed mid-stream
//	                                 within 2 s of the last cancel (or shutdown) step;
//	                                 each such expectation claims one stream
//	expect line /re/                 some line the server sent, normalized, matches
//	expect no-line /re/              no line does
//	expect result /re/               the last exec's or call's result matches
//	expect less KEY1 KEY2            in the last result (a JSON object), KEY1 < KEY2
//	expect encoding ENC              the position encoding the server chose is ENC
//	expect status /re/               the last reika/status notification matches
//	expect request N|last /re/       what was new in engine request N (1-based) matches
//	expect file PATH /re/            the file, as the editor has it, matches
//	expect transcript-file /re/      the session transcripts (*.jsonl in the state
//	                                 directory) match
//
// # Goldens
//
// The run produces, and the archive holds, these sections; go test ./lsp
// -run TestScenarios -update rewrites them (review the diff):
//
//	want/transcript    what the user saw, one line an event, with the "> step" lines;
//	                   what the server sends after "> shutdown" and progress lines that
//	                   come at times, not at steps (engine reading, writing, running),
//	                   are left out
//	want/results       what commands and requests returned, in step order; numbers in
//	                   JSON results read N, code actions as their titles
//	want/engine        every chat request: a header (#seq source, tool_choice, the tool
//	                   calls it answered with, errors, cancellation, [rewritten from
//	                   message K]) and, clipped to a line, the messages new since the
//	                   request before (the system prompt is not shown)
//	want/docs/PATH     every workspace file, open or on disk, as the editor has it at
//	                   the end ("(no such file)" when gone; gen's files are left out)
//
// Places are named by regular expressions over the document's text, never
// by line numbers. Normalized in lines and goldens: the state directory
// ($STATE), the workspace ($WS), their parent ($TMP), the engine's address
// ($ENGINE), the ctx chip (ctx <chip>), token and byte counts (N), time
// stamps (<time>), fold figures, the status breakdown (<breakdown>) and the
// sandbox's line (<sandbox>).
