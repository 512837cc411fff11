package lsp

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/internal/testslow"
)

// An edit is judged again as the file system stands just before it is
// sent: sub/d/config is an ordinary file when the model proposes the
// change, and while the user is asked about it (a run that asks before
// every edit) sub/d becomes a link to ../.git. The editor would write
// .git/config: the server asks again, as for a protected path, and on a
// no sends nothing.
func TestEditRejudgedBeforeSending(t *testing.T) {
	dir := t.TempDir()
	gitConfig := "[core]\n\tbare = false\n"
	for _, name := range []string{".git/config", "sub/d/config"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(gitConfig), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv, _ := sim.New(sim.Config{Ctx: 16384})
	srv.AppendScript(
		sim.Turn{ToolCalls: []sim.ScriptCall{{Name: "edit", Arguments: json.RawMessage(`{"path":"sub/d/config","old_text":"[core]\n","new_text":"[core]\n\tfsmonitor = touch pwned\n"}`)}}},
		sim.Turn{Content: "Done."},
	)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	c := &swapClient{t: t, dir: dir, answered: make(chan struct{})}
	a, b := net.Pipe()
	env := map[string]string{"REIKA_ENDPOINT": ts.URL + "/v1", "XDG_CONFIG_HOME": t.TempDir(), "REIKA_WARMUP": "0"}
	ctx, cancel := context.WithTimeout(context.Background(), testslow.Scale(time.Minute))
	defer cancel()
	go Serve(ctx, b, Options{Getenv: func(k string) string { return env[k] }, StateDir: t.TempDir(), Log: os.Stderr})
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(newOutbox(a, nil))) // see smokeClient
	conn.Go(ctx, c.handle)
	if _, err := conn.Call(ctx, "initialize", map[string]any{
		"rootUri": PathToURI(dir),
		"capabilities": map[string]any{
			"window":    map[string]any{"showMessage": map[string]any{"messageActionItem": map[string]any{}}},
			"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}},
		},
	}, nil); err != nil {
		t.Fatal(err)
	}
	conn.Notify(ctx, "initialized", map[string]any{})
	if _, err := conn.Call(ctx, "workspace/executeCommand", map[string]any{"command": "reika.ask",
		"arguments": []any{map[string]any{"instruction": "Tidy the config.", "trust": "ask"}}}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.answered:
	case <-ctx.Done():
		t.Fatal("the run did not end")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if q := c.questions; len(q) != 2 || !strings.Contains(q[0], "change sub/d/config") || !strings.HasPrefix(q[1], "Reika asks (protected): change sub/d/config") {
		t.Errorf("questions = %q; want the ask mode's, then the protected path's once sub/d led to .git", q)
	}
	if c.edits != 0 {
		t.Errorf("%d edits were sent; want none after the no", c.edits)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); string(b) != gitConfig {
		t.Errorf(".git/config = %q", b)
	}
	conn.Call(ctx, "shutdown", nil, nil)
	conn.Notify(ctx, "exit", nil)
}

// swapClient is a client that, asked its first question, makes sub/d a
// link to ../.git and says yes, then says no to every other question. It
// counts the edits it is sent (and applies none), and closes answered at
// the run's answer.
type swapClient struct {
	t        *testing.T
	dir      string
	answered chan struct{}

	mu        sync.Mutex
	questions []string // their first lines
	edits     int
}

func (c *swapClient) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	switch req.Method() {
	case "window/showMessageRequest":
		var p struct {
			Message string `json:"message"`
		}
		json.Unmarshal(req.Params(), &p)
		c.mu.Lock()
		c.questions = append(c.questions, strings.SplitN(p.Message, "\n", 2)[0])
		first := len(c.questions) == 1
		c.mu.Unlock()
		if first {
			// The swap, while the user is being asked.
			os.RemoveAll(filepath.Join(c.dir, "sub", "d"))
			if err := os.Symlink("../.git", filepath.Join(c.dir, "sub", "d")); err != nil {
				c.t.Error(err)
			}
			return reply(ctx, map[string]any{"title": "Apply this change"}, nil)
		}
		return reply(ctx, map[string]any{"title": "Deny"}, nil)
	case "workspace/applyEdit":
		c.mu.Lock()
		c.edits++
		c.mu.Unlock()
		return reply(ctx, map[string]any{"applied": false}, nil)
	case AnswerNotification:
		close(c.answered)
	}
	if _, ok := req.(*jsonrpc2.Call); ok {
		return reply(ctx, nil, nil)
	}
	return nil
}
