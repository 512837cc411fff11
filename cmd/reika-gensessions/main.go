// Command reika-gensessions regenerates the recorded sessions of
// testdata/sessions, the input of the replay benchmark (reika-lsp replay),
// byte for byte (engine-cached-tokens.jsonl.gz was recompressed by another
// tool since it was generated: its text is the same, its gzip bytes are
// not). Run it from the module root of a clone that has the commit
// synth.SourceRev:
//
//	go run ./cmd/reika-gensessions                 # all four, into testdata/sessions
//	go run ./cmd/reika-gensessions -out /tmp/s many-small
//
// It takes every file the sessions read from the repository at that commit
// (git archive), so the working tree's state does not matter. Package
// agent/replay/synth holds the generator and says what the sessions are
// made of.
//
// With -seed it writes instead the unseen sessions of those seeds, drawn
// from Go's own source tree ($(go env GOROOT)/src, or -goroot), into
// testdata/sessions/unseen unless -out says otherwise: the seeds the
// property test of agent/replay/synth printed, kept as regression sessions
// or replayed alone:
//
//	go run ./cmd/reika-gensessions -seed 1234567
//	go run ./cmd/reika-lsp replay --strategy ours --window 16k --session testdata/sessions/unseen/unseen-1234567.jsonl.gz
//
// The same seed and the same Go release give the same bytes.
//
// With -shape KIND and -seed it writes the shaped sessions of those seeds
// (synth.ShapeKinds: pytest, tap, pastes, longturn), drawn from Python's
// standard library and npm's sources on this machine, into
// testdata/sessions/shapes unless -out says otherwise:
//
//	go run ./cmd/reika-gensessions -shape pastes -seed 1234567
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reika-lsp/reika/agent/replay"
	"github.com/reika-lsp/reika/agent/replay/synth"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run regenerates the sessions args name (all when none), or writes the
// unseen sessions of -seed, and reports each on stdout; it returns the
// exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reika-gensessions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("repo", ".", "the git repository (a clone with commit "+synth.SourceRev[:12]+")")
	out := fs.String("out", "", "the directory to write NAME.jsonl.gz into (default testdata/sessions, with -seed testdata/sessions/unseen)")
	seeds := fs.String("seed", "", "write the unseen sessions of these `seeds` (comma-separated) instead")
	goroot := fs.String("goroot", "", "with -seed: the Go tree to draw from (default $(go env GOROOT))")
	shape := fs.String("shape", "", "with -seed: write the shaped sessions of this `kind` ("+strings.Join(synth.ShapeKinds, ", ")+", or delegate: the pair delegate-SEED and inline-SEED of synth.Delegation) instead of unseen ones")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: reika-gensessions [-repo DIR] [-out DIR] [NAME]…")
		fmt.Fprintln(stderr, "       reika-gensessions -seed N[,N]… [-goroot DIR] [-out DIR]")
		fmt.Fprintln(stderr, "       reika-gensessions -shape KIND -seed N[,N]… [-out DIR]")
		fmt.Fprintf(stderr, "\nRegenerates the recorded sessions %v (default all) byte for byte,\n", synth.Names())
		fmt.Fprintln(stderr, "or writes the unseen sessions of the seeds, drawn from Go's own source tree.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *seeds != "" {
		if fs.NArg() > 0 {
			fs.Usage()
			return 2
		}
		if *shape != "" {
			return writeShapes(*shape, *seeds, *repo, *out, stdout, stderr)
		}
		return writeUnseen(*seeds, *goroot, *out, stdout, stderr)
	}
	if *shape != "" {
		fmt.Fprintln(stderr, "reika-gensessions: -shape needs -seed")
		return 2
	}
	if *out == "" {
		*out = filepath.Join("testdata", "sessions")
	}
	names := fs.Args()
	if len(names) == 0 {
		names = synth.Names()
	}
	src, err := synth.LoadSource(*repo, synth.SourceRev)
	if err != nil {
		fmt.Fprintf(stderr, "reika-gensessions: %v: run it in a clone that has the commit\n", err)
		return 1
	}
	for _, name := range names {
		r, size, err := synth.WriteFile(src, *out, name)
		if err != nil {
			fmt.Fprintf(stderr, "reika-gensessions: %v\n", err)
			return 1
		}
		report(stdout, filepath.Join(*out, name+".jsonl.gz"), r, size)
	}
	return 0
}

