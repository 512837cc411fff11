package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/replay"
)

const testSession = "../../testdata/sessions/fold-orphans.jsonl.gz"

// measurementsDoc holds the replay table that TestReplayCommand checks
// against the command's output.
const measurementsDoc = "../../docs/measurements.md"

// One session, one window, two strategies: a table with a row each, and
// the same rows as JSON with exactly the documented keys.
func TestReplayCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("replays run in the pass without the race detector (two minutes under it)")
	}
	args := []string{"--window", "16k", "--session", testSession, "--strategy", "ours", "--strategy", "sliding"}
	var stdout, stderr bytes.Buffer
	plot := filepath.Join(t.TempDir(), "replay.svg")
	if code := runReplay(context.Background(), append(args, "--plot", plot), &stdout, &stderr); code != 0 {
		t.Fatalf("replay %v: exit %d: %s", args, code, stderr.String())
	}
	svg, err := os.ReadFile(plot)
	if err != nil {
		t.Fatalf("replay --plot: %v", err)
	}
	if n := strings.Count(string(svg), "<polyline "); !strings.HasPrefix(string(svg), "<?xml") || n != 2 {
		t.Errorf("replay --plot wrote %d polylines (%d bytes), want an SVG with one per strategy, 2", n, len(svg))
	}
	lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("replay %v printed %d lines, want a header and two rows:\n%s", args, len(lines), stdout.String())
	}
	for i, want := range []string{"prefilled", "ours", "sliding"} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %q, want it to contain %q", i+1, lines[i], want)
		}
	}
	if a, b := strings.Index(lines[0], "session"), strings.Index(lines[1], "fold-orphans"); a != b {
		t.Errorf("the session column starts at %d in the header and %d in a row, want aligned", a, b)
	}
	if a, b := strings.Index(lines[0], "notes_seen")+len("notes_seen"), len(lines[1]); a != b {
		t.Errorf("the last column ends at %d in the header and %d in a row, want aligned", a, b)
	}
	// The table in docs/measurements.md is this command's output: its
	// header, and the rows of this session and window as the command prints
	// them now.
	table := measuredReplayTable(t)
	if got, want := strings.Join(table[0], " "), strings.Join(strings.Fields(lines[0]), " "); got != want {
		t.Errorf("%s: the replay table's header = %q, want the command's %q", measurementsDoc, got, want)
	}
	for _, line := range lines[1:] {
		row := strings.Fields(line)
		found := false
		for _, r := range table[1:] {
			if slices.Equal(r[:3], row[:3]) {
				found = true
				if !slices.Equal(r, row) {
					t.Errorf("%s: the replay row %q, want the command's %q: regenerate the table with reika-lsp replay", measurementsDoc, r, row)
				}
			}
		}
		if !found {
			t.Errorf("%s: the replay table has no row for %q", measurementsDoc, row[:3])
		}
	}

	// The rows as JSON, priced at speeds other than the defaults.
	const prefillTPS, decodeTPS = 2500.0, 125.0
	stdout.Reset()
	jsonArgs := append(args, "--json", "--prefill-tps", "2500", "--decode-tps", "125")
	if code := runReplay(context.Background(), jsonArgs, &stdout, &stderr); code != 0 {
		t.Fatalf("replay --json: exit %d: %s", code, stderr.String())
	}
	var rows []map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &rows); err != nil {
		t.Fatalf("replay --json printed invalid JSON: %v\n%s", err, stdout.String())
	}
	if len(rows) != 2 {
		t.Fatalf("replay --json printed %d rows, want 2", len(rows))
	}
	keys := []string{"strategy", "window", "session", "prefilled", "growth", "ratio", "events", "live_mean",
		"peak_ratio", "overflows", "facts_kept", "requests", "prefill_s", "decoded", "engine_s",
		"rereads", "reread_tokens", "rereads_per_event", "trail", "trail_worst", "trail_last", "notes", "notes_kept", "notes_reached"}
	for _, row := range rows {
		if len(row) != len(keys) {
			t.Errorf("row has %d keys, want %d: %v", len(row), len(keys), row)
		}
		for _, k := range keys {
			if _, ok := row[k]; !ok {
				t.Errorf("row has no %q: %v", k, row)
			}
		}
	}
	if rows[0]["strategy"] != "ours" || rows[0]["window"] != 16000.0 || rows[0]["session"] != "fold-orphans" {
		t.Errorf("first row = %v, want ours, 16000, fold-orphans", rows[0])
	}
	ours, sliding := rows[0]["prefilled"].(float64), rows[1]["prefilled"].(float64)
	if ours <= 0 || sliding <= ours {
		t.Errorf("prefilled(ours) = %v, prefilled(sliding) = %v, want 0 < ours < sliding", ours, sliding)
	}
	for _, row := range rows {
		p, d, s := row["prefilled"].(float64), row["decoded"].(float64), row["engine_s"].(float64)
		if want := p/prefillTPS + d/decodeTPS; d <= 0 || math.Abs(s-want) > 0.05 {
			t.Errorf("%v: engine_s = %v for %v prefilled and %v decoded, want %.2f at %v and %v tokens a second",
				row["strategy"], s, p, d, want, prefillTPS, decodeTPS)
		}
	}
}

