package agent

import (
	"bytes"
	"context"
	"github.com/reika-lsp/reika/contextwin"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
)

// recorder is an Engine that keeps every request it passes on, and marks
// the ones sent after the run reported a shrink event.
type recorder struct {
	inner   Engine
	mu      sync.Mutex
	reqs    []engine.Request
	shrunk  []bool
	pending bool
}

func (r *recorder) Chat(ctx context.Context, req engine.Request, onDelta func(engine.Delta)) (*engine.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.shrunk = append(r.shrunk, r.pending)
	r.pending = false
	r.mu.Unlock()
	return r.inner.Chat(ctx, req, onDelta)
}

func (r *recorder) report(e Event) {
	if e.Kind == Shed || e.Kind == Folded {
		r.mu.Lock()
		r.pending = true
		r.mu.Unlock()
	}
}

// memory keeps proposals in memory: reads see them, the disk never does.
type memory struct {
	mu    sync.Mutex
	files map[string]string
}

func (m *memory) Open(abs string) (string, int32, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.files[abs]
	return t, 1, ok
}

func (m *memory) accept(_ context.Context, p tools.Proposal) (tools.Outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[p.Abs] = p.New
	return tools.Outcome{Applied: true}, nil
}

// TestRequestsStayAppends runs a long session — over 300 rounds on this
// repository's own files, against the simulated engine with a 16k window
// — and proves that every request begins with the exact bytes of the one
// before, except exactly at the shrink events the run reported (and the
// note rounds, which append a question that the next request drops). The
// model reasons every round, its reasoning is handed back, and the
// template renders it: the engine reuses each reply whole.
func TestRequestsStayAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("a 300-round session; run without -short")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	srv, client := simEngine(t, sim.Config{Ctx: 16384, Root: root, ReasoningTemplate: sim.AllReasoning})
	mem := &memory{files: map[string]string{}}
	ts, err := tools.New(tools.Config{Folders: []string{root}, Buffers: mem, Proposer: mem.accept,
		BashAllow: []string{"wc -l", "ls -la", "ls", "git log --oneline", "head -n"}, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{inner: client}
	s, err := newSession(sessionConfig{Engine: rec, Tools: ts, Workspace: root, MaxSteps: 400, ReasoningBack: true, Context: contextwin.Config{Window: 16384}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), "Review the error handling across this repository. rounds=320", rec.report)
	if err != nil {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if len(rec.reqs) < 300 {
		t.Fatalf("the session sent %d requests, want at least 300", len(rec.reqs))
	}

	// Serialize each request's prompt material — tools, then each message —
	// and compare it with the last request that carried a round.
	var prev []byte
	appends, events := 0, 0
	for i, req := range rec.reqs {
		cur, _ := promptBytes(req)
		note := req.ToolChoice == "none"
		switch {
		case prev == nil:
		case rec.shrunk[i]:
			events++
			if bytes.HasPrefix(cur, prev) {
				t.Errorf("request %d was reported as a shrink event but is an append", i)
			}
		case !bytes.HasPrefix(cur, prev):
			t.Fatalf("request %d is not a byte-prefix extension of request %d, and no shrink event was reported: they differ at byte %d",
				i, i-1, commonPrefix(prev, cur))
		default:
			appends++
		}
		if !note {
			prev = cur
		}
	}
	st := s.Stats()
	if events != st.Events || events == 0 {
		t.Errorf("%d requests came after a reported event, the session counted %d events; want them equal and some", events, st.Events)
	}
	if st.Overflows != 0 {
		t.Errorf("%d overflows, want none", st.Overflows)
	}
	t.Logf("%d requests: %d appends, %d shrink events (%d folds), %d notes; prefilled %d, reused %d",
		len(rec.reqs), appends, events, st.Folds, st.Notes, st.Prefilled, st.Reused)
	// The engine agrees: between events, each request reused the whole
	// previous prompt.
	reqs := srv.Requests()
	for i := 1; i < len(reqs); i++ {
		if rec.shrunk[i] || reqs[i-1].ToolChoice == "none" || reqs[i].ToolChoice == "none" {
			continue
		}
		// The reply too: its reasoning went back, and the template
		// renders it as the model generated it.
		if whole := reqs[i-1].PromptTokens + reqs[i-1].CompletionTokens; reqs[i].CacheN != whole {
			t.Errorf("request %d reused %d tokens of the previous %d-token prompt and its %d-token reply", i, reqs[i].CacheN, reqs[i-1].PromptTokens, reqs[i-1].CompletionTokens)
		}
	}
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
