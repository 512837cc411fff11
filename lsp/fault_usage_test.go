package lsp_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/contextwin"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// TestFaultUsage plays an engine that misreports its figures through the
// real server, at a small window, over a session of several folds: usage
// absent or all zero on every reply (the estimate errs high, no request
// is above the usable window by the engine's own count, and the user is
// told once), and one reply whose prompt_tokens is ten times the truth
// (not learned: the run goes on, the next ask works, nobody is told to
// take a larger window).
func TestFaultUsage(t *testing.T) {
	const window = 8192
	usable := contextwin.NewBudget(window, contextwin.DefaultReserve).Usable
	for _, tc := range []struct {
		name  string
		rule  sim.FaultRule
		told  string // what the user is told, once
		every bool   // the fault is on every reply
	}{
		{"usage absent", sim.FaultRule{Fault: sim.Fault{Usage: sim.UsageAbsent}}, "reports no prompt token counts", true},
		{"usage zero", sim.FaultRule{Fault: sim.Fault{Usage: sim.UsageZero}}, "reports no prompt token counts", true},
		{"one ×10 outlier", sim.FaultRule{Fault: sim.Fault{PromptScale: 10}, Every: 4, First: 4}, "far from what its other counts", false},
		{"×10 on the first count", sim.FaultRule{Fault: sim.Fault{PromptScale: 10}, First: 1}, "far from what its other counts", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A note round may take an answer's turn (a turn without calls
			// answers a request that forbids them): the runs are judged by
			// how they end, not by which answer they end with.
			script := append(readSources("a", 8), sim.Turn{Content: "All eight read."}, sim.Turn{Content: "second answer."})
			answered := regexp.MustCompile(`^showMessage info: Reika: .* · ctx `)
			e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: sources("a", 8),
				Engine: sim.Config{Ctx: window, Script: script, Faults: []sim.FaultRule{tc.rule}}, Timeout: 60 * time.Second})
			mark := e.Mark()
			if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Read the a handlers one by one."}); err != nil {
				t.Fatal(err)
			}
			if end := e.WaitRunEnd(mark); !answered.MatchString(end.Line) {
				t.Fatalf("the run ended with %q, want its answer\n%s", end.Line, strings.Join(e.Transcript(), "\n"))
			}
			mark2 := e.Mark()
			if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Second ask."}); err != nil {
				t.Fatal(err)
			}
			if end := e.WaitRunEnd(mark2); !answered.MatchString(end.Line) {
				t.Errorf("the next ask ended with %q, want its answer", end.Line)
			}

			told := 0
			for _, ev := range e.Events()[mark:] {
				if strings.Contains(ev.Line, tc.told) {
					told++
				}
				if strings.Contains(ev.Line, "window too small") || strings.Contains(ev.Line, "larger window") {
					t.Errorf("the user was told %q", ev.Line)
				}
			}
			if told != 1 {
				t.Errorf("the user was told /%s/ %d times, want once", tc.told, told)
			}

			notes, faulted := 0, 0
			var sizes []string
			for _, r := range e.Engine.Requests() {
				if r.Fault != "" {
					faulted++
				}
				limit := usable
				if r.Source == "note" {
					notes++
					limit = window - 512 // a note round leaves the room for its note
				}
				sizes = append(sizes, fmt.Sprint(r.PromptTokens))
				if r.Status != 200 || r.PromptTokens > limit {
					t.Errorf("request %d (%s): status %d, %d prompt tokens, above the %d it may take", r.Seq, r.Source, r.Status, r.PromptTokens, limit)
				}
			}
			if notes == 0 {
				t.Errorf("no fold in %d requests (%s tokens): the test tested nothing", len(sizes), strings.Join(sizes, " "))
			}
			if want := 1; !tc.every && faulted != want || tc.every && faulted != len(sizes) {
				t.Errorf("%d of %d requests faulted", faulted, len(sizes))
			}
			t.Logf("%d requests, %d note rounds, prompt tokens %s (usable %d)", len(sizes), notes, strings.Join(sizes, " "), usable)
		})
	}
}

// sources are n Go files of about 9 KB each, denser in tokens than prose
// (2.4 bytes a token to the simulator, whose vocabulary is harsher on code
// than a real model's).
func sources(prefix string, n int) map[string]string {
	files := map[string]string{"go.mod": "module example.com/handlers\n"}
	for i := 0; i < n; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "package handlers\n\n")
		for k := 0; b.Len() < 9000; k++ {
			fmt.Fprintf(&b, "func (s *Server) handle%s%d_%d(w http.ResponseWriter, r *http.Request) error {\n\tif err := s.check(r, %d); err != nil {\n"+
				"\t\treturn fmt.Errorf(\"handle%d: %%w\", err)\n\t}\n\treturn s.serve(w, r.URL.Path[%d:])\n}\n\n", prefix, i, k, k*7, k, k%9)
		}
		files[fmt.Sprintf("handlers/%s%d.go", prefix, i)] = b.String()
	}
	return files
}

// readSources are the turns that read the files of sources one by one.
func readSources(prefix string, n int) []sim.Turn {
	var out []sim.Turn
	for i := 0; i < n; i++ {
		out = append(out, sim.Turn{Content: fmt.Sprintf("Reading %s%d.go.", prefix, i),
			ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: json.RawMessage(fmt.Sprintf(`{"path":"handlers/%s%d.go"}`, prefix, i))}}})
	}
	return out
}
