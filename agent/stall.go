package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/reika-lsp/reika/agent/engine"
)

// A stalled engine must not look like a slow one for minutes. The wait
// for a reply's first byte is bounded by what the prompt should take at
// the engine's measured prefill speed (engine.Request.FirstByte), the
// wait between chunks by engine.Timeouts.Chunk, and while nothing
// arrives the user hears so every few seconds.

// Bounds of the first-byte wait: the least any request gets, the most a
// huge prompt on a slow engine gets, and the margin over the measured
// speed (an engine under other load is slower than it was).
const (
	minFirstByte  = time.Minute
	maxFirstByte  = 15 * time.Minute
	prefillMargin = 3
)

// firstByte is the wait for the first byte of a reply to a prompt of
// about tokens tokens, from the prefill speed measured so far; 0 (the
// engine's idle timeout) before anything was measured.
func (s *Session) firstByte(tokens int) time.Duration {
	s.mu.Lock()
	ms, n := s.stats.PromptMS, s.stats.Prefilled
	s.mu.Unlock()
	if ms <= 0 || n < 256 {
		return 0
	}
	d := time.Duration(float64(tokens)*ms/float64(n)*prefillMargin) * time.Millisecond
	return min(max(d+minFirstByte/2, minFirstByte), maxFirstByte)
}

// Silence reporting: the first word after quietAfter without data, then
// every quietEvery. What the run waits for is told every activityEvery,
// from activityEvery on.
var (
	quietAfter    = 20 * time.Second
	quietEvery    = 10 * time.Second
	quietTick     = time.Second
	activityEvery = 3 * time.Second
)

// activity says what a request waits for: the engine reading the prompt
// (before the first byte), or writing its reply.
func activity(tokens, written int, began bool, d time.Duration) string {
	secs := int(d.Seconds())
	if !began {
		return fmt.Sprintf("engine reading about %s tokens, %d s", kilo(tokens), secs)
	}
	return fmt.Sprintf("engine writing, about %d tokens, %d s", written, secs)
}

// kilo writes a token count as people read it: 950, 12k.
func kilo(n int) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%dk", (n+500)/1000)
}

// watchTool tells, every activityEvery of a long tool call, what runs.
func (r *run) watchTool(ctx context.Context, what string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		t := time.NewTicker(activityEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				r.report(Event{Kind: Activity, Round: r.rounds, Text: fmt.Sprintf("running %s (%d s)", what, int(now.Sub(start).Seconds()))})
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// watchSilence reports, while the reply has not finished, how long the
// engine has sent nothing. It returns the function a delta calls and the
// one that stops the watch.
func (r *run) watchSilence(ctx context.Context, tokens int) (touch func(), stop func()) {
	var last, written atomic.Int64
	var began atomic.Bool
	start := time.Now()
	last.Store(start.UnixNano())
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(quietTick)
		defer t.Stop()
		next := quietAfter
		told := activityEvery
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				if d := now.Sub(start); d >= told {
					r.report(Event{Kind: Activity, Round: r.rounds, Text: activity(tokens, int(written.Load()), began.Load(), d)})
					told = d.Truncate(time.Second) + activityEvery
				}
				quiet := now.Sub(time.Unix(0, last.Load()))
				if quiet < next {
					if quiet < quietAfter {
						next = quietAfter
					}
					continue
				}
				what := fmt.Sprintf("waiting for the engine: no data for %d s", int(quiet.Seconds()))
				if !began.Load() {
					what += fmt.Sprintf(" (it is reading a prompt of about %d tokens)", tokens)
				}
				r.report(Event{Kind: Waiting, Round: r.rounds, Text: what})
				next = quiet.Truncate(time.Second) + quietEvery
			}
		}
	}()
	return func() {
			began.Store(true)
			written.Add(1)
			last.Store(time.Now().UnixNano())
		}, func() {
			cancel()
			<-done
		}
}

// toolSubject is what a tool call is about, for the progress line: the
// command, the path, the pattern or the URL.
func toolSubject(call engine.ToolCall) string {
	var a struct {
		Command, Path, Pattern, URL string
	}
	if json.Unmarshal([]byte(call.Arguments), &a) != nil {
		return ""
	}
	for _, s := range []string{a.Command, a.Path, a.Pattern, a.URL} {
		if s != "" {
			return strings.Join(strings.Fields(s), " ")
		}
	}
	return ""
}
