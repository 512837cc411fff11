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
// head and tail kept), so prefilled tokens compare in absolute terms. A
// row whose session stalled before its last round, or whose strategy gave
// a turn up, is a failure (Row.Failed), whatever its other figures say.
// The figures of a Row are defined on its fields and, with the session
// format, in testdata/sessions/README.md.
//
// Each replay starts its own engine on loopback and runs on the calling
// goroutine; Replay and Run are safe for concurrent use, and Run runs its
// replays in parallel. A Strategy is not safe for concurrent use. The
// package is for the benchmark and the reika-lsp replay command, not for
// the server.
package replay
