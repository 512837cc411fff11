package acp

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent/sim"
)

// A file the prompt links is read from the client (its unsaved text),
// and a selection it embeds reaches the model with its path.
func TestPromptContextFromTheClient(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{
		{ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: json.RawMessage(`{"path":"main.go"}`)}}},
		{Content: "It says unsaved."},
	}}, map[string]string{"main.go": mainGo})
	abs := filepath.Join(w.ws, "main.go")
	unsaved := strings.Replace(mainGo, "hi", "unsaved", 1)
	c := &client{fs: true, buffers: map[string]string{abs: unsaved}}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	selection := "println(\"unsaved\")"
	res, err := cn.Prompt(cn.ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("What does this print?"),
		sdk.ResourceLinkBlock("main.go", "file://"+abs),
		{Resource: &sdk.ContentBlockResource{Resource: sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file://" + abs, Text: selection}}}},
	}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	reqs := w.engine.Requests()
	first, last := string(reqs[0].Body), string(reqs[len(reqs)-1].Body)
	if !strings.Contains(first, `(file: main.go)`) || !strings.Contains(first, "main.go:\\n```\\n"+strings.ReplaceAll(selection, `"`, `\"`)) {
		t.Errorf("the instruction lacks the link or the selection:\n%s", first)
	}
	if !strings.Contains(last, "println(\\\"unsaved\\\")") {
		t.Errorf("the read did not return the client's unsaved text:\n%s", last)
	}
}

// Appends stay appends: every request of a session of several prompts,
// tool calls and results starts with the messages of the one before.
func TestAppendsStayAppends(t *testing.T) {
	var script []sim.Turn
	for i := 0; i < 3; i++ {
		script = append(script,
			sim.Turn{Content: "Reading.", ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: json.RawMessage(`{"path":"main.go"}`)}}},
			sim.Turn{Content: "It prints hi."})
	}
	w := newWorld(t, sim.Config{Script: script}, map[string]string{"main.go": mainGo})
	cn := w.connect(&client{})
	id := cn.newSession(t, w.ws)
	for _, p := range []string{"What does it print?", "And again?", "Once more?"} {
		if _, err := cn.prompt(t, id, p); err != nil {
			t.Fatal(err)
		}
	}
	reqs := w.engine.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want 6", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		prev, cur := messagesOf(t, reqs[i-1].Body), messagesOf(t, reqs[i].Body)
		if len(cur) <= len(prev) || !reflect.DeepEqual(cur[:len(prev)], prev) {
			t.Errorf("request %d does not append to request %d", i+1, i)
		}
	}
}
