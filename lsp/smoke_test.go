package lsp

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
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

// smokeClient is a bare JSON-RPC client that records what the server
// sends and answers its requests. Its connection writes through an
// outbox, as the server's does: the library answers on its reader, which
// must not wait for the server to read (see
// TestServerReadsWhileClientDoesNotRead).
type smokeClient struct {
	conn    jsonrpc2.Conn
	mu      sync.Mutex
	notes   []string
	edits   []json.RawMessage
	applied bool
}

func (c *smokeClient) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	c.mu.Lock()
	c.notes = append(c.notes, req.Method()+" "+string(req.Params()))
	if req.Method() == "workspace/applyEdit" {
		c.edits = append(c.edits, req.Params())
	}
	applied := c.applied
	c.mu.Unlock()
	switch req.Method() {
	case "workspace/applyEdit":
		return reply(ctx, map[string]any{"applied": applied}, nil)
	case "window/workDoneProgress/create", "window/showDocument":
		return reply(ctx, nil, nil)
	}
	if _, ok := req.(*jsonrpc2.Call); ok {
		return reply(ctx, nil, nil)
	}
	return nil
}

func (c *smokeClient) waitFor(t *testing.T, sub string) string {
	t.Helper()
	deadline := time.Now().Add(testslow.Scale(10 * time.Second))
	for time.Now().Before(deadline) {
		c.mu.Lock()
		for _, n := range c.notes {
			if strings.Contains(n, sub) {
				c.mu.Unlock()
				return n
			}
		}
		c.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.Fatalf("no message containing %q; got:\n%s", sub, strings.Join(c.notes, "\n"))
	return ""
}

func TestSmokeAskApplies(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "main.go")
	src := "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	os.WriteFile(file, []byte(src), 0o644)

	srv, _ := sim.New(sim.Config{Ctx: 16384})
	srv.AppendScript(
		sim.Turn{Content: "Editing.", ToolCalls: []sim.ScriptCall{{Name: "edit", Arguments: json.RawMessage(`{"path":"main.go","old_text":"println(\"hi\")","new_text":"println(\"hello\")"}`)}}},
		sim.Turn{Content: "I changed the greeting."},
	)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	a, b := net.Pipe()
	env := map[string]string{"REIKA_ENDPOINT": ts.URL + "/v1", "XDG_CONFIG_HOME": t.TempDir(), "REIKA_WARMUP": "0"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, b, Options{Getenv: func(k string) string { return env[k] }, StateDir: t.TempDir(), Log: os.Stderr})
	}()
	c := &smokeClient{applied: true}
	c.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(newOutbox(a, nil)))
	c.conn.Go(ctx, c.handle)

	var init map[string]any
	if _, err := c.conn.Call(ctx, "initialize", map[string]any{
		"rootUri": PathToURI(dir),
		"capabilities": map[string]any{
			"window":    map[string]any{"workDoneProgress": true},
			"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true, "changeAnnotationSupport": map[string]any{}}},
			"textDocument": map[string]any{"codeAction": map[string]any{"codeActionLiteralSupport": map[string]any{
				"codeActionKind": map[string]any{"valueSet": []string{"quickfix", "refactor"}}}}},
		},
	}, &init); err != nil {
		t.Fatal(err)
	}
	c.conn.Notify(ctx, "initialized", map[string]any{})
	uri := PathToURI(file)
	c.conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": src}})

	var actions []map[string]any
	if _, err := c.conn.Call(ctx, "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        map[string]any{"start": map[string]any{"line": 3, "character": 0}, "end": map[string]any{"line": 4, "character": 0}},
		"context":      map[string]any{"diagnostics": []any{}},
	}, &actions); err != nil {
		t.Fatal(err)
	}
	if len(actions) < 5 {
		t.Fatalf("code actions = %v, want Reika's five", actions)
	}
	cmd := actions[0]["command"].(map[string]any)
	var res map[string]any
	if _, err := c.conn.Call(ctx, "workspace/executeCommand", map[string]any{"command": cmd["command"], "arguments": cmd["arguments"]}, &res); err != nil {
		t.Fatal(err)
	}
	if res["started"] != true {
		t.Fatalf("reika.ask = %v, want started", res)
	}
	edit := c.waitFor(t, "workspace/applyEdit")
	// An ordinary edit is named by an annotation and applies without a
	// confirmation (the user keeps or undoes it in the editor).
	if !strings.Contains(edit, `"changeAnnotations"`) || strings.Contains(edit, `"needsConfirmation"`) || !strings.Contains(edit, `"newText":"ello"`) {
		t.Errorf("applyEdit = %s", edit)
	}
	c.waitFor(t, "$/progress")
	c.waitFor(t, "I changed the greeting.")
	// The answer in full, for a client that shows the conversation.
	if got := c.waitFor(t, AnswerNotification); !strings.Contains(got, `"answer":"I changed the greeting."`) || !strings.Contains(got, `"summary":"1 change applied to`) {
		t.Errorf("reika/answer = %s, want the answer and what changed", got)
	}
	c.waitFor(t, StatusNotification)

	c.conn.Call(ctx, "shutdown", nil, nil)
	c.conn.Notify(ctx, "exit", nil)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v", err)
		}
	case <-time.After(testslow.Scale(10 * time.Second)):
		t.Fatal("Serve did not return after exit")
	}
}

// With no window known, the user hears at once which setting to set.
func TestNoWindowWarning(t *testing.T) {
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"list","data":[{"id":"some-model","object":"model","owned_by":"someone"}]}`))
	}))
	defer engine.Close()
	a, b := net.Pipe()
	env := map[string]string{"REIKA_ENDPOINT": engine.URL + "/v1", "XDG_CONFIG_HOME": t.TempDir(), "REIKA_WARMUP": "0"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Serve(ctx, b, Options{Getenv: func(k string) string { return env[k] }, StateDir: t.TempDir(), Log: io.Discard})
	c := &smokeClient{}
	c.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(newOutbox(a, nil)))
	c.conn.Go(ctx, c.handle)
	if _, err := c.conn.Call(ctx, "initialize", map[string]any{"rootUri": PathToURI(t.TempDir()), "capabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	c.conn.Notify(ctx, "initialized", map[string]any{})
	msg := c.waitFor(t, "no context window known")
	if !strings.Contains(msg, `"type":2`) || !strings.Contains(msg, "no context window known") || !strings.Contains(msg, "REIKA_CONTEXT_WINDOW") {
		t.Errorf("showMessage = %s, want a warning naming REIKA_CONTEXT_WINDOW", msg)
	}
}
