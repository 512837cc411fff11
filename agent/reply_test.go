package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/contextwin"
)

func TestTextCalls(t *testing.T) {
	known := func(name string) bool { return name == "read" || name == "grep" }
	tests := []struct {
		name, content string
		want          []string // name and arguments of each call
		rest          string
		format        textCallFormat
	}{
		{"hermes", "I will read it.\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"a.go\"}}\n</tool_call>",
			[]string{`read {"path": "a.go"}`}, "I will read it.", hermesFormat},
		{"hermes, two, arguments as a string", "<tool_call>{\"name\":\"read\",\"arguments\":\"{\\\"path\\\":\\\"a.go\\\"}\"}</tool_call>\n<tool_call>{\"name\":\"grep\",\"arguments\":{\"pattern\":\"Sum\"}}</tool_call>",
			[]string{`read {"path":"a.go"}`, `grep {"pattern":"Sum"}`}, "", hermesFormat},
		{"qwen3-coder xml", "<tool_call>\n<function=read>\n<parameter=path>\na.go\n</parameter>\n<parameter=from>\n3\n</parameter>\n</function>\n</tool_call>",
			[]string{`read {"from":3,"path":"a.go"}`}, "", hermesFormat},
		{"bare json", `{"name": "grep", "arguments": {"pattern": "TODO"}}`, []string{`grep {"pattern": "TODO"}`}, "", jsonFormat},
		{"fenced json with parameters", "```json\n{\"name\": \"read\", \"parameters\": {\"path\": \"b.go\"}}\n```", []string{`read {"path": "b.go"}`}, "", jsonFormat},
		{"a list", `[{"name":"read","arguments":{"path":"a.go"}},{"name":"read","arguments":{"path":"b.go"}}]`,
			[]string{`read {"path":"a.go"}`, `read {"path":"b.go"}`}, "", jsonFormat},
		{"harmony", "<|channel|>commentary to=functions.read <|constrain|>json<|message|>{\"path\":\"c.go\"}<|call|>",
			[]string{`read {"path":"c.go"}`}, "", harmonyFormat},
		{"an answer", "The function returns the sum.", nil, "The function returns the sum.", ""},
		{"a tool that is not the session's", `{"name": "delete_everything", "arguments": {}}`, nil, `{"name": "delete_everything", "arguments": {}}`, ""},
		{"JSON that is no call", `{"sum": 3}`, nil, `{"sum": 3}`, ""},
		{"a tag in prose, no call in it", "Models write <tool_call> tags when their parser is off.", nil, "Models write <tool_call> tags when their parser is off.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, rest, f := textCalls(tt.content, known)
			var got []string
			for _, c := range calls {
				got = append(got, c.Name+" "+c.Arguments)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || rest != tt.rest || f != tt.format {
				t.Errorf("textCalls = %q, rest %q, %q; want %q, %q, %q", got, rest, f, tt.want, tt.rest, tt.format)
			}
		})
	}
}

