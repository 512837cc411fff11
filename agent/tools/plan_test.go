package tools

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// In plan mode read, glob and grep run; bash runs what the read-only
// list allows, unasked, and refuses the rest; edit and write are refused;
// fetch_url runs only when the settings turn it on. Nothing asks.
func TestPlanMode(t *testing.T) {
	root := workspace(t, map[string]string{"main.go": "package main\n"})
	q := &questions{answers: []Answer{Once}}
	rec := &recorder{out: Outcome{Applied: true}}
	s := newSet(t, root, Config{Ask: q.ask, Proposer: rec.propose, BashAllow: []string{"rm", "touch", "go test"}})
	ctx := WithRun(context.Background(), Plan)
	if RunMode(ctx) != Plan {
		t.Fatalf("RunMode = %q, want plan", RunMode(ctx))
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string // "" runs; else the refusal's text
	}{
		{"read", map[string]any{"path": "main.go"}, ""},
		{"glob", map[string]any{"pattern": "*.go"}, ""},
		{"grep", map[string]any{"pattern": "package"}, ""},
		{"bash", map[string]any{"command": "cat main.go | wc -l"}, ""},
		{"bash", map[string]any{"command": "git --version"}, ""},
		{"bash", map[string]any{"command": "rm main.go"}, planReadOnly},
		{"bash", map[string]any{"command": "touch x"}, planReadOnly},
		{"bash", map[string]any{"command": "go test ./..."}, planReadOnly},
		{"bash", map[string]any{"command": "sed -i s/a/b/ main.go"}, planReadOnly},
		{"bash", map[string]any{"command": "echo x > out.txt"}, planReadOnly},
		{"bash", map[string]any{"command": "ls", "network": true}, planContained},
		{"edit", map[string]any{"path": "main.go", "old_text": "main", "new_text": "other"}, planNoEdits},
		{"write", map[string]any{"path": "new.go", "content": "package main\n"}, planNoEdits},
		{"fetch_url", map[string]any{"url": "https://example.com/"}, "turned off"},
	} {
		res := runTool(t, s, ctx, tc.tool, tc.args)
		switch {
		case tc.want == "" && res.Error:
			t.Errorf("plan mode: %s %v failed: %s", tc.tool, tc.args, res.Content)
		case tc.want != "" && (!res.Error || !strings.Contains(res.Content, tc.want)):
			t.Errorf("plan mode: %s %v = %q, want refused with %q", tc.tool, tc.args, res.Content, tc.want)
		}
	}
	if len(q.asked) != 0 {
		t.Errorf("plan mode asked %d questions: %+v", len(q.asked), q.asked)
	}
	if len(rec.calls) != 0 {
		t.Errorf("plan mode proposed %d changes", len(rec.calls))
	}
	if res := runTool(t, s, ctx, "bash", map[string]any{"command": "cat main.go"}); !res.Passed {
		t.Errorf("plan mode: cat main.go = %+v, want passed", res)
	}
	if res := runTool(t, s, ctx, "bash", map[string]any{"command": "false"}); res.Passed || res.Error {
		t.Errorf("plan mode: false = %+v, want run, not passed", res)
	}

	// With fetch turned on, fetch_url runs, asking per host as in any run.
	srv, hits := server(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("docs")) })
	f := publicSet(t, srv, Config{Ask: q.ask})
	if res := runTool(t, f, ctx, "fetch_url", map[string]any{"url": "http://example.com/"}); res.Error || hits.Load() != 1 || len(q.asked) != 1 || q.asked[0].Kind != AskFetch {
		t.Errorf("plan mode, fetch on: fetch_url = %q (%d hits, asked %+v), want fetched after the host's question", res.Content, hits.Load(), q.asked)
	}
}
