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
	"strconv"
	"strings"

	"github.com/reika-lsp/reika/agent/replay"
	"github.com/reika-lsp/reika/agent/sim"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*s = append(*s, part)
		}
	}
	return nil
}

// defaultReplayWindows are the windows replayed when none is given.
var defaultReplayWindows = []int{16000, 32000, 128000}

// sessionsDir is where the recorded sessions live, from the module root.
const sessionsDir = "testdata/sessions"

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var windows, budgets windowList
	var sessions, strategies stringList
	fs.Var(&windows, "window", "context window in tokens (16000 or 16k); repeat for several (default 16k, 32k and 128k)")
	fs.Var(&sessions, "session", "recorded session file (.jsonl or .jsonl.gz); repeat for several (default testdata/sessions/*)")
	fs.Var(&strategies, "strategy", "strategy to replay: "+strategyNames()+"; repeat for several (default all)")
	eng := fs.String("engine", "dense", "the simulated engine: llama.cpp serving a dense, swa (sliding-window) or recurrent model, vllm, or vllm-hybrid (vLLM serving a hybrid model: its recurrent state kept only at the last 1024-token block boundary of each prompt)")
	minStep := fs.Int("checkpoint-min-step", 0, "swa and recurrent: llama-server's --checkpoint-min-step, `tokens` (default 8192; the agent is told it too, as check advises: checkpoint_min_step)")
	slots := fs.Int("slots", 1, "llama.cpp's --parallel: with 2 or more a subagent takes a slot of its own; with 1 it shares the session's")
	reasoning := fs.String("reasoning", "", "replay as a thinking model: what the engine's chat template renders of the reasoning sent back, `drop`, turn (the current turn's) or all; a session without reasoning is given some (unset: the sessions as recorded)")
	asJSON := fs.Bool("json", false, "print the rows as a JSON array")
	fs.Var(&budgets, "kv-tokens", "replay the sessions at once, ours only, on one vLLM engine whose KV cache holds `N` tokens (what it logs as its GPU KV cache size); repeat for several, beside each session alone (one --window)")
	replicas := fs.Int("replicas", 0, "replay the sessions at once, ours only, through a simulated router of every policy (round-robin, prefix-hash, session) in front of `N` engines, with and without the session's id, beside each alone (one --window)")
	plot := fs.String("plot", "", "also draw each strategy's prompt per request, shrink events marked, to this SVG `file`")
	speeds := speedFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: reika-lsp replay [--json] [--plot FILE.svg] [--engine NAME [--checkpoint-min-step N]] [--slots N] [--reasoning drop|turn|all] [--replicas N] [--window N]… [--session FILE]… [--strategy NAME]…")
		fmt.Fprintln(stderr, "\nReplays recorded agent sessions through each context strategy against the simulated")
		fmt.Fprintln(stderr, "engine (llama.cpp serving a dense model, unless --engine says otherwise) and prints")
		fmt.Fprintln(stderr, "what each prefilled, how often it invalidated the cache,")
		fmt.Fprintln(stderr, "how full it kept the window and which planted facts it still carried at the end.")
		fmt.Fprintln(stderr, "decoded counts the tokens the engine generated (turns, notes, summaries); engine_s is")
		fmt.Fprintln(stderr, "the engine time at the given speeds: prefilled ÷ --prefill-tps + decoded ÷ --decode-tps.")
		fmt.Fprintln(stderr, "What a user loses besides: rereads, the reads a model would make again of files the")
		fmt.Fprintln(stderr, "request no longer holds, and reread_tok their prefill; trail, the share of (request,")
		fmt.Fprintln(stderr, "changed file) pairs where the request names the file, trail_min the lowest in one")
		fmt.Fprintln(stderr, "request; notes_kept, the share of each note's findings in the last request, and")
		fmt.Fprintln(stderr, "notes_seen, the share of notes half of whose findings reached a later request.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	givenWindows := len(windows)
	if givenWindows == 0 {
		windows = defaultReplayWindows
	}
	sp, err := speeds()
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp replay: %v\n", err)
		return 2
	}
	engine, err := replay.ParseEngine(*eng)
	if err == nil && *minStep < 0 {
		err = fmt.Errorf("--checkpoint-min-step %d: want a positive number of tokens", *minStep)
	}
	if err == nil && (*slots < 1 || *slots > 8) {
		err = fmt.Errorf("--slots %d: want 1 to 8", *slots)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp replay: %v\n", err)
		return 2
	}
	engine.Cache.MinStep = *minStep
	engine.Slots = *slots
	if *reasoning != "" {
		if engine.Reasoning, err = sim.ParseReasoningTemplate(*reasoning); err != nil {
			fmt.Fprintf(stderr, "reika-lsp replay: --reasoning: %v\n", err)
			return 2
		}
	}
	for _, s := range strategies {
		if !validStrategy(s) {
			fmt.Fprintf(stderr, "reika-lsp replay: unknown strategy %q: want %s\n", s, strategyNames())
			return 2
		}
	}
	if len(sessions) == 0 {
		found, err := findSessions()
		if err != nil {
			fmt.Fprintf(stderr, "reika-lsp replay: %v\n", err)
			return 1
		}
		sessions = found
	}
	var loaded []*replay.Recording
	for _, name := range sessions {
		s, err := replay.LoadRecording(name)
		if err != nil {
			fmt.Fprintf(stderr, "reika-lsp replay: %v\n", err)
			return 1
		}
		loaded = append(loaded, s)
	}
	if len(budgets) > 0 {
		if givenWindows > 1 || *replicas != 0 {
			fmt.Fprintln(stderr, "reika-lsp replay: --kv-tokens wants at most one --window, and no --replicas")
			return 2
		}
		window := 32000
		if givenWindows == 1 {
			window = windows[0]
		}
		return runKVBudget(ctx, loaded, window, budgets, *asJSON, stdout, stderr)
	}
	if *replicas != 0 {
		if *replicas < 1 || *replicas > 64 || givenWindows > 1 {
			fmt.Fprintln(stderr, "reika-lsp replay: --replicas wants 1 to 64 replicas and at most one --window")
			return 2
		}
		window := 32000
		if givenWindows == 1 {
			window = windows[0]
		}
		return runRouting(ctx, loaded, window, *replicas, engine, *asJSON, stdout, stderr)
	}
	results, err := replay.Results(ctx, replay.Options{Recordings: loaded, Windows: windows, Strategies: strategies, Speeds: sp, Engine: engine})
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp replay: %v\n", err)
		return 1
	}
	rows := make([]replay.Row, len(results))
	for i, r := range results {
		rows[i] = r.Row
	}
	if *plot != "" {
		if err := writePlotFile(*plot, results); err != nil {
			fmt.Fprintf(stderr, "reika-lsp replay: %v\n", err)
			return 1
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			fmt.Fprintf(stderr, "reika-lsp replay: %v\n", err)
			return 1
		}
		return failedRows(rows, stderr)
	}
	printReplayRows(stdout, rows)
	printSubagentRows(stdout, rows)
	return failedRows(rows, stderr)
}