// parseSeeds reads comma-separated decimal seeds.
func parseSeeds(seeds string) ([]uint64, error) {
	var list []uint64
	for _, s := range strings.Split(seeds, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("-seed %q: want decimal seeds, comma-separated", s)
		}
		list = append(list, n)
	}
	return list, nil
}

// writeShapes writes the shaped sessions of kind and the comma-separated
// seeds into out.
func writeShapes(kind, seeds, repo, out string, stdout, stderr io.Writer) int {
	list, err := parseSeeds(seeds)
	if err != nil {
		fmt.Fprintf(stderr, "reika-gensessions: %v\n", err)
		return 2
	}
	if out == "" {
		out = filepath.Join("testdata", "sessions", "shapes")
	}
	if kind == "delegate" {
		return writeDelegation(list, repo, out, stdout, stderr)
	}
	g, err := synth.NewShapes()
	if err == nil {
		err = os.MkdirAll(out, 0o755)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reika-gensessions: %v\n", err)
		return 1
	}
	return writeSeeds(list, out, stdout, stderr, func(seed uint64) (*replay.Recording, error) {
		s, err := g.Session(kind, seed)
		if err != nil {
			return nil, err
		}
		return s.Recording, nil
	})
}

// writeDelegation writes the delegation pair of each seed (synth.Delegation:
// delegate-SEED and inline-SEED) into out, drawn from the repository at
// synth.SourceRev.
func writeDelegation(list []uint64, repo, out string, stdout, stderr io.Writer) int {
	src, err := synth.LoadSource(repo, synth.SourceRev)
	if err == nil {
		err = os.MkdirAll(out, 0o755)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reika-gensessions: %v\n", err)
		return 1
	}
	var pairs []*replay.Recording
	for _, seed := range list {
		d, in, err := synth.Delegation(src, seed)
		if err != nil {
			fmt.Fprintf(stderr, "reika-gensessions: %v\n", err)
			return 1
		}
		pairs = append(pairs, d, in)
	}
	k := 0
	return writeSeeds(make([]uint64, len(pairs)), out, stdout, stderr, func(uint64) (*replay.Recording, error) {
		k++
		return pairs[k-1], nil
	})
}

// writeSeeds writes the session each seed makes into out, one line each
// on stdout; the first failure ends it, said on stderr.
func writeSeeds(list []uint64, out string, stdout, stderr io.Writer, session func(seed uint64) (*replay.Recording, error)) int {
	for _, seed := range list {
		r, err := session(seed)
		var size int
		if err == nil {
			size, err = synth.Write(out, r)
		}
		if err != nil {
			fmt.Fprintf(stderr, "reika-gensessions: %v\n", err)
			return 1
		}
		report(stdout, filepath.Join(out, r.Name+".jsonl.gz"), r, size)
	}
	return 0
}

// writeUnseen writes the unseen sessions of the comma-separated seeds
// into out.
func writeUnseen(seeds, goroot, out string, stdout, stderr io.Writer) int {
	var list []uint64
	for _, s := range strings.Split(seeds, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			fmt.Fprintf(stderr, "reika-gensessions: -seed %q: want decimal seeds, comma-separated\n", s)
			return 2
		}
		list = append(list, n)
	}
	if goroot == "" {
		var err error
		if goroot, err = synth.GoRoot(); err != nil {
			fmt.Fprintf(stderr, "reika-gensessions: %v: name the tree with -goroot\n", err)
			return 1
		}
	}
	if out == "" {
		out = filepath.Join("testdata", "sessions", "unseen")
	}
	u, err := synth.NewUnseen(goroot)
	if err == nil {
		err = os.MkdirAll(out, 0o755)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reika-gensessions: %v\n", err)
		return 1
	}
	return writeSeeds(list, out, stdout, stderr, func(seed uint64) (*replay.Recording, error) {
		s, err := u.Session(seed)
		if err != nil {
			return nil, err
		}
		return s.Recording, nil
	})
}

// report prints one line on the session r written to file.
func report(w io.Writer, file string, r *replay.Recording, size int) {
	raw := 0
	for _, round := range r.Rounds {
		for _, m := range round.Messages() {
			raw += len(m.Content)
		}
	}
	fmt.Fprintf(w, "%s: %d rounds, %d facts, %d bytes of messages, %d bytes gzipped (from %s)\n",
		file, len(r.Rounds), len(r.Facts), raw, size, r.Source)
}
