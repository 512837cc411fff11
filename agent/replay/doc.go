// Package replay measures context strategies against recorded agent
// sessions: it replays each session, round by round, through a strategy —
// Reika's own contextwin (ours) and the peers' (sliding window,
// summarize-when-full, observation masking, the second seed's layered
// budget) — against the simulated llama.cpp engine, sending every request
// with the real engine client, and reads the engine's own figures: what it
// prefilled, what its cache kept, what it generated, what it refused.
// Speeds turn the tokens prefilled and generated into engine seconds.
//
//	s, _ := replay.LoadRecording("testdata/sessions/fold-orphans.jsonl.gz")
//	rows, err := replay.Run(ctx, replay.Options{Recordings: []*replay.Recording{s}, Windows: []int{16000, 32000}})
//
// A Strategy (Append the conversation's messages, Turn to get the model's
// next turn through a Model) is what is compared; Strategies lists them.
// Every strategy, ours included, gets the same tool results: the
// recording's, passed once through Cut (Codex's cap, 10 KiB or 256 lines,
// head and tail kept); and the same fixed prefix, the one ours' agent
// builds (the recording's system prompt, the repo map it renders of the
// files the session reads whole, the tools: oursPrefix); so prefilled
// tokens compare in absolute terms. A
// row whose session stalled before its last round, or whose strategy gave
// a turn up, is a failure (Row.Failed), whatever its other figures say.
// The figures of a Row are defined on its fields and, with the session
// format, in testdata/sessions/README.md.
//
// Beyond the planted facts (each key's newest value, in the last request),
// a row measures what a user loses (Losses), from the turn requests alone,
// outside the fixed prefix (whose repo map names files the session never
// touched):
//
//   - Re-reads. A scripted model reads a file again whenever a recorded
//     round uses it (edits it, reads other lines of it) and the request it
//     answers no longer carries that file's newest read whole (shed,
//     masked, folded). The replay counts these reads and what they would
//     prefill (the read result appended again) without injecting them:
//     every strategy then answers the same recorded rounds, so its row
//     compares with the others' and with the infinite window's growth,
//     and the count is a lower bound of what a real model would do (a
//     re-read is taken to live until the next event, and a round that
//     re-reads the same lines in the recording counts none). Injected
//     rounds would make each strategy replay a different session, its
//     later rounds shifted by its own losses.
//   - The artifact trail. Every file a round changed (an edit or write
//     call's path, a diff result) should be named in every later request:
//     Trail is the share of such (request, file) pairs that are,
//     TrailWorst the lowest share in one request.
//   - Note survival. Every side call's answer (a note, a summary) is split
//     into findings: its lines, the value of a "key: value" line, the
//     items of a listed value. NotesKept is the mean share of each note's
//     findings the last request carries (only the newest is wanted of a
//     key a later note gives another value, of lines that differ only in
//     their numbers, and of "no edits made" beside a later "edits made
//     (2): …"), NotesReached the share of notes of
//     which half the findings or more reached one later request.
//
// Each replay starts its own engine on loopback and runs on the calling
// goroutine; Replay and Run are safe for concurrent use, and Run runs its
// replays in parallel. A Strategy is not safe for concurrent use. The
// package is for the benchmark and the reika-lsp replay command, not for
// the server.
package replay
