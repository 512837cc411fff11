package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/replay"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
	"github.com/reika-lsp/reika/repomap"
)

// demoTask is the instruction of the demo session. "rounds=N" tells the
// simulated engine's policy how long to explore.
const demoTask = "Review how this repository's engine client and context manager handle errors, " +
	"and propose small improvements where an error loses information. rounds=%d"

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 160, "tool rounds the simulated model explores before answering")
	window := fs.Int("window", 16384, "the simulated engine's context window, in tokens")
	root := fs.String("root", ".", "the directory the session works on (read only: proposals stay in memory)")
	debug := fs.Bool("debug", false, "print the prefix-cache line of every request")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: reika-lsp demo [--rounds N] [--window N] [--root DIR] [--debug]")
		fmt.Fprintln(stderr, "\nRuns a long agent session against the built-in simulated engine, in this process,")
		fmt.Fprintln(stderr, "over the real files of --root: no model, no network, nothing written to disk.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *rounds < 1 || *window < 1024 {
		fmt.Fprintln(stderr, "reika-lsp demo: --rounds must be at least 1 and --window at least 1024")
		return 2
	}
	d, err := startDemo(ctx, *root, *window, *rounds)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp demo: %v\n", err)
		return 1
	}
	defer d.stop()
	return d.run(ctx, *rounds, *debug, stdout, stderr)
}

// demo is a simulated engine, the tools over a read-only workspace with an
// in-memory overlay for proposals, and an agent session.
type demo struct {
	root    string
	base    string
	srv     *sim.Server
	session *agent.Session
	overlay *overlay
	repo    *repomap.Map // learns the files the agent reads, as the server's does
	// timedOut counts the files whose parse ran over the map's time limit
	// (a busy machine): the map, and so every request, lists them by
	// name only, and the figures differ from another run's.
	timedOut int
	stop     func()
}

func startDemo(ctx context.Context, root string, window, rounds int) (*demo, error) {
	abs, err := absDir(root)
	if err != nil {
		return nil, err
	}
	srv, base, stopSim, err := startSim(ctx, sim.Config{Ctx: window, Root: abs, PolicyRounds: rounds})
	if err != nil {
		return nil, err
	}
	d := &demo{root: abs, base: base, srv: srv, overlay: newOverlay(), repo: repomap.New()}
	d.stop = func() { stopSim(); d.repo.Close() }
	// The map starts from the files an editor would show it — here every
	// source file of the root, as if all were open — and learns the files
	// the agent reads.
	files, _, err := mapFiles([]string{abs})
	if err != nil {
		d.stop()
		return nil, err
	}
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			if rel, err := filepath.Rel(abs, p); err == nil {
				d.repo.Update(filepath.ToSlash(rel), data)
			}
		}
	}
	d.timedOut = timedOut(d.repo)
	zero := 0.0
	d.session, err = agent.Start(ctx, agent.Setup{
		// The demo is the same session a language server starts, with no
		// editor around it: nothing from the user's config file or
		// environment, the simulated engine as the endpoint, no transcript.
		Getenv:     func(string) string { return "" },
		ConfigFile: agent.NoConfigFile,
		Override: func(s *config.Settings) {
			flag := config.Source{Layer: config.Flag, Detail: "reika-lsp demo"}
			s.Endpoint = config.Value[string]{Value: base, Source: flag}
			// The simulated model runs read-only commands.
			s.BashAllow = config.Value[[]string]{Value: []string{"wc -l", "ls -la", "ls", "git log --oneline", "head -n"}, Source: flag}
			s.Debug = config.Value[bool]{Value: true, Source: flag}
		},
		Folders:     []string{abs},
		Buffers:     d.overlay,
		Proposer:    d.overlay.accept,
		StateDir:    agent.NoTranscript,
		RepoMap:     agent.MapFiles(d.repo),
		MaxSteps:    rounds + 40,
		Temperature: &zero,
	})
	if err != nil {
		d.stop()
		return nil, err
	}
	stop := d.stop
	d.stop = func() { d.session.Close(); stop() }
	return d, nil
}

