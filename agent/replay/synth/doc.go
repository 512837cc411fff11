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
// The shaped sessions (shapes.go) are of the shapes users have that
// neither kind above has: a Python codebase with pytest logs and a
// JavaScript one with TAP logs whose failure block, facts inside it, sits
// 8–14 lines above the log's end; a chat of 24 user turns each pasting
// 1.5–4 KB of CI output or a stack trace, one of them correcting a value
// an earlier one gave; one turn of 1,500 rounds or more and 35 facts or
// more. They are drawn from a seed out of this machine's Python standard
// library (python3's) and npm's sources (npm root -g), and NewShapes fails,
// naming what is missing, when either is absent:
//
//	g, err := synth.NewShapes()
//	s, err := g.Session("pastes", 1234567) // s.Recording, s.Where of each fact
//
// TestShapeReplay replays them through ours at 12k, 16k and 32k (-shapes N
// seeds a kind, the 1,500-round turn under -shapes-long);
// reika-gensessions -shape KIND -seed N writes one.
//
// The files of the package follow the recording's parts: source.go (the
// repository at SourceRev, or a tree), recipes.go (the four sessions),
// unseen.go (the unseen sessions' recipes), prefix.go (system prompt,
// tools, repo map), builder.go (a round and its calls), steps.go (what
// each round does, by session kind), reads.go (reads, greps, listings),
// commands.go (notes, edits, short commands), logs.go (long test and
// build logs), and shapes.go, shapelang.go and shapefacts.go (the shaped
// sessions, their languages and their facts).
//
// A Source is read-only once loaded and safe for concurrent use, and so is
// an Unseen; each Generate or Session call builds its recording alone.
package synth