// Speeds that are not positive numbers are refused before anything is
// replayed, with the flag named.
func TestReplaySpeedFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--prefill-tps", "0"}, "--prefill-tps"},
		{[]string{"--prefill-tps", "-800"}, "--prefill-tps"},
		{[]string{"--decode-tps", "0"}, "--decode-tps"},
		{[]string{"--decode-tps", "-40"}, "--decode-tps"},
		{[]string{"--decode-tps", "NaN"}, "--decode-tps"},
		{[]string{"--prefill-tps", "+Inf"}, "--prefill-tps"},
		{[]string{"--decode-tps", "fast"}, `invalid value "fast" for flag -decode-tps`},
		{[]string{"--engine", "recurrent", "--checkpoint-min-step", "-1"}, "--checkpoint-min-step"},
		{[]string{"--engine", "mamba"}, "mamba"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runReplay(context.Background(), c.args, &stdout, &stderr); code != 2 {
			t.Errorf("replay %v: exit %d, want 2", c.args, code)
		}
		if !strings.Contains(stderr.String(), c.flag) {
			t.Errorf("replay %v said %q, want it to name %s", c.args, stderr.String(), c.flag)
		}
		if stdout.Len() != 0 {
			t.Errorf("replay %v printed %q, want nothing replayed", c.args, stdout.String())
		}
	}
}

func TestReplayBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--strategy", "bogus"},
		{"--window", "12"},
		{"--window", "abc"},
		{"extra"},
		{"--session", "no/such/file.jsonl"},
		{"--reasoning", "some"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runReplay(context.Background(), args, &stdout, &stderr); code == 0 {
			t.Errorf("replay %v: exit 0, want a failure", args)
		}
		if stderr.Len() == 0 {
			t.Errorf("replay %v said nothing on stderr", args)
		}
	}
}

// A stalled or skipping row fails the command, with a line on stderr
// each; a good row says nothing.
func TestFailedRows(t *testing.T) {
	rows := []replay.Row{
		{Strategy: "ours", Window: 16000, Session: "a"},
		{Strategy: "ours", Window: 16000, Session: "b", Stalled: 40},
		{Strategy: "sliding", Window: 16000, Session: "b", Skipped: 3},
	}
	var stderr bytes.Buffer
	if code := failedRows(rows[:1], &stderr); code != 0 || stderr.Len() != 0 {
		t.Errorf("failedRows(a good row) = %d, %q, want 0 and nothing said", code, stderr.String())
	}
	if code := failedRows(rows, &stderr); code != 1 {
		t.Errorf("failedRows(a stalled and a skipping row) = %d, want 1", code)
	}
	for _, want := range []string{"ours on b at 16000 tokens stalled at round 40", "sliding on b at 16000 tokens gave up 3 turns"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr = %q, want it to say %q", stderr.String(), want)
		}
	}
	var out bytes.Buffer
	printReplayRows(&out, rows)
	if !strings.Contains(out.String(), "STALLED@40") || !strings.Contains(out.String(), "SKIPPED:3") {
		t.Errorf("table = %q, want STALLED@40 and SKIPPED:3 in the ratio column", out.String())
	}
}

// measuredReplayTable returns the rows of the replay table in
// docs/measurements.md, each as its fields, the header first.
func measuredReplayTable(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile(measurementsDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "```text\nstrategy ")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatalf("%s has no ```text block that starts with the replay table's header", measurementsDoc)
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace("strategy "+block), "\n") {
		rows = append(rows, strings.Fields(line))
	}
	return rows
}