// failedRows says which rows failed — a session that stopped before its
// last round, or gave a turn up, is a failure, never a good figure — and
// gives the exit code.
func failedRows(rows []replay.Row, stderr io.Writer) int {
	code := 0
	for _, r := range rows {
		if r.Stalled > 0 {
			fmt.Fprintf(stderr, "reika-lsp replay: %s on %s at %d tokens stalled at round %d\n", r.Strategy, r.Session, r.Window, r.Stalled)
		}
		if r.Skipped > 0 {
			fmt.Fprintf(stderr, "reika-lsp replay: %s on %s at %d tokens gave up %d turns: the engine refused every request it made for them\n",
				r.Strategy, r.Session, r.Window, r.Skipped)
		}
		if r.Failed() {
			code = 1
		}
	}
	return code
}

// noteShare prints a share of a row's notes, "-" when it asked for none.
func noteShare(r replay.Row, share float64) string {
	if r.Notes == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", share)
}

func validStrategy(name string) bool {
	for _, s := range replay.Strategies {
		if s.Name == name {
			return true
		}
	}
	return false
}

func strategyNames() string {
	var names []string
	for _, s := range replay.Strategies {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// findSessions lists the recorded sessions of testdata/sessions, looking
// from the working directory up to the module root.
func findSessions() ([]string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		names, _ := filepath.Glob(filepath.Join(dir, sessionsDir, "*.jsonl*"))
		if len(names) > 0 {
			return names, nil
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return nil, errors.New("no sessions found in " + sessionsDir + ": run from the repository, or name them with --session")
}

// printReplayRows prints the rows as an aligned table: names to the left,
// numbers to the right.
// printSubagentRows says, for the rows of sessions that ran subagents,
// what the session itself prefilled and what its subagents did.
func printSubagentRows(w io.Writer, rows []replay.Row) {
	for _, r := range rows {
		if r.SubPrefilled > 0 {
			fmt.Fprintf(w, "%s %d %s: the session prefilled %d tokens itself, its subagents %d (%d in all)\n",
				r.Strategy, r.Window, r.Session, r.Prefilled-r.SubPrefilled, r.SubPrefilled, r.Prefilled)
		}
	}
}

func printReplayRows(w io.Writer, rows []replay.Row) {
	table := [][]string{{"strategy", "window", "session", "prefilled", "growth", "ratio", "events", "live_mean",
		"peak_ratio", "overflows", "facts_kept", "requests", "prefill_s", "decoded", "engine_s",
		"rereads", "reread_tok", "trail", "trail_min", "notes_kept", "notes_seen"}}
	for _, r := range rows {
		ratio := fmt.Sprintf("%.2f", r.Ratio)
		switch {
		case r.Stalled > 0:
			ratio = fmt.Sprintf("STALLED@%d", r.Stalled)
		case r.Skipped > 0:
			ratio = fmt.Sprintf("SKIPPED:%d", r.Skipped)
		}
		table = append(table, []string{r.Strategy, strconv.Itoa(r.Window), r.Session, strconv.Itoa(r.Prefilled),
			strconv.Itoa(r.Growth), ratio, strconv.Itoa(r.Events), fmt.Sprintf("%.2f", r.LiveMean),
			fmt.Sprintf("%.2f", r.PeakRatio), strconv.Itoa(r.Overflows), fmt.Sprintf("%.2f", r.FactsKept),
			strconv.Itoa(r.Requests), fmt.Sprintf("%.1f", r.PrefillSeconds), strconv.Itoa(r.Decoded),
			fmt.Sprintf("%.1f", r.EngineSeconds), strconv.Itoa(r.ReReads), strconv.Itoa(r.ReReadTokens),
			fmt.Sprintf("%.2f", r.Trail), fmt.Sprintf("%.2f", r.TrailWorst), noteShare(r, r.NotesKept),
			noteShare(r, r.NotesReached)})
	}
	left := map[int]bool{0: true, 2: true}
	width := make([]int, len(table[0]))
	for _, row := range table {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	for _, row := range table {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len(c))
			if left[i] {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
