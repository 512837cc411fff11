// Command reika-lsp is the Reika language server and its tools.
//
//	reika-lsp                         speak LSP on stdio (what an editor starts)
//	reika-lsp acp                     speak the Agent Client Protocol on stdio
//	reika-lsp run [flags] "instruction" one headless run, for scripts and CI
//	reika-lsp check [--json]          diagnose the engine setup
//	reika-lsp budget --window N       show how a window is divided
//	reika-lsp sim --listen ADDR ...   run the simulated engine
//	reika-lsp map [--budget N] FILE…  print the repo map of these files
//
// See README.md for the full list.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/reika-lsp/reika/agent/sandbox"
	"github.com/reika-lsp/reika/lsp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// A command runs one subcommand and returns the process exit code.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"serve", "speak LSP on stdin and stdout (the default: what an editor starts)", runServe},
		{"acp", "speak the Agent Client Protocol on stdin and stdout (Zed, CodeCompanion, agent-shell)", runACP},
		{"budget", "show how a context window is divided (--window N [--reserve G] [--json])", runBudget},
		{"run", "run one instruction headless in this folder, edits to the disk, nothing asked (for scripts and CI; --json for events)", runRun},
		{"demo", "run a long agent session against the built-in simulated engine (no model needed)", runDemo},
		{"replay", "replay recorded sessions through several context strategies on the simulated engine and compare them", runReplay},
		{"check", "diagnose the configuration and the engine (--json for a machine-readable report)", runCheck},
		{"sim", "run the simulated engine, an OpenAI-compatible server for trying Reika without a model", runSim},
		{"version", "print the version (what editors' health checks read)", runVersion},
		{"map", "print the repo map the model would get for these files ([--budget N | --window W] FILE|DIR…)", runMap},
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return runServe(ctx, nil, stdout, stderr)
	}
	name := args[0]
	if name == "--version" {
		return runVersion(ctx, nil, stdout, stderr)
	}
	if name == sandbox.GoCacheCommand { // hidden: GOCACHEPROG of contained go commands
		return sandbox.RunGoCache(args[1:], os.Stdin, stdout, stderr)
	}
	if name == "help" || name == "-h" || name == "--help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "reika-lsp: unknown command %q; run reika-lsp help\n", name)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: reika-lsp COMMAND [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run reika-lsp COMMAND -h for a command's flags.")
}

// runVersion prints "reika-lsp VERSION".
func runVersion(_ context.Context, _ []string, stdout, _ io.Writer) int {
	fmt.Fprintf(stdout, "reika-lsp %s\n", lsp.Version)
	return 0
}
