package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/contextwin"
)

// The five golden rows of the budget (contextwin/budget_test.go) through
// the command, as a user sees them and as JSON.
func TestBudgetCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the row as printed
	}{
		{[]string{"--window", "24000", "--reserve", "6144"}, "24.0k     6.1k   17.9k       16.1k        11.2k        5.4k   1.8k       4800"},
		{[]string{"--window", "16k"}, "16.0k     2.0k   14.0k       12.6k         8.8k        4.2k   1.4k       3200"},
		{[]string{"--window", "24k"}, "24.0k     2.0k   22.0k       19.8k        13.8k        6.6k   2.2k       4800"},
		{[]string{"--window", "32000"}, "32.0k     2.0k   30.0k       27.0k        18.9k        9.0k   3.0k       6400"},
		{[]string{"--window", "128k"}, "128.0k     2.0k  126.0k      113.4k        79.3k       37.8k  12.6k      12000"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runBudget(context.Background(), tc.args, &stdout, &stderr); code != 0 {
			t.Fatalf("budget %v: exit %d: %s", tc.args, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), tc.want) {
			t.Errorf("budget %v printed\n%s\nwant a row %q", tc.args, stdout.String(), tc.want)
		}
	}
}

func TestBudgetJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runBudget(context.Background(), []string{"--window", "16000,24000", "--window", "128000", "--json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rows []map[string]int
	if err := json.Unmarshal(stdout.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("budget --json printed %d rows, want 3", len(rows))
	}
	for _, k := range []string{"window", "reserve", "usable", "shed_point", "shed_target", "fold_keeps", "recap", "repo_map_chars"} {
		if _, ok := rows[0][k]; !ok {
			t.Errorf("budget --json row has no %q: %v", k, rows[0])
		}
	}
	if want := contextwin.NewBudget(128000, 2048); rows[2]["shed_target"] != want.ShedTarget {
		t.Errorf("128k shed_target = %d, want %d", rows[2]["shed_target"], want.ShedTarget)
	}
}

func TestBudgetBadInput(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--window", "0"},
		{"--window", "-5"},
		{"--window", "lots"},
		{"--window", "20000000"},
		{"--window", "24000", "--reserve", "x"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runBudget(context.Background(), args, &stdout, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("budget %v = exit %d, stderr %q; want 2 and a message", args, code, stderr.String())
		}
	}
}
