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
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reika-lsp/reika/agent/replay/synth"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run regenerates the sessions args name (all when none) and reports each
// on stdout; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reika-gensessions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("repo", ".", "the git repository (a clone with commit "+synth.SourceRev[:12]+")")
	out := fs.String("out", filepath.Join("testdata", "sessions"), "the directory to write NAME.jsonl.gz into")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: reika-gensessions [-repo DIR] [-out DIR] [NAME]…")
		fmt.Fprintf(stderr, "\nRegenerates the recorded sessions %v (default all) byte for byte.\n", synth.Names())
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
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
		raw := 0
		for _, round := range r.Rounds {
			for _, m := range round.Messages() {
				raw += len(m.Content)
			}
		}
		fmt.Fprintf(stdout, "%s: %d rounds, %d facts, %d bytes of messages, %d bytes gzipped\n",
			filepath.Join(*out, name+".jsonl.gz"), len(r.Rounds), len(r.Facts), raw, size)
	}
	return 0
}
