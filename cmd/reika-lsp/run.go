package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/sim"
)

const runUsage = `usage: reika-lsp run [flags] "instruction"
       reika-lsp run [flags] - < instruction.txt

Runs one instruction with the configured engine (the config file, its
profile and REIKA_* as the server reads them) in the current folder, or
--dir, with nobody to ask: a headless run for scripts and CI.

Edits apply to the files on disk as they are now (placed by the rule the
editors use), each written whole with a rename; a protected path (.git,
CI, hooks, editor and agent config…) is never changed, and the model is
told. Everything else that would ask the user is refused, and the model is
told which flag would allow it:
  --allow-commands  commands off the allow list run in the sandbox, as if
                    the user allowed them for this run (never outside it;
                    without a sandbox on this machine they stay refused)
  --allow-network   fetch_url may reach new hosts (it is offered when the
                    settings enable it: "fetch", REIKA_FETCH); with
                    --allow-commands, a command may ask for the network

Output: the answer on stdout; one line per tool call, approval, shed, fold
and warning on stderr, and a last line saying how the run ended, the files
it changed and the transcript. With --json, stdout is one JSON object a
line instead, each with "kind" and the fields that kind uses:
  round_started  round, chip {size, window, shed_point, percent, warn}
  chip           round, chip
  tool_started   round, tool, call_id, args
  tool_ran       round, tool, call_id, detail, result, failed (true when it failed)
  proposal       round, call_id, path, applied, diff
  approval       round, question (command|fetch|protected|left|edit), subject,
                 why, allowed, text (what the model was told when refused)
  note           round, text (the model's note before a fold)
  shed           round, items, chars, emergency
  fold           round, folded, recap_chars, emergency
  warning        round, text, retry, emergency
  subagent       round, call_id (the subagent call's), text (one of its steps)
  tasks          round, tasks [{text, status (pending|done|claimed), seen}]:
                 the steps a reply listed, done only where Reika saw it
  waiting, activity, replied, debug          round, text
  text, reasoning                            round, text (pieces as they stream)
and last one of
  finished       end ("answered"), answer, rounds, files_changed, transcript
  failed         end ("canceled", "step_limit", "engine_failed",
                 "too_small", "start_failed", "interrupted", "timeout"),
                 error, answer, rounds, files_changed, transcript
Fields of a kind that are empty are left out; files_changed is always there.

Exit status: 0 when the model answered; 1 when the run failed (the engine
is down or refused, the window is too small, the step limit or --timeout
was reached); 2 for a usage error; 130 after SIGINT and 143 after SIGTERM,
which cancel the run and keep its transcript (a run that answered before
the signal exits 0).

Flags:
`

// runOptions are the flags of `reika-lsp run`.
type runOptions struct {
	dir           string
	sim           bool
	simScript     string
	asJSON        bool
	allowCommands bool
	allowNetwork  bool
	maxSteps      int
	noTranscript  bool
	timeout       time.Duration
	instruction   string
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runMain(ctx, args, os.Stdin, os.Getenv, stdout, stderr)
}

// runMain is `reika-lsp run` with its inputs given: the standard input
// (for the instruction "-") and the environment.
func runMain(ctx context.Context, args []string, stdin io.Reader, getenv func(string) string, stdout, stderr io.Writer) int {
	opts, code := parseRunFlags(args, stdin, stdout, stderr)
	if code >= 0 {
		return code
	}
	out := newRunPrinter(opts.asJSON, stdout, stderr)
	// The run ends at SIGINT or SIGTERM, and which one decides the exit
	// status: it is noted before the run is cancelled, so the run's last
	// line names it. main's context (which ends at either) is not the
	// run's, so that nothing cancels it before the signal is noted.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	sigDone := make(chan struct{})
	go func() {
		defer close(sigDone)
		select {
		case s := <-sigs:
			out.signalled(s)
			cancel()
		case <-ctx.Done():
		}
	}()
	err := headless(ctx, opts, getenv, out)
	cancel()
	<-sigDone
	switch sig := out.signal(); {
	case err == nil:
		return 0
	case sig == os.Interrupt:
		return 130
	case sig == syscall.SIGTERM:
		return 143
	}
	return 1
}