func (d *demo) run(ctx context.Context, rounds int, debug bool, stdout, stderr io.Writer) int {
	start := time.Now()
	fmt.Fprintf(stdout, "reika demo: the simulated engine on %s (window %d tokens), the agent working on %s\n",
		d.base, d.srv.Config().Ctx, d.root)
	fmt.Fprintf(stdout, "budget: %s\n\n", budgetLine(d.session.Budget()))
	if d.timedOut > 0 {
		fmt.Fprintf(stderr, "reika-lsp demo: the repo map lists %s by name only: their parse %s (a busy machine)\n", fileCount(d.timedOut), repomap.NoteTimedOut)
	}

	var (
		line   []string
		chip   contextwin.Chip
		round  int
		events int
	)
	flush := func() {
		if round > 0 {
			fmt.Fprintf(stdout, "%4d  %-28s %s\n", round, chip.String(), strings.Join(line, "; "))
		}
		line = line[:0]
	}
	report := func(e agent.Event) {
		switch e.Kind {
		case agent.RoundStarted:
			flush()
			round, chip = e.Round, e.Chip
		case agent.ChipChanged:
			chip = e.Chip
		case agent.ToolRan:
			line = append(line, e.Tool+" "+clipWithEllipsis(e.Detail, 48))
		case agent.NoteWritten:
			flush()
			fmt.Fprintf(stdout, "      note: %s\n", clipWithEllipsis(strings.ReplaceAll(e.Text, "\n", " "), 110))
		case agent.Shed:
			events++
			fmt.Fprintf(stdout, "      ▸ %s\n", e)
		case agent.Folded:
			fmt.Fprintf(stdout, "      ▸ %s\n", e)
		case agent.Warning:
			fmt.Fprintf(stdout, "      ! %s\n", e.Text)
		case agent.Debug:
			if debug {
				fmt.Fprintf(stdout, "      %s\n", e.Text)
			}
		}
	}
	if d.session.Info().Settings.Warmup.Value {
		// As the server does before the user's first ask.
		if err := d.session.Warmup(ctx); err != nil {
			fmt.Fprintf(stdout, "      ! %v\n", err)
		}
	}
	res, err := d.session.Run(ctx, fmt.Sprintf(demoTask, rounds), report)
	flush()
	st := d.session.Stats()
	// The engine records a request when its handler returns, which may be
	// after the session has its answer: the bound counts them all.
	settle, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	recs, serr := d.srv.Settled(settle)
	cancel()
	if serr != nil {
		fmt.Fprintf(stderr, "reika-lsp demo: the lower bound counts what the engine recorded: %v\n", serr)
	}
	lower := lowerBound(recs)
	fmt.Fprintln(stdout)
	if err == nil {
		fmt.Fprintf(stdout, "answer: %s\n\n", clipWithEllipsis(strings.ReplaceAll(res.Answer, "\n", " "), 300))
	}
	fmt.Fprintf(stdout, "rounds            %d\n", res.Rounds)
	fmt.Fprintf(stdout, "requests          %d (%d notes)\n", st.Requests, st.Notes)
	fmt.Fprintf(stdout, "shrink events     %d (%d with a fold)\n", st.Events, st.Folds)
	fmt.Fprintf(stdout, "prefilled anew    %d tokens against a lower bound of %d (%.1f×); %d more came from the prefix cache\n",
		st.Prefilled, lower, float64(st.Prefilled)/float64(max(lower, 1)), st.Reused)
	sp := replay.DefaultSpeeds
	fmt.Fprintf(stdout, "decoded           %d tokens generated by the engine (the model's turns and notes)\n", st.Decoded)
	fmt.Fprintf(stdout, "engine time       %.1fs at %g prefilled and %g decoded tokens a second (prefilled ÷ %g + decoded ÷ %g)\n",
		sp.Seconds(st.Prefilled, st.Decoded), sp.Prefill, sp.Decode, sp.Prefill, sp.Decode)
	fmt.Fprintf(stdout, "overflows         %d\n", st.Overflows)
	fmt.Fprintf(stdout, "proposals         %d (kept in memory; nothing was written)\n", len(res.Proposals))
	fmt.Fprintf(stdout, "took              %.1fs\n", time.Since(start).Seconds())
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp demo: the run ended: %v\n", err)
		return 1
	}
	return 0
}

// lowerBound is what an infinite window would have prefilled for the
// same conversation: the first request whole, then for every later round
// only the messages it added, as sent — counted by the simulated engine's
// own tokenizer from the requests it received (recs, in the order they
// came). Note rounds add nothing to the conversation and count for
// nothing.
func lowerBound(recs []sim.RequestRecord) int {
	type body struct {
		Messages   []json.RawMessage `json:"messages"`
		Tools      json.RawMessage   `json:"tools"`
		ToolChoice string            `json:"tool_choice"`
	}
	total := 0
	var prev map[string]bool
	for _, r := range recs {
		var b body
		if json.Unmarshal(r.Body, &b) != nil || len(b.Messages) == 0 || b.ToolChoice == "none" || r.MaxTokens == 1 {
			continue
		}
		if prev == nil {
			total += r.PromptTokens
		} else {
			k := len(b.Messages)
			for k > 0 && !prev[string(b.Messages[k-1])] {
				k--
			}
			added, _ := json.Marshal(map[string]any{"messages": b.Messages[k:]})
			n, _ := sim.CountPrompt(added)
			total += n
		}
		prev = make(map[string]bool, len(b.Messages))
		for _, m := range b.Messages {
			prev[string(m)] = true
		}
	}
	return total
}

func budgetLine(b contextwin.Budget) string {
	return fmt.Sprintf("window %d, reserve %d, shed point %d, shed target %d, fold keeps %d, recap %d",
		b.Window, b.Reserve, b.ShedPoint, b.ShedTarget, b.FoldKeeps, b.Recap)
}

// clipWithEllipsis cuts s to at most n bytes, on a character's boundary,
// and marks the cut with "…"; a shorter s is returned as it is.
func clipWithEllipsis(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func absDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", errors.New(dir + " is not a directory")
	}
	return abs, nil
}

// overlay holds the demo's accepted proposals in memory: reads see them,
// the disk never does.
type overlay struct {
	mu    sync.Mutex
	files map[string]string
	vers  map[string]int32
}

func newOverlay() *overlay {
	return &overlay{files: map[string]string{}, vers: map[string]int32{}}
}

func (o *overlay) Open(abs string) (string, int32, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t, ok := o.files[abs]
	return t, o.vers[abs], ok
}

func (o *overlay) accept(_ context.Context, p tools.Proposal) (tools.Outcome, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.files[p.Abs] = p.New
	o.vers[p.Abs]++
	return tools.Outcome{Applied: true}, nil
}
