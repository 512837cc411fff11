package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/reika-lsp/reika/contextwin"
)

// windowList is a repeatable --window flag.
type windowList []int

func (w *windowList) String() string { return fmt.Sprint(*w) }

func (w *windowList) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		n, err := parseTokens(part)
		if err != nil {
			return err
		}
		if n < contextwin.MinWindow || n > contextwin.MaxWindow {
			return fmt.Errorf("window %d is out of range: want %d to %d tokens", n, contextwin.MinWindow, contextwin.MaxWindow)
		}
		*w = append(*w, n)
	}
	return nil
}

// parseTokens reads a token count: 24000, 24k (×1000) or 2M.
func parseTokens(s string) (int, error) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "_", ""))
	mult := 1
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1000, s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mult, s = 1_000_000, s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("%q is not a number of tokens (24000, 24k)", s)
	}
	return int(f * float64(mult)), nil
}

func runBudget(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("budget", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var windows windowList
	fs.Var(&windows, "window", "context window in tokens (24000 or 24k); repeat, or separate with commas, for several rows")
	reserveFlag := fs.String("reserve", "2048", "tokens held back for the reply")
	asJSON := fs.Bool("json", false, "print the rows as JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: reika-lsp budget --window N [--window N…] [--reserve G] [--json]")
		fmt.Fprintln(stderr, "\nPrints how a window is divided: usable = W − G, shed point 0.9 U, shed target")
		fmt.Fprintln(stderr, "0.63 U, fold keeps 0.3 U, recap 0.1 U, and the repo map's characters.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	reserve, err := parseTokens(*reserveFlag)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp budget: --reserve: %v\n", err)
		return 2
	}
	if len(windows) == 0 || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	rows := make([]contextwin.Budget, len(windows))
	for i, w := range windows {
		rows[i] = contextwin.NewBudget(w, reserve)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rows)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "window\treserve\tusable\tshed point\tshed target\tfold keeps\trecap\tmap chars\t")
	for _, b := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", k1(b.Window), k1(b.Reserve), k1(b.Usable),
			k1(b.ShedPoint), k1(b.ShedTarget), k1(b.FoldKeeps), k1(b.Recap), b.RepoMapChars)
	}
	tw.Flush()
	for _, b := range rows {
		if b.Reserve != reserve {
			fmt.Fprintf(stdout, "note: a reserve of %d leaves no room in a %d-token window; %d is used\n", reserve, b.Window, b.Reserve)
		}
	}
	fmt.Fprintln(stdout, "tokens in thousands (k = 1000); --json gives them exactly")
	return 0
}

// k1 writes tokens in thousands with one decimal: 16070 → 16.1k.
func k1(n int) string { return fmt.Sprintf("%.1fk", float64(n)/1000) }
