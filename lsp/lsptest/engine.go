package lsptest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/internal/testslow"
)

// Engine is the simulated engine a test's server talks to, served on
// loopback. Besides the simulator's own records it notes when each chat
// request started streaming and when the simulator recorded it, so a test
// can measure how soon a cancelled stream is closed.
type Engine struct {
	*sim.Server
	// URL is the engine's base URL, without /v1.
	URL string

	t       testing.TB
	timeout time.Duration

	mu       sync.Mutex
	arrived  []time.Time       // when chat request n+1 arrived
	ended    []time.Time       // when its handler returned
	streamed []time.Time       // when chat request n+1 wrote its first byte
	recorded map[int]time.Time // when the simulator recorded request seq
	changed  chan struct{}
}

// StartEngine starts a simulated engine on 127.0.0.1 and stops it when
// the test ends. Waits fail the test after timeout (10 s when zero),
// multiplied by REIKA_TEST_SLOW.
func StartEngine(t testing.TB, cfg sim.Config, timeout time.Duration) *Engine {
	t.Helper()
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	timeout = testslow.Scale(timeout)
	g := &Engine{t: t, timeout: timeout, recorded: map[int]time.Time{}, changed: make(chan struct{})}
	cfg.Log = recordWriter{g}
	srv, err := sim.New(cfg)
	if err != nil {
		t.Fatalf("sim.New: %v", err)
	}
	g.Server = srv
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	g.URL = "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- sim.ServeHandler(ctx, ln, g.watch(srv.Handler()), srv.Close) }()
	t.Cleanup(func() {
		stop()
		<-served
	})
	return g
}

// watch notes the arrival and the first byte of every chat request.
func (g *Engine) watch(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			next.ServeHTTP(w, r)
			return
		}
		g.mu.Lock()
		n := len(g.arrived)
		g.arrived = append(g.arrived, time.Now())
		g.ended = append(g.ended, time.Time{})
		g.streamed = append(g.streamed, time.Time{})
		g.signalLocked()
		g.mu.Unlock()
		var wrote, flushed time.Time // the last write, the last flush after it
		next.ServeHTTP(&firstByte{ResponseWriter: w, on: func() {
			g.mu.Lock()
			wrote, flushed = time.Now(), time.Time{}
			if g.streamed[n].IsZero() {
				g.streamed[n] = wrote
				g.signalLocked()
			}
			g.mu.Unlock()
		}, flushed: func() {
			g.mu.Lock()
			if !wrote.IsZero() {
				flushed = time.Now()
			}
			g.mu.Unlock()
		}}, r)
		g.mu.Lock()
		// The engine is done with a request when its last byte goes to
		// the client: at the flush after the last write, else when the
		// handler returns (which flushes what is left).
		g.ended[n] = flushed
		if flushed.IsZero() {
			g.ended[n] = time.Now()
		}
		g.signalLocked()
		g.mu.Unlock()
	})
}

// Span is when a chat request reached the engine and when the engine was
// done with it: the client had the reply's last byte, or the handler
// returned (the client gone, or nothing flushed).
type Span struct {
	Arrived, Ended time.Time
}

// Spans are the chat requests' spans, in the order they arrived, once
// every request that arrived has ended.
func (g *Engine) Spans() []Span {
	g.t.Helper()
	g.wait("every chat request ended", func() bool {
		for _, t := range g.ended {
			if t.IsZero() {
				return false
			}
		}
		return true
	})
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]Span, len(g.arrived))
	for i := range out {
		out[i] = Span{g.arrived[i], g.ended[i]}
	}
	return out
}

func (g *Engine) signalLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// firstByte calls on at every body write that wrote bytes (the first one
// is the first byte), and flushed at every flush.
type firstByte struct {
	http.ResponseWriter
	on      func()
	flushed func()
}

func (f *firstByte) Write(b []byte) (int, error) {
	n, err := f.ResponseWriter.Write(b)
	if n > 0 {
		f.on()
	}
	return n, err
}