// parseRunFlags reads the command line; code is the exit status when the
// command ends here (help, a usage error), else -1.
func parseRunFlags(args []string, stdin io.Reader, stdout, stderr io.Writer) (runOptions, int) {
	var o runOptions
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.dir, "dir", ".", "the workspace root the run works in")
	fs.BoolVar(&o.sim, "sim", false, "run against the built-in simulated engine, started on a free loopback port (no model needed); it answers briefly, or as --sim-script says, and never edits on its own")
	fs.StringVar(&o.simScript, "sim-script", "", "the simulated engine's scripted replies (JSON array or JSONL, as for reika-lsp sim --script); implies --sim")
	fs.BoolVar(&o.asJSON, "json", false, "print every event as one JSON line on stdout (see above)")
	fs.BoolVar(&o.allowCommands, "allow-commands", false, "run the commands that would ask, in the sandbox")
	fs.BoolVar(&o.allowNetwork, "allow-network", false, "let fetch_url reach new hosts, and commands ask for the network (with --allow-commands)")
	fs.IntVar(&o.maxSteps, "max-steps", 0, "the most rounds the run may take (0: the agent's limit, 200)")
	fs.BoolVar(&o.noTranscript, "no-transcript", false, "keep no transcript (else it is written as for other sessions, for reika.resume)")
	fs.DurationVar(&o.timeout, "timeout", 0, "cancel the run after this long (0: no limit)")
	fs.Usage = func() {
		fmt.Fprint(stderr, runUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprint(stdout, runUsage)
			fs.PrintDefaults()
			return o, 0
		}
		return o, 2
	}
	usageErr := func(format string, a ...any) (runOptions, int) {
		fmt.Fprintf(stderr, "reika-lsp run: "+format+" (run reika-lsp run -h for the flags)\n", a...)
		return o, 2
	}
	switch {
	case fs.NArg() == 0:
		return usageErr("no instruction: give it as the argument, or - to read it from stdin")
	case fs.NArg() > 1:
		return usageErr("one instruction, in quotes: got %d arguments", fs.NArg())
	case o.maxSteps < 0 || o.timeout < 0:
		return usageErr("--max-steps and --timeout must not be negative")
	}
	o.instruction = fs.Arg(0)
	if o.instruction == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "reika-lsp run: reading the instruction from stdin: %v\n", err)
			return o, 1
		}
		o.instruction = string(b)
	}
	if strings.TrimSpace(o.instruction) == "" {
		return usageErr("the instruction is empty")
	}
	if o.simScript != "" {
		o.sim = true
	}
	return o, -1
}

// headless starts the session and runs the instruction; the printer has
// said how it ended by the time it returns. The error is nil only when
// the model answered.
func headless(ctx context.Context, o runOptions, getenv func(string) string, out *runPrinter) error {
	if o.timeout > 0 {
		// Cancelled, not past a deadline: the engine client takes a
		// deadline for the engine's own timeout.
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		stop := time.AfterFunc(o.timeout, func() { cancel(errRunTimeout) })
		defer stop.Stop()
	}
	root, err := absDir(o.dir)
	if err != nil {
		return out.startFailed(fmt.Errorf("--dir: %w", err))
	}
	setup, stopSim, err := runSetup(ctx, o, root, getenv)
	if err != nil {
		return out.startFailed(err)
	}
	defer stopSim()
	disk := newDiskEdits(root)
	appr := &approvals{commands: o.allowCommands, network: o.allowNetwork, report: out.approval}
	setup.Proposer, setup.Ask, setup.Unasked = disk.propose, appr.ask, appr.refusal
	sess, err := agent.Start(ctx, setup)
	if err != nil {
		if context.Cause(ctx) == errRunTimeout {
			out.timeout()
		}
		return out.startFailed(err)
	}
	defer sess.Close()
	appr.sandboxed = sess.Info().Sandbox.On
	for _, n := range sess.Info().Notices {
		if n.Warning {
			out.warning(n.Text)
		}
	}
	res, err := sess.Run(ctx, o.instruction, out.event)
	if err != nil && context.Cause(ctx) == errRunTimeout {
		res.End, err = agent.Canceled, fmt.Errorf("the run reached its --timeout of %s", o.timeout)
		out.timeout()
	}
	out.finish(res, err, disk.changed(), sess.TranscriptPath())
	return err
}

// runSetup is the session a language server would start on root, with
// the flags' changes, and the simulated engine it runs against (--sim);
// stop ends that engine.
func runSetup(ctx context.Context, o runOptions, root string, getenv func(string) string) (agent.Setup, func(), error) {
	st := agent.Setup{Getenv: getenv, Folders: []string{root}, MaxSteps: o.maxSteps}
	if o.noTranscript {
		st.StateDir = agent.NoTranscript
	}
	stop := func() {}
	if o.sim {
		// No Root: the simulator's own policy would explore and edit the
		// workspace, and here the edits land on the disk. It answers as
		// the script says, then (or at once) briefly, as for check --sim.
		cfg := sim.Config{Ctx: 16384}
		if o.simScript != "" {
			turns, err := sim.LoadScript(o.simScript)
			if err != nil {
				return st, stop, fmt.Errorf("--sim-script: %w", err)
			}
			cfg.Script = turns
		}
		_, base, stopSim, err := startSim(ctx, cfg)
		if err != nil {
			return st, stop, err
		}
		stop = stopSim
		st.Override = func(s *config.Settings) {
			s.Endpoint = config.Value[string]{Value: base, Source: config.Source{Layer: config.Flag, Detail: "--sim: the built-in simulated engine"}}
		}
	}
	return st, stop, nil
}
