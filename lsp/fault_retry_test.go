package lsp_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// An engine that answers 429 with Retry-After: 60 through the real
// server: the progress line says how long the run waits, reika.cancel
// ends the wait at once and the run ends cancelled, and the next ask
// works. A wait past the cap stops the run with the wait the engine
// asked for; a short one is waited out and the run answers.
func TestFaultRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  sim.Fault // on the first chat request, by its number
		seen   string    // a line the user sees during the run; "" for none
		cancel bool      // reika.cancel once seen
		end    string    // the run's last line
		chats  int       // the chat requests of the first ask
	}{
		{"429 Retry-After 60, cancelled", sim.Fault{Status: 429, RetryAfter: "60"},
			`^progress report: rate limited: retrying in 60 s$`, true, `^showMessage info: Reika stopped: cancelled`, 1},
		{"503 Retry-After 2", sim.Fault{Status: 503, RetryAfter: "2"},
			`^progress report: model loading: retrying in 2 s$`, false, `Reika: first answer\.`, 2},
		{"429 Retry-After 3600", sim.Fault{Status: 429, RetryAfter: "3600"},
			"", false,
			`^showMessage error: Reika stopped: not retried \(a retry waits 300 s at most\): engine rate limit .*HTTP 429.*the engine asks to wait 3600 s before a retry`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The fault goes to the first request by its number: a failed
			// request takes no scripted turn, so the turns answer in order.
			script := []sim.Turn{{Content: "first answer."}, {Content: "second answer."}}
			e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: map[string]string{"main.go": "package main\n"},
				Engine: sim.Config{Script: script, Faults: []sim.FaultRule{{Fault: tc.fault, First: 1}}}})
			mark := e.Mark()
			if _, err := e.Exec("reika.ask", map[string]any{"instruction": "First ask: " + tc.name}); err != nil {
				t.Fatal(err)
			}
			if tc.seen != "" {
				e.WaitLine(mark, tc.seen)
			}
			var cancelled time.Time
			if tc.cancel {
				cancelled = time.Now()
				if _, err := e.Exec("reika.cancel"); err != nil {
					t.Fatal(err)
				}
			}
			// The harness waits 10 s at most: far less than the 60 s the
			// engine asked for.
			end := e.WaitRunEnd(mark)
			if !regexp.MustCompile(tc.end).MatchString(end.Line) {
				t.Errorf("the run ended with %q, want /%s/", end.Line, tc.end)
			}
			if tc.cancel {
				if d := time.Since(cancelled); d > 5*time.Second {
					t.Errorf("the run ended %v after reika.cancel, want at once", d)
				}
			}
			if n := e.Engine.Arrived(); n != tc.chats {
				t.Errorf("%d chat requests reached the engine, want %d", n, tc.chats)
			}
			for _, ev := range e.Events()[mark:] {
				if strings.Contains(ev.Line, "\n") && ev.Method == "window/showMessage" {
					t.Errorf("a message of several lines: %q", ev.Line)
				}
			}
			checkTranscript(t, e.StateDir, "First ask: "+tc.name)

			mark = e.Mark()
			if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Second ask."}); err != nil {
				t.Fatal(err)
			}
			if end := e.WaitRunEnd(mark); !regexp.MustCompile(`Reika: (first|second) answer\.`).MatchString(end.Line) {
				t.Errorf("the next ask ended with %q, want an answer", end.Line)
			}
		})
	}
}