func (f *firstByte) Flush() {
	// Noted before the bytes go: the client cannot have them earlier.
	if f.flushed != nil {
		f.flushed()
	}
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (f *firstByte) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// recordWriter receives the simulator's one log line per recorded request
// ("sim: #3 200 …") and notes when it came.
type recordWriter struct{ g *Engine }

var simLine = regexp.MustCompile(`^sim: #(\d+) `)

func (w recordWriter) Write(p []byte) (int, error) {
	now := time.Now()
	for line := range bytes.Lines(p) {
		m := simLine.FindSubmatch(line)
		if m == nil {
			continue
		}
		seq, _ := strconv.Atoi(string(m[1]))
		w.g.mu.Lock()
		w.g.recorded[seq] = now
		w.g.signalLocked()
		w.g.mu.Unlock()
	}
	return len(p), nil
}

// Arrived is the number of chat requests that reached the engine so far,
// finished or not.
func (g *Engine) Arrived() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.arrived)
}

// Settle waits until every chat request that arrived has been recorded:
// the simulator records a request when its handler returns, which may be
// after the client has read the whole answer.
func (g *Engine) Settle() {
	g.t.Helper()
	g.wait("every chat request recorded", func() bool {
		return len(g.recorded) >= len(g.arrived)
	})
}

// Requests returns the simulator's records once every request that
// arrived is among them.
func (g *Engine) Requests() []sim.RequestRecord {
	g.t.Helper()
	g.Settle()
	return g.Server.Requests()
}

// WaitStreaming waits until chat request n (from 1) has sent its first
// byte, and returns when it did.
func (g *Engine) WaitStreaming(n int) time.Time {
	g.t.Helper()
	var at time.Time
	g.wait(fmt.Sprintf("chat request %d streaming", n), func() bool {
		if len(g.streamed) >= n && !g.streamed[n-1].IsZero() {
			at = g.streamed[n-1]
			return true
		}
		return false
	})
	return at
}

// WaitRecord waits until the simulator has recorded a request for which
// ok is true, and returns it with the time it was recorded (for a stream,
// when the simulator saw it end).
func (g *Engine) WaitRecord(what string, ok func(sim.RequestRecord) bool) (sim.RequestRecord, time.Time) {
	g.t.Helper()
	var rec sim.RequestRecord
	var at time.Time
	g.wait(what, func() bool {
		for _, r := range g.Server.Requests() {
			if ok(r) {
				if t, seen := g.recorded[r.Seq]; seen {
					rec, at = r, t
					return true
				}
			}
		}
		return false
	})
	return rec, at
}

// wait polls cond (called with g.mu held) on every change, failing the
// test with the engine's records after the timeout.
func (g *Engine) wait(what string, cond func() bool) {
	g.t.Helper()
	deadline := time.NewTimer(g.timeout)
	defer deadline.Stop()
	for {
		g.mu.Lock()
		done := cond()
		ch := g.changed
		g.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			g.t.Fatalf("waited %v for %s; the engine saw:\n%s", g.timeout, what, g.Describe())
		}
	}
}

// Describe lists the requests the engine recorded, one line each.
func (g *Engine) Describe() string {
	var b strings.Builder
	for _, r := range g.Server.Requests() {
		fmt.Fprintf(&b, "  #%d status=%d source=%s finish=%s calls=%v sent=%d/%d cancelled=%v fault=%q error=%q\n",
			r.Seq, r.Status, r.Source, r.FinishReason, r.ToolCalls, r.SentTokens, r.CompletionTokens, r.Cancelled, r.Fault, r.Error)
	}
	g.mu.Lock()
	fmt.Fprintf(&b, "  %d chat requests arrived\n", len(g.arrived))
	g.mu.Unlock()
	if b.Len() == 0 {
		return "  (nothing)\n"
	}
	return b.String()
}
