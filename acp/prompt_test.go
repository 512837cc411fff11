package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/internal/testslow"
)

const mainGo = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"

var editMain = sim.Turn{Content: "Editing.", ToolCalls: []sim.ScriptCall{{Name: "edit",
	Arguments: json.RawMessage(`{"path":"main.go","old_text":"println(\"hi\")","new_text":"println(\"hello\")"}`)}}}

// The answer streams as agent_message_chunk, the chip as usage, the
// commands come after session/new, and the turn ends with end_turn.
func TestPromptStreamsTheAnswer(t *testing.T) {
	answer := "The program prints hi, and it has one function, main, which does nothing else at all."
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: answer, Reasoning: "it is short"}}}, map[string]string{"main.go": mainGo})
	c := &client{}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	res, err := cn.prompt(t, id, "What does main.go do?")
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v; want end_turn", res, err)
	}
	chunks := c.matching("agent_message_chunk")
	if got := c.text("agent_message_chunk"); got != answer || len(chunks) < 2 {
		t.Errorf("streamed %q in %d chunks, want %q in several", got, len(chunks), answer)
	}
	if got := c.text("agent_thought_chunk"); got != "it is short" {
		t.Errorf("thought %q, want %q", got, "it is short")
	}
	usage := c.matching("usage_update")
	if len(usage) == 0 || usage[len(usage)-1]["size"] != float64(16384) || usage[len(usage)-1]["used"].(float64) <= 0 {
		t.Errorf("usage updates %v, want the window 16384 and the tokens used", usage)
	}
	for i := 1; i < len(usage); i++ {
		if usage[i]["used"] == usage[i-1]["used"] && usage[i]["size"] == usage[i-1]["size"] {
			t.Errorf("usage update %d repeats the one before: %v", i+1, usage[i])
		}
	}
	waitFor(t, func() bool { return slices.Contains(c.kinds(), "available_commands_update") }, "available_commands_update")
	cmds := c.matching("available_commands_update")[0]["availableCommands"].([]any)
	var names []string
	for _, x := range cmds {
		names = append(names, x.(map[string]any)["name"].(string))
	}
	if strings.Join(names, " ") != "compact recap status new save" {
		t.Errorf("commands %v", names)
	}
}