// With the engine's tool-call parser off, the model's calls come as text:
// they run, the user is told once how to turn the parser on, and the run
// goes on to the model's answer instead of ending on the call.
func TestToolCallsAsTextRun(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(
		sim.Turn{Content: "<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"a.go\"}}\n</tool_call>"},
		sim.Turn{Content: `{"name": "read", "arguments": {"path": "b.go"}}`},
		sim.Turn{Content: "Both files are fine."})
	box := &agenttest.Toolbox{Names: []string{"read"}}
	s, err := newSession(sessionConfig{Engine: client, Tools: box, Context: contextwin.Config{Window: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var c collect
	res, err := s.Run(context.Background(), "Check a.go and b.go", c.add)
	if err != nil || res.End != Answered || res.Answer != "Both files are fine." {
		t.Fatalf("Run = %+v, %v; want the answer after the two calls", res, err)
	}
	calls := box.Calls()
	if len(calls) != 2 || calls[0].Arguments != `{"path": "a.go"}` || calls[1].Arguments != `{"path": "b.go"}` {
		t.Errorf("calls = %+v; want a.go then b.go read", calls)
	}
	if w := c.texts(Warning); len(w) != 1 || !strings.Contains(w[0], "--jinja") {
		t.Errorf("warnings = %q; want one that says how to turn the parser on", w)
	}
	msgs := s.Messages()
	if a := msgs[1]; a.Role != contextwin.Assistant || len(a.ToolCalls) != 1 || a.Content != "" {
		t.Errorf("the first reply entered the history as %+v; want its call, no text", a)
	}
}

// No reply ends the session: a call whose arguments the window cannot
// hold is refused and enters the history cut, a reply with more calls
// than a reply may make runs the first of them, and an answer larger
// than the window reaches the user whole and the history cut; each time
// the next ask runs as before.
func TestOversizedRepliesDoNotEndTheSession(t *testing.T) {
	const window = 16384
	srv, client := simEngine(t, sim.Config{Ctx: window})
	big := strings.Repeat("package a // the same line again and again\n", 300) // 13 KB
	args, _ := json.Marshal(map[string]string{"path": "a.go", "content": big})
	many := sim.Turn{}
	for i := range 40 {
		many.ToolCalls = append(many.ToolCalls, sim.ScriptCall{Name: "read", Arguments: []byte(fmt.Sprintf(`{"path":"f%d.go"}`, i))})
	}
	answer := strings.Repeat("The answer goes on. ", 600) // 12 KB: under max_tokens, over what the history takes
	srv.AppendScript(
		sim.Turn{ToolCalls: []sim.ScriptCall{{Name: "write", Arguments: args}}}, sim.Turn{Content: "Could not write it."},
		many, sim.Turn{Content: "Read them."},
		sim.Turn{Content: answer},
		sim.Turn{Content: "Still here."})
	box := &agenttest.Toolbox{Names: []string{"read", "write"}}
	s, err := newSession(sessionConfig{Engine: client, Tools: box, Context: contextwin.Config{Window: window}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ask := func(what string) Result {
		t.Helper()
		res, err := s.Run(context.Background(), what, nil)
		t.Logf("%s: %q", what, clipWithEllipsis(res.Answer, 60))
		if err != nil || res.End != Answered {
			t.Fatalf("%s: Run = %+v, %v; want an answer", what, res, err)
		}
		return res
	}
	ask("write a.go")
	if calls := box.Calls(); len(calls) != 0 {
		t.Fatalf("the oversized write ran: %d calls", len(calls))
	}
	msgs := s.Messages()
	if a, r := msgs[1], msgs[2]; len(a.ToolCalls[0].Arguments) > len(args)/2 || !json.Valid([]byte(a.ToolCalls[0].Arguments)) ||
		!strings.Contains(r.Content, "not run: its arguments are") {
		t.Errorf("the write entered the history as %d bytes of arguments (valid JSON %v), its result %q; want it cut, JSON, refused",
			len(a.ToolCalls[0].Arguments), json.Valid([]byte(a.ToolCalls[0].Arguments)), r.Content)
	}
	ask("read the forty files")
	if calls := box.Calls(); len(calls) != maxCallsPerReply {
		t.Errorf("%d of 40 calls ran; want %d", len(calls), maxCallsPerReply)
	}
	if res := ask("tell me everything"); res.Answer != answer {
		t.Errorf("the user read %d bytes of a %d-byte answer; want it whole", len(res.Answer), len(answer))
	}
	msgs = s.Messages()
	if last := msgs[len(msgs)-1]; len(last.Content) >= len(answer)/2 || !strings.Contains(last.Content, "cut by Reika") {
		t.Errorf("the answer entered the history as %d bytes; want it cut", len(last.Content))
	}
	if res := ask("and now?"); res.Answer != "Still here." {
		t.Errorf("the next ask answered %q", res.Answer)
	}
}

// A call's arguments run while they fit what the reply's earlier calls
// left of its budget (a quarter of the room, cautiously priced): at 16k a
// 3.5 KB edit runs, a second one in the same reply is told the truth —
// the earlier call took the room — and a 13 KB write is told the budget.
func TestCallArgumentsShareTheReplysBudget(t *testing.T) {
	const window = 16384
	srv, client := simEngine(t, sim.Config{Ctx: window})
	edit := func(path string, n int) []byte {
		b, _ := json.Marshal(map[string]string{"path": path, "old": "x", "new": strings.Repeat("y := x + 1 // step\n", n/19)})
		return b
	}
	one, two := edit("a.go", 3500), edit("b.go", 3500)
	srv.AppendScript(
		sim.Turn{ToolCalls: []sim.ScriptCall{{Name: "edit", Arguments: one}, {Name: "edit", Arguments: two}}}, sim.Turn{Content: "Done."})
	box := &agenttest.Toolbox{Names: []string{"edit"}}
	s, err := newSession(sessionConfig{Engine: client, Tools: box, Context: contextwin.Config{Window: window}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if res, err := s.Run(context.Background(), "edit both", nil); err != nil || res.End != Answered {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	calls := box.Calls()
	if len(calls) != 1 || calls[0].Arguments != string(one) {
		t.Fatalf("%d calls ran; want the first edit alone, whole", len(calls))
	}
	msgs := s.Messages()
	refusal := msgs[3].Content
	var took, limit int
	if i := strings.Index(refusal, "the calls before it in the reply took"); i < 0 || !strings.Contains(refusal, "16384-token window") {
		t.Fatalf("the second edit was told %q; want it to say the first took the room, and the window", refusal)
	} else if _, err := fmt.Sscanf(refusal[i:], "the calls before it in the reply took %d of the %d bytes", &took, &limit); err != nil {
		t.Fatalf("the second edit was told %q: %v", refusal, err)
	}
	if took != len(one) || len(one) <= limit/2 || len(one)+len(two) <= limit {
		t.Errorf("told the first call took %d of %d bytes; the calls are %d and %d bytes, the first over half the budget, both over it",
			took, limit, len(one), len(two))
	}
	if strings.Contains(refusal, "more than the") {
		t.Errorf("the second edit was told %q: it fits the budget alone", refusal)
	}
}
