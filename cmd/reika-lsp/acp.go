package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/reika-lsp/reika/acp"
	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/lsp"
)

// runACP speaks the Agent Client Protocol on stdin and stdout: what an
// editor that shows the conversation itself (Zed, CodeCompanion,
// agent-shell) starts.
func runACP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("acp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: reika-lsp acp")
		fmt.Fprintln(stderr, "\nSpeaks the Agent Client Protocol on stdin and stdout; editors that show an agent's conversation start it this way.")
		fmt.Fprintln(stderr, "Settings come from the config file and REIKA_* variables (see README.md).")
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "reika-lsp acp: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := agent.HideEnvironment(); err != nil {
		fmt.Fprintf(stderr, "reika-lsp: cannot hide the environment from commands: %v\n", err)
	}
	if err := acp.Serve(ctx, os.Stdin, stdout, acp.Options{Log: stderr, Version: lsp.Version}); err != nil {
		fmt.Fprintf(stderr, "reika-lsp acp: %v\n", err)
		return 1
	}
	return 0
}