// A tool call is a tool_call with its kind and place, then an update
// with its status; an edit's update carries the diff. With fs offered
// the change goes to the client's buffer and the disk is left alone;
// without, it lands on the disk.
func TestToolCallWithDiff(t *testing.T) {
	for _, viaClient := range []bool{true, false} {
		name := map[bool]string{true: "client fs", false: "disk"}[viaClient]
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, sim.Config{Script: []sim.Turn{editMain, {Content: "I changed the greeting."}}}, map[string]string{"main.go": mainGo})
			c := &client{fs: viaClient}
			cn := w.connect(c)
			id := cn.newSession(t, w.ws)
			if res, err := cn.prompt(t, id, "Say hello."); err != nil || res.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", res, err)
			}
			abs := filepath.Join(w.ws, "main.go")
			want := strings.Replace(mainGo, "hi", "hello", 1)
			if viaClient {
				if c.buffers[abs] != want || w.read("main.go") != mainGo {
					t.Errorf("the client's buffer %q and the disk %q; want the change in the buffer only", c.buffers[abs], w.read("main.go"))
				}
			} else if got := w.read("main.go"); got != want {
				t.Errorf("main.go on disk = %q, want %q", got, want)
			}
			calls := c.matching("tool_call")
			var edit map[string]any
			for _, tc := range calls {
				if tc["kind"] == "edit" {
					edit = tc
				}
			}
			if edit == nil || edit["title"] != "Edit main.go" || edit["status"] != "in_progress" {
				t.Fatalf("tool calls %v, want an edit of main.go in progress", calls)
			}
			if locs, _ := edit["locations"].([]any); len(locs) != 1 || locs[0].(map[string]any)["path"] != abs {
				t.Errorf("locations %v, want %s", edit["locations"], abs)
			}
			var diff map[string]any
			status := ""
			for _, u := range c.matching("tool_call_update") {
				if u["toolCallId"] != edit["toolCallId"] {
					continue
				}
				if s, ok := u["status"].(string); ok {
					status = s
				}
				for _, x := range asList(u["content"]) {
					if m := x.(map[string]any); m["type"] == "diff" {
						diff = m
						if status == "completed" {
							t.Errorf("the edit's diff came after its call was marked completed: a client shows the call without it")
						}
					}
				}
			}
			if status != "completed" {
				t.Errorf("the edit's status = %q, want completed", status)
			}
			if diff == nil || diff["path"] != abs || diff["oldText"] != mainGo || diff["newText"] != want {
				t.Errorf("diff = %v, want main.go's old and new text", diff)
			}
		})
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// In the ask mode an edit asks first, with its diff; rejected, nothing
// lands and the model is told; allowed once, it lands.
func TestPermissionAnsweredBothWays(t *testing.T) {
	for _, answer := range []string{"deny", "once"} {
		t.Run(answer, func(t *testing.T) {
			w := newWorld(t, sim.Config{Script: []sim.Turn{editMain, {Content: "Done."}}}, map[string]string{"main.go": mainGo})
			c := &client{answer: func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome { return selected(answer) }}
			cn := w.connect(c)
			id := cn.newSession(t, w.ws)
			if _, err := cn.SetSessionMode(cn.ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "ask"}); err != nil {
				t.Fatal(err)
			}
			if res, err := cn.prompt(t, id, "Say hello."); err != nil || res.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", res, err)
			}
			if len(c.asked) != 1 {
				t.Fatalf("asked %d times, want once", len(c.asked))
			}
			q := c.asked[0]
			var kinds []string
			for _, o := range q.Options {
				kinds = append(kinds, string(o.Kind))
			}
			if strings.Join(kinds, " ") != "allow_once reject_once" || len(q.ToolCall.Content) == 0 || q.ToolCall.Content[0].Diff == nil {
				t.Errorf("asked with options %v and content %+v, want allow_once, reject_once and the diff", kinds, q.ToolCall.Content)
			}
			got := w.read("main.go")
			switch answer {
			case "deny":
				if got != mainGo {
					t.Errorf("rejected, main.go = %q", got)
				}
				if req := w.settled(t); !strings.Contains(string(req[len(req)-1].Body), "rejected") {
					t.Errorf("the model was not told the change was rejected")
				}
			case "once":
				if got == mainGo {
					t.Errorf("allowed, main.go is unchanged")
				}
			}
			// The call's end is its last update: a client (acpx) shows an
			// update after it as a step of its own.
			ended := ""
			for _, u := range c.matching("tool_call_update") {
				if ended != "" {
					t.Errorf("the edit's call was updated after it was marked %s: %v", ended, u)
				}
				if st, _ := u["status"].(string); st == "completed" || st == "failed" {
					ended = st
				}
			}
			if want := map[string]string{"deny": "failed", "once": "completed"}[answer]; ended != want {
				t.Errorf("the edit's call ended %q, want %q", ended, want)
			}
		})
	}
}

