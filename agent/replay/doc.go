// Package replay measures context strategies against recorded agent
// sessions: it replays each session, round by round, through a strategy —
// Reika's own contextwin (ours) and the peers' (sliding window,
// summarize-when-full, observation masking, the second seed's layered
// budget) — against the simulated llama.cpp engine, sending every request
// with the real engine client, and reads the engine's own figures: what it
// prefilled, what its cache kept, what it refused.
//
//	s, _ := replay.LoadSession("testdata/sessions/fold-orphans.jsonl.gz")
//	rows, err := replay.Run(ctx, replay.Options{Sessions: []*replay.Session{s}, Windows: []int{16000, 32000}})
//
// Each replay starts its own engine on loopback and runs on the calling
// goroutine; Run runs replays in parallel. The package is meant for
// benchmarks and the reika-lsp replay command, not for the server.
package replay
