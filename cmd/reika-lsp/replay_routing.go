package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/reika-lsp/reika/agent/replay"
	"github.com/reika-lsp/reika/agent/sim"
)

// runRouting replays the sessions at once through a simulated router of
// every policy in front of replicas engines (replay --replicas N) and
// prints each session's cache reuse beside what it reuses alone.
func runRouting(ctx context.Context, recs []*replay.Recording, window, replicas int, e replay.Engine, asJSON bool, stdout, stderr io.Writer) int {
	rows, err := replay.Routing(ctx, recs, window, replicas, e)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp replay: %v\n", err)
		return 1
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rows)
		return 0
	}
	printRouting(stdout, rows, fmt.Sprintf("%d sessions at once through a router of %d replicas (one slot each), window %d", len(recs), replicas, window))
	return 0
}

// runKVBudget replays the sessions at once on one vLLM engine of each
// KV cache size (replay --kv-tokens N…) and prints each session's cache
// reuse beside what it reuses alone on the same engine unbounded.
func runKVBudget(ctx context.Context, recs []*replay.Recording, window int, budgets []int, asJSON bool, stdout, stderr io.Writer) int {
	e := replay.Engine{Flavor: sim.VLLM}
	res, err := replay.Results(ctx, replay.Options{Recordings: recs, Windows: []int{window}, Strategies: []string{"ours"}, Engine: e, Parallel: 1})
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp replay: %v\n", err)
		return 1
	}
	base := replay.RoutingRow{Route: "single engine", SessionID: true}
	for _, r := range res {
		base.Sessions = append(base.Sessions, replay.ReuseOf(r))
	}
	rows, err := replay.KVBudget(ctx, recs, window, e, budgets)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp replay: %v\n", err)
		return 1
	}
	rows = append([]replay.RoutingRow{base}, rows...)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rows)
		return 0
	}
	printRouting(stdout, rows, fmt.Sprintf("%d sessions at once on one vLLM engine of a KV cache of N tokens (kv N), window %d; single engine: each alone, unbounded", len(recs), window))
	return 0
}

// printRouting prints one line per policy: each session's share of its
// prompt tokens the engine took from its cache, and the mean loss against
// the single engine (the first row), in points.
func printRouting(w io.Writer, rows []replay.RoutingRow, title string) {
	fmt.Fprintf(w, "%s: cache reuse per session, prefilled tokens in brackets\n\n", title)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "route\tsession id\t")
	for _, s := range rows[0].Sessions {
		fmt.Fprintf(tw, "%s\t", s.Session)
	}
	fmt.Fprintln(tw, "loss vs alone\t")
	for _, r := range rows {
		id := "sent"
		switch {
		case r.Route == "single engine":
			id = "-"
		case !r.SessionID:
			id = "not sent"
		}
		fmt.Fprintf(tw, "%s\t%s\t", r.Route, id)
		loss := 0.0
		for i, s := range r.Sessions {
			mark := ""
			if s.Stalled > 0 {
				mark = fmt.Sprintf(", stalled at %d", s.Stalled)
			}
			fmt.Fprintf(tw, "%.1f%% (%d%s)\t", 100*s.Share(), s.Prefilled, mark)
			loss += rows[0].Sessions[i].Share() - s.Share()
		}
		if r.Route == "single engine" {
			fmt.Fprintln(tw, "-\t")
			continue
		}
		fmt.Fprintf(tw, "%.1f points\t\n", 100*loss/float64(len(r.Sessions)))
	}
	tw.Flush()
}
