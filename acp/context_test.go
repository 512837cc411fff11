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
	reqs := w.requests(t, 2)
	first, last := string(reqs[0].Body), string(reqs[len(reqs)-1].Body)
	if !strings.Contains(first, `What does this print?\n\n(file: main.go)\n\nmain.go:\n`+"```") || !strings.Contains(first, "main.go:\\n```\\n"+strings.ReplaceAll(selection, `"`, `\"`)) {
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
	reqs := w.settled(t)
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

// The user types in the file between the agent's reading it and its
// change: a line above the change, and the change is placed on their
// text, the model told; the changed line itself, and the change is
// refused, their text kept and the model told why.
func TestChangePlacedOnTheUsersText(t *testing.T) {
	for _, tc := range []struct {
		name   string
		typed  func(string) string
		placed bool
	}{
		{"a line above", func(s string) string { return "// typed by the user\n" + s }, true},
		{"the same line", func(s string) string { return strings.Replace(s, `println("hi")`, `println("hi there")`, 1) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, sim.Config{Script: []sim.Turn{editMain, {Content: "Done."}}}, map[string]string{"main.go": mainGo})
			abs := filepath.Join(w.ws, "main.go")
			c := &client{fs: true, buffers: map[string]string{abs: mainGo}}
			c.afterRead = func(n int) {
				if n == 1 { // the edit tool has read the file
					c.buffers[abs] = tc.typed(mainGo)
				}
			}
			cn := w.connect(c)
			id := cn.newSession(t, w.ws)
			if _, err := cn.Prompt(cn.ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{
				sdk.TextBlock("Say hello."), sdk.ResourceLinkBlock("main.go", "file://"+abs)}}); err != nil {
				t.Fatal(err)
			}
			reqs := w.requests(t, 2)
			told := string(reqs[len(reqs)-1].Body)
			got := c.buffers[abs]
			if tc.placed {
				if want := tc.typed(strings.Replace(mainGo, "hi", "hello", 1)); got != want {
					t.Errorf("the buffer = %q, want %q", got, want)
				}
				if !strings.Contains(told, "placed on their text") {
					t.Errorf("the model was not told the change was placed on the user's text")
				}
			} else {
				if got != tc.typed(mainGo) {
					t.Errorf("the buffer = %q, want the user's text kept", got)
				}
				if !strings.Contains(told, "no longer matches") {
					t.Errorf("the model was not told why the change was refused")
				}
			}
		})
	}
}

// A prompt of several blocks reaches the model as separate paragraphs,
// and an image the model cannot take is named in its place and told to
// the user; a prompt of an image alone is refused.
func TestPromptBlocksAreParagraphs(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "It greets."}}}, map[string]string{"main.go": mainGo})
	c := &client{}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	res, err := cn.Prompt(cn.ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("---"), sdk.TextBlock("Explain greet.go"), sdk.ImageBlock("iVBORw0KGgo=", "image/png"),
	}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	body := string(w.requests(t, 1)[0].Body)
	if !strings.Contains(body, `---\n\nExplain greet.go\n\n(the user attached an image`) {
		t.Errorf("the blocks did not reach the model as paragraphs:\n%s", body)
	}
	told := false
	for _, tc := range c.matching("tool_call") {
		if title, _ := tc["title"].(string); strings.Contains(title, "an image was left out") {
			told = true
		}
	}
	if !told {
		t.Errorf("the user was not told the image was left out")
	}
	if _, err := cn.Prompt(cn.ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.ImageBlock("iVBORw0KGgo=", "image/png")}}); err == nil {
		t.Errorf("a prompt of an image alone was run, want it refused")
	}
}

// An engine that takes images (llama.cpp's /props modalities.vision)
// gets a prompt's image as an image_url content part after its text, and
// the user is told nothing was left out.
func TestPromptImageReachesAVisionModel(t *testing.T) {
	w := newWorld(t, sim.Config{Vision: true, Script: []sim.Turn{{Content: "A cat."}}}, nil)
	c := &client{}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	res, err := cn.Prompt(cn.ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("What is drawn here?"), sdk.ImageBlock("iVBORw0KGgo=", "image/png"),
	}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(w.requests(t, 1)[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	last := body.Messages[len(body.Messages)-1]
	want := `[{"type":"text","text":"What is drawn here?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]`
	if last.Role != "user" || string(last.Content) != want {
		t.Errorf("the user's message went as %s %s, want %s", last.Role, last.Content, want)
	}
	for _, tc := range c.matching("tool_call") {
		if title, _ := tc["title"].(string); strings.Contains(title, "left out") {
			t.Errorf("the user was told %q", title)
		}
	}
}

// The editor's diagnostics a client embeds in the prompt (Zed's
// @diagnostics mention: a text resource under its own URI) reach the
// model with the prompt, under that URI.
func TestPromptEmbeddedDiagnostics(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "Fixed."}}}, map[string]string{"main.go": mainGo})
	cn := w.connect(&client{})
	id := cn.newSession(t, w.ws)
	const uri, diags = "zed:///agent/diagnostics?include_warnings=true", "main.go:4: error: undefined: nope"
	res, err := cn.Prompt(cn.ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("Fix these."),
		{Resource: &sdk.ContentBlockResource{Resource: sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: uri, Text: diags}}}},
	}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	if body := string(w.requests(t, 1)[0].Body); !strings.Contains(body, `Fix these.\n\n`+uri+`:\n`+"```"+`\n`+diags) {
		t.Errorf("the instruction lacks the embedded diagnostics:\n%s", body)
	}
}
