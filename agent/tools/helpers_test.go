package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reika-lsp/reika/agent/engine"
)

// workspace makes a temporary folder holding files (slash-separated
// relative path → content) and returns its absolute path.
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// newSet builds a Set over root with the given configuration (Folders is
// filled in when empty).
func newSet(t *testing.T, root string, cfg Config) *Set {
	t.Helper()
	if len(cfg.Folders) == 0 {
		cfg.Folders = []string{root}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v) = %v", cfg, err)
	}
	return s
}

// call runs tool with args marshalled to JSON.
func call(t *testing.T, s *Set, tool string, args any) Result {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return s.Run(context.Background(), engine.ToolCall{ID: "call_1", Name: tool, Arguments: string(b)})
}

// buffers is a fake editor: absolute path → open document.
type buffers struct {
	mu   sync.Mutex
	docs map[string]doc
}

type doc struct {
	text    string
	version int32
}

func (b *buffers) Open(abs string) (string, int32, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.docs[abs]
	return d.text, d.version, ok
}

// recorder is a Proposer that records proposals and answers with out.
type recorder struct {
	mu    sync.Mutex
	out   Outcome
	err   error
	calls []Proposal
}

func (r *recorder) propose(_ context.Context, p Proposal) (Outcome, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, p)
	return r.out, r.err
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// yes answers every question "once".
func yes(context.Context, Question) Answer { return Once }

// runTool runs tool in ctx with args marshalled to JSON.
func runTool(t *testing.T, s *Set, ctx context.Context, tool string, args any) Result {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return s.Run(ctx, engine.ToolCall{ID: "call_1", Name: tool, Arguments: string(b)})
}
