// Package synth generates the recorded sessions of testdata/sessions, the
// replay benchmark's input. They are synthetic, not captured from a model:
// each is built from a recipe (a task, the package it works in, the files
// it edits, the facts it plants and where, a seed) and from the
// repository's own files at the commit SourceRev, taken through git
// archive, so later changes to the tree do not change them. Reads show
// real files (numbered, cat -n style), greps real matches, test logs real
// test names; edits apply to a working copy that later reads show.
//
// The same commit and the same seeds give the same bytes:
//
//	src, err := synth.LoadSource(".", synth.SourceRev) // a clone that has the commit
//	rec, err := synth.Generate(src, "many-small")
//	err = synth.Encode(w, rec) // what testdata/sessions/many-small.jsonl.gz holds
//
// The reika-gensessions command (go run ./cmd/reika-gensessions) rewrites
// testdata/sessions with them.
//
// The unseen sessions are the sessions nobody tuned for: each is drawn
// from a seed out of another codebase, Go's own source tree (a tree of
// GOROOT/src and a package in it at random, LoadTree), by a recipe drawn
// from the same seed (unseen.go). The same seed and the same Go release
// give the same bytes:
//
//	root, err := synth.GoRoot()          // $(go env GOROOT)
//	u, err := synth.NewUnseen(root)
//	s, err := u.Session(1234567)        // s.Recording, and s.Where of each fact
//
// TestUnseenReplay, the property test, replays fresh seeds through ours at
// 12k, 16k and 32k and prints the seeds that break facts ≥ 0.95, no stall,
// no overflow; reika-gensessions -seed writes one as a session file.
//
// The files of the package follow the recording's parts: source.go (the
// repository at SourceRev, or a tree), recipes.go (the four sessions),
// unseen.go (the unseen sessions' recipes), prefix.go (system prompt,
// tools, repo map), builder.go (a round and its calls), steps.go (what
// each round does, by session kind), reads.go (reads, greps, listings),
// commands.go (notes, edits, short commands) and logs.go (long test and
// build logs).
//
// A Source is read-only once loaded and safe for concurrent use, and so is
// an Unseen; each Generate or Session call builds its recording alone.
package synth
