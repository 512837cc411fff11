package agent

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
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
// every quietEvery.
var (
	quietAfter = 20 * time.Second
	quietEvery = 10 * time.Second
	quietTick  = time.Second
)

// watchSilence reports, while the reply has not finished, how long the
// engine has sent nothing. It returns the function a delta calls and the
// one that stops the watch.
func (r *run) watchSilence(ctx context.Context, tokens int) (touch func(), stop func()) {
	var last atomic.Int64
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
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
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
			last.Store(time.Now().UnixNano())
		}, func() {
			cancel()
			<-done
		}
}