// A command off the allow list asks, with the answers the tools offer and
// Reject; rejected, it does not run.
func TestCommandAsks(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{
		{ToolCalls: []sim.ScriptCall{{Name: "bash", Arguments: json.RawMessage(`{"command":"rm main.go"}`)}}}, {Content: "It was not removed."}}},
		map[string]string{"main.go": mainGo})
	c := &client{answer: func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome { return selected("deny") }}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	if res, err := cn.prompt(t, id, "Remove main.go."); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	if len(c.asked) != 1 {
		t.Fatalf("asked %d times, want once", len(c.asked))
	}
	q := c.asked[0]
	last := q.Options[len(q.Options)-1]
	if *q.ToolCall.Title != "allow list: rm main.go" || last.Kind != sdk.PermissionOptionKindRejectOnce || q.Options[0].Kind != sdk.PermissionOptionKindAllowOnce {
		t.Errorf("asked %q with %+v", *q.ToolCall.Title, q.Options)
	}
	for _, o := range q.Options {
		if o.OptionId == sdk.PermissionOptionId(tools.ThisRun) && o.Kind != sdk.PermissionOptionKindAllowOnce {
			t.Errorf("\"for this run\" is offered as %s: a client shows it as always", o.Kind)
		}
	}
	calls := c.matching("tool_call")
	if len(calls) == 0 || calls[0]["kind"] != "execute" || string(q.ToolCall.ToolCallId) != calls[0]["toolCallId"] {
		t.Errorf("the question is not on the command's tool call: %v, asked on %s", calls, q.ToolCall.ToolCallId)
	}
	if w.read("main.go") != mainGo {
		t.Error("main.go changed")
	}
}

// session/cancel while the answer streams ends the turn with cancelled,
// at once; the session takes the next prompt.
func TestCancelMidStream(t *testing.T) {
	long := strings.Repeat("This is a long answer that streams slowly. ", 40)
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: long, Fault: &sim.Fault{ChunkLatency: 50 * time.Millisecond}}, {Content: "Next."}}}, nil)
	c := &client{}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	var once sync.Once
	c.mu.Lock()
	c.onChunk = func() {
		once.Do(func() { go cn.Cancel(cn.ctx, sdk.CancelNotification{SessionId: id}) })
	}
	c.mu.Unlock()
	start := time.Now()
	res, err := cn.prompt(t, id, "Tell me a long story.")
	if err != nil || res.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("prompt = %+v, %v; want cancelled", res, err)
	}
	if got := c.text("agent_message_chunk"); got == long || got == "" {
		t.Errorf("streamed %d of %d bytes; want a part", len(got), len(long))
	}
	t.Logf("cancelled after %v", time.Since(start).Round(time.Millisecond))
	c.mu.Lock()
	c.onChunk, c.updates = nil, nil
	c.mu.Unlock()
	if res, err := cn.prompt(t, id, "Go on."); err != nil || res.StopReason != sdk.StopReasonEndTurn || c.text("agent_message_chunk") != "Next." {
		t.Errorf("the next prompt = %+v, %v, %q", res, err, c.text("agent_message_chunk"))
	}
}

func waitFor(t *testing.T, ok func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(testslow.Scale(5 * time.Second)); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s", what)
		}
	}
}

// A command's output, as the model reads it, is the tool call's content.
func TestCommandOutputShown(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{
		{ToolCalls: []sim.ScriptCall{{Name: "glob", Arguments: json.RawMessage(`{"pattern":"*.go"}`)}}}, {Content: "One file."}}},
		map[string]string{"main.go": mainGo})
	c := &client{}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	if _, err := cn.prompt(t, id, "Which Go files?"); err != nil {
		t.Fatal(err)
	}
	calls := c.matching("tool_call")
	if len(calls) != 1 || calls[0]["kind"] != "search" || calls[0]["title"] != "Find *.go" {
		t.Fatalf("tool calls %v", calls)
	}
	shown := ""
	for _, u := range c.matching("tool_call_update") {
		for _, x := range asList(u["content"]) {
			if m, ok := x.(map[string]any)["content"].(map[string]any); ok {
				shown += m["text"].(string)
			}
		}
	}
	if !strings.Contains(shown, "main.go") {
		t.Errorf("the glob's output %q does not name main.go", shown)
	}
}

