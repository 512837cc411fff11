package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/contextwin"
)

// sleeps stands in for the session's sleep: it keeps the waits a run
// asked for and returns at once.
type sleeps struct {
	mu  sync.Mutex
	got []time.Duration
}

func (z *sleeps) sleep(ctx context.Context, d time.Duration) error {
	z.mu.Lock()
	z.got = append(z.got, d)
	z.mu.Unlock()
	return ctx.Err()
}

func (z *sleeps) total() time.Duration {
	z.mu.Lock()
	defer z.mu.Unlock()
	var sum time.Duration
	for _, d := range z.got {
		sum += d
	}
	return sum
}

// countdown is the progress lines of a wait of n seconds told every
// retryTell: "why: retrying in 60 s", "… 55 s", …
func countdown(why string, secs ...int) []string {
	var out []string
	for _, n := range secs {
		out = append(out, fmt.Sprintf("%s: retrying in %d s", why, n))
	}
	return out
}

// The wait before a retry is the one the engine's Retry-After asks for,
// up to maxRetryAfter; the progress line counts it down.
func TestRetryAfterIsObeyed(t *testing.T) {
	in30 := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name     string
		fault    sim.Fault
		first    int             // the requests that fail; 0: every one
		waits    []time.Duration // the waits before each retry
		slack    time.Duration   // how much less they may be in all (a date counts in whole seconds of two clocks)
		activity []string        // the progress lines of the first wait
		end      End
		errHas   []string
		requests int
	}{
		{name: "429 seconds", fault: sim.Fault{Status: 429, RetryAfter: "60"}, first: 1,
			waits:    []time.Duration{time.Minute},
			activity: countdown("rate limited", 60, 55, 50, 45, 40, 35, 30, 25, 20, 15, 10, 5), end: Answered, requests: 2},
		{name: "429 seconds, not on a multiple of the step", fault: sim.Fault{Status: 429, RetryAfter: "12"}, first: 1,
			waits: []time.Duration{12 * time.Second}, activity: countdown("rate limited", 12, 10, 5), end: Answered, requests: 2},
		{name: "503 loading", fault: sim.Fault{Status: 503, RetryAfter: "20"}, first: 1,
			waits: []time.Duration{20 * time.Second}, activity: countdown("model loading", 20, 15, 10, 5), end: Answered, requests: 2},
		{name: "503 with a date", fault: sim.Fault{Status: 503, RetryAfter: in30}, first: 1,
			waits: []time.Duration{30 * time.Second}, slack: 2 * time.Second, end: Answered, requests: 2},
		{name: "429 at the cap", fault: sim.Fault{Status: 429, RetryAfter: "300"}, first: 1,
			waits: []time.Duration{maxRetryAfter}, end: Answered, requests: 2},
		{name: "429 without the header", fault: sim.Fault{Status: 429}, first: 1,
			waits: []time.Duration{defaultRetryWait[0]}, activity: countdown("rate limited", 1), end: Answered, requests: 2},
		{name: "429 with garbage", fault: sim.Fault{Status: 429, RetryAfter: "later"}, first: 1,
			waits: []time.Duration{defaultRetryWait[0]}, end: Answered, requests: 2},
		{name: "429 on every request", fault: sim.Fault{Status: 429, RetryAfter: "60"},
			waits: []time.Duration{time.Minute, time.Minute}, end: EngineFailed, requests: 1 + retries,
			errHas: []string{"HTTP 429", "the engine asks to wait 60 s before a retry"}},
		{name: "429 past the cap", fault: sim.Fault{Status: 429, RetryAfter: "3600"}, first: 1,
			end: EngineFailed, requests: 1,
			errHas: []string{"not retried (a retry waits 300 s at most)", "HTTP 429", "the engine asks to wait 3600 s before a retry"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, client := simEngine(t, sim.Config{Ctx: 8192, Script: []sim.Turn{{Content: "done"}},
				Faults: []sim.FaultRule{{Fault: tt.fault, First: tt.first}}})
			s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Context: contextwin.Config{Window: 8192}})
			var z sleeps
			s.sleep = z.sleep
			var c collect
			res, err := s.Run(context.Background(), "x", c.add)
			if res.End != tt.end {
				t.Fatalf("Run = %s, %v; want %s", res.End, err, tt.end)
			}
			if tt.end == EngineFailed && !errors.Is(err, engine.RateLimit) {
				t.Errorf("Run's error = %v, want a rate limit", err)
			}
			for _, want := range tt.errHas {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Run's error = %v, want it to say %q", err, want)
				}
			}
			if got := len(recorded(t, srv, tt.requests)); got != tt.requests {
				t.Errorf("the engine saw %d requests, want %d", got, tt.requests)
			}
			var want time.Duration
			for _, w := range tt.waits {
				want += w
			}
			if got := z.total(); got > want || got < want-tt.slack {
				t.Errorf("waited %v in all (%v), want %v (%v less at most)", got, z.got, want, tt.slack)
			}
			warnings := c.texts(Warning)
			if len(warnings) != len(tt.waits) {
				t.Errorf("%d retry warnings %q, want %d", len(warnings), warnings, len(tt.waits))
			}
			acts := c.texts(Activity)
			if tt.activity != nil {
				if diff := cmp.Diff(tt.activity, acts[:min(len(acts), len(tt.activity))]); diff != "" {
					t.Errorf("the progress lines of the wait (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// Cancelling the run ends its wait for a retry at once: the run ends
// cancelled, nothing more is sent.
func TestRetryWaitCancelled(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192, Script: []sim.Turn{{Content: "done"}},
		Faults: []sim.FaultRule{{Fault: sim.Fault{Status: 429, RetryAfter: "60"}, First: 1}}})
	s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Context: contextwin.Config{Window: 8192}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	report := func(e Event) {
		if e.Kind == Activity && e.Text == "rate limited: retrying in 60 s" && cancelled.IsZero() {
			cancelled = time.Now()
			cancel()
		}
	}
	res, _ := s.Run(ctx, "x", report)
	if cancelled.IsZero() {
		t.Fatalf("the run ended %s without telling its wait", res.End)
	}
	// The wait was 60 s: anything near that is the wait, not the cancel.
	if d := time.Since(cancelled); res.End != Canceled || d > 10*time.Second {
		t.Errorf("Run ended %s %v after the cancel, want cancelled at once", res.End, d)
	}
	if got := len(recorded(t, srv, 1)); got != 1 {
		t.Errorf("the engine saw %d requests, want 1 (no retry after the cancel)", got)
	}
}
