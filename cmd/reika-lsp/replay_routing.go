package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/reika-lsp/reika/agent/replay"
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
	printRouting(stdout, rows, window, replicas)
	return 0
}

// printRouting prints one line per policy: each session's share of its
// prompt tokens the engine took from its cache, and the mean loss against
// the single engine (the first row), in points.
func printRouting(w io.Writer, rows []replay.RoutingRow, window, replicas int) {
	fmt.Fprintf(w, "%d sessions at once through a router of %d replicas (one slot each), window %d: cache reuse per session, prefilled tokens in brackets\n\n",
		len(rows[0].Sessions), replicas, window)
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