// The engine cuts its reply short and the request is sent again: what the
// client has is not sent twice when the new reply starts the same, and a
// status line says so when it does not.
func TestRetriedReplyNotShownTwice(t *testing.T) {
	answer := "The program prints hi, and it has one function, main, which does nothing else at all."
	for _, tc := range []struct {
		name, again string
		told        bool
	}{
		{"the same reply", answer, false},
		{"another reply", "Another answer altogether, from its first word to its last one.", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: answer, Fault: &sim.Fault{CutAfter: 3}}, {Content: tc.again}}}, nil)
			c := &client{}
			cn := w.connect(c)
			id := cn.newSession(t, w.ws)
			res, err := cn.prompt(t, id, "What does it print?")
			if err != nil || res.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", res, err)
			}
			got := c.text("agent_message_chunk")
			told := false
			for _, tc := range c.matching("tool_call") {
				told = told || strings.Contains(tc["title"].(string), "starts again below")
			}
			if !tc.told {
				if got != answer {
					t.Errorf("the client has %q, want the answer once", got)
				}
			} else if !strings.HasSuffix(got, tc.again) || !told {
				t.Errorf("the client has %q (told %v), want the new answer after a status line", got, told)
			}
		})
	}
}

// The commands of a new session come after the answer that gives the
// client its id (a client drops updates of a session it does not know):
// sent before it, they fail this test; sent from a goroutine at the same
// time, they came after it here too, and only sometimes would.
func TestCommandsAfterTheSession(t *testing.T) {
	w := newWorld(t, sim.Config{}, nil)
	r := w.raw(t)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	if m := r.next(t); m["id"] != float64(1) {
		t.Fatalf("initialize answered %v", m)
	}
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":`+strconv.Quote(w.ws)+`,"mcpServers":[]}}`)
	var order []string
	for len(order) < 2 {
		m := r.next(t)
		switch {
		case m["id"] == float64(2):
			order = append(order, "answer")
		case m["method"] == "session/update":
			order = append(order, m["params"].(map[string]any)["update"].(map[string]any)["sessionUpdate"].(string))
		}
	}
	if strings.Join(order, " ") != "answer available_commands_update" {
		t.Errorf("the client got %v", order)
	}
}

// A change to a protected path asks first, in the normal mode too, with
// why it is protected; rejected, nothing is written.
func TestProtectedPathAsks(t *testing.T) {
	for _, answer := range []string{"deny", "once"} {
		t.Run(answer, func(t *testing.T) {
			w := newWorld(t, sim.Config{Script: []sim.Turn{
				{ToolCalls: []sim.ScriptCall{{Name: "write", Arguments: json.RawMessage(`{"path":".zed/tasks.json","content":"[]\n"}`)}}},
				{Content: "Done."}}}, nil)
			c := &client{answer: func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome { return selected(answer) }}
			cn := w.connect(c)
			id := cn.newSession(t, w.ws)
			if res, err := cn.prompt(t, id, "Add a Zed task file."); err != nil || res.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", res, err)
			}
			if len(c.asked) != 1 {
				t.Fatalf("asked %d times, want once", len(c.asked))
			}
			q := c.asked[0]
			why := ""
			for _, x := range q.ToolCall.Content {
				if x.Content != nil && x.Content.Content.Text != nil {
					why += x.Content.Content.Text.Text
				}
			}
			if *q.ToolCall.Title != "Create .zed/tasks.json" || !strings.Contains(why, "Zed reads it") {
				t.Errorf("asked %q because %q", *q.ToolCall.Title, why)
			}
			_, err := os.Stat(filepath.Join(w.ws, ".zed", "tasks.json"))
			if written := err == nil; written != (answer == "once") {
				t.Errorf("answered %s, written %v", answer, written)
			}
		})
	}
}

