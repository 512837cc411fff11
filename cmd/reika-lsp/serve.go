package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/lsp"
)

// runServe speaks LSP on stdin and stdout: what an editor starts.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: reika-lsp [serve]")
		fmt.Fprintln(stderr, "\nSpeaks the Language Server Protocol on stdin and stdout; editors start it this way.")
		fmt.Fprintln(stderr, "Settings come from the config file, REIKA_* variables and the editor (see README.md).")
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// Commands the agent runs must not read the server's environment
	// (the API key) through /proc.
	if err := agent.HideEnvironment(); err != nil {
		fmt.Fprintf(stderr, "reika-lsp: cannot hide the environment from commands: %v\n", err)
	}
	if err := lsp.Serve(ctx, stdio{os.Stdin, os.Stdout}, lsp.Options{Log: stderr}); err != nil {
		fmt.Fprintf(stderr, "reika-lsp: %v\n", err)
		return 1
	}
	return 0
}

// stdio joins stdin and stdout into one stream.
type stdio struct {
	io.Reader
	io.Writer
}

func (stdio) Close() error { return nil }