// With terminal/* offered, a command the user let out of the sandbox runs
// in the client's terminal, shown on its tool call; its output and status
// reach the model, and the terminal is released.
func TestCommandInTheClientsTerminal(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{
		{ToolCalls: []sim.ScriptCall{{Name: "bash", Arguments: json.RawMessage(`{"command":"echo from-the-terminal; exit 3","outside_sandbox":true}`)}}},
		{Content: "It exited 3."}}}, nil)
	c := &client{terminal: true, answer: func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome { return selected("once") }}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	if res, err := cn.prompt(t, id, "Run it outside."); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	if len(c.terminals) != 1 || c.terminals["term-1"].command != "bash -c echo from-the-terminal; exit 3" {
		t.Fatalf("terminals %v", c.terminals)
	}
	if strings.Join(c.released, " ") != "term-1" {
		t.Errorf("released %v, want term-1", c.released)
	}
	shown := false
	for _, u := range c.matching("tool_call_update") {
		for _, x := range asList(u["content"]) {
			shown = shown || (x.(map[string]any)["type"] == "terminal" && x.(map[string]any)["terminalId"] == "term-1")
		}
	}
	if !shown {
		t.Errorf("the terminal is not on the tool call:\n%s", c.all())
	}
	reqs := w.settled(t)
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, `from-the-terminal\n[exit status 3]`) {
		t.Errorf("the model did not get the terminal's output and status")
	}
}

// A change is judged again just before it is written: sub/d/config is an
// ordinary file when the model proposes the change, and while the user is
// asked (the ask mode) sub/d becomes a link to ../.git. Nothing is
// written, to the disk or through the client, and the model hears why.
func TestEditRejudgedBeforeWriting(t *testing.T) {
	gitConfig := "[core]\n\tbare = false\n"
	for _, viaClient := range []bool{false, true} {
		t.Run(map[bool]string{false: "disk", true: "client"}[viaClient], func(t *testing.T) {
			w := newWorld(t, sim.Config{Script: []sim.Turn{
				{ToolCalls: []sim.ScriptCall{{Name: "edit", Arguments: json.RawMessage(`{"path":"sub/d/config","old_text":"[core]\n","new_text":"[core]\n\tfsmonitor = touch pwned\n"}`)}}},
				{Content: "Done."}}}, map[string]string{".git/config": gitConfig, "sub/d/config": gitConfig})
			c := &client{fs: viaClient, answer: func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
				os.RemoveAll(filepath.Join(w.ws, "sub", "d"))
				if err := os.Symlink("../.git", filepath.Join(w.ws, "sub", "d")); err != nil {
					t.Error(err)
				}
				return selected("once")
			}}
			cn := w.connect(c)
			id := cn.newSession(t, w.ws)
			if _, err := cn.SetSessionMode(cn.ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "ask"}); err != nil {
				t.Fatal(err)
			}
			if res, err := cn.prompt(t, id, "Tidy the config."); err != nil || res.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", res, err)
			}
			if got := w.read(".git/config"); got != gitConfig || len(c.written) != 0 {
				t.Errorf(".git/config = %q, written through the client %v; want nothing written", got, c.written)
			}
			if req := w.requests(t, 2); !strings.Contains(string(req[len(req)-1].Body), "now leads through a symbolic link to .git/config") {
				t.Errorf("the model was not told where the path leads now")
			}
		})
	}
}

// In the plan mode the model's edit is refused, with a reason it can act
// on; nothing is asked and the file is as it was.
func TestPlanModeRefusesEdits(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{editMain, {Content: "1. Change the greeting in main.go."}}}, map[string]string{"main.go": mainGo})
	c := &client{answer: func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome { return selected("once") }}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	if _, err := cn.SetSessionMode(cn.ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	if res, err := cn.prompt(t, id, "Say hello."); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	if len(c.asked) != 0 {
		t.Errorf("asked %d times in the plan mode, want never", len(c.asked))
	}
	if got := w.read("main.go"); got != mainGo {
		t.Errorf("plan mode: main.go = %q, want it unchanged", got)
	}
	req := w.requests(t, 2)
	if body := string(req[len(req)-1].Body); !strings.Contains(body, "plan mode: no edits") {
		t.Errorf("the model was not told the plan mode refuses edits: %s", body)
	}
	if body := string(req[0].Body); !strings.Contains(body, "[Plan mode: read-only.") {
		t.Errorf("the plan mode's instruction has no preface")
	}
}
