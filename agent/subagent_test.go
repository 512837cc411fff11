package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

func subagentCall(task, report string) sim.Turn {
	args, _ := json.Marshal(map[string]string{"task": task, "report": report})
	return sim.Turn{Content: "Delegating.", ToolCalls: []sim.ScriptCall{{Name: SubagentTool, Arguments: args}}}
}

func editTurn(path string) sim.Turn {
	return sim.Turn{Content: "Fixing it.", ToolCalls: []sim.ScriptCall{{Name: "edit", Arguments: []byte(`{"path":"` + path + `"}`)}}}
}

// readBox answers reads with a numbered file of n lines, edits with ok.
func readBox(n int) *agenttest.Toolbox {
	return &agenttest.Toolbox{Names: []string{"read", "edit", "bash"}, Answer: func(c engine.ToolCall) tools.Result {
		var a struct{ Path string }
		json.Unmarshal([]byte(c.Arguments), &a)
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "%6d\tvalue%d := compute(%d) // %s\n", i, i, i, a.Path)
		}
		return tools.Result{Content: b.String(), Payload: contextwin.Payload{Kind: contextwin.Read, Path: a.Path, From: 1, To: n, Total: n}}
	}}
}

// modeBox records the run mode each call ran in.
type modeBox struct {
	*agenttest.Toolbox
	modes []tools.Mode
}

func (b *modeBox) Run(ctx context.Context, call engine.ToolCall) tools.Result {
	b.modes = append(b.modes, tools.RunMode(ctx))
	return b.Toolbox.Run(ctx, call)
}

// TestSubagentReports: the parent delegates; the subagent reads with the
// parent's tools, is refused an edit (read-only), answers, and its answer
// is the call's result in the parent's next request; its steps reach the
// parent's progress; its facts are a Report for the planner.
func TestSubagentReports(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 16384})
	srv.AppendScript(
		subagentCall("Find where the cache is invalidated", "the file and line, as location: PATH:LINE"),
		readTurn("store.go"),
		editTurn("store.go"),
		sim.Turn{Content: "The cache is invalidated in one place.\nlocation: store.go:12"},
		sim.Turn{Content: "It is store.go:12."},
	)
	box := &modeBox{Toolbox: readBox(40)}
	s, err := newSession(sessionConfig{Engine: client, Tools: box, Context: contextwin.Config{Window: 16384}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var c collect
	res, err := s.Run(context.Background(), "Where is the cache invalidated?", c.add)
	if err != nil || res.Answer != "It is store.go:12." {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	var names []string
	for _, call := range box.Calls() {
		names = append(names, call.Name)
	}
	if got := strings.Join(names, " "); got != "read" {
		t.Errorf("the toolbox ran %q, want the subagent's read alone (its edit refused)", got)
	}
	if len(box.modes) != 1 || box.modes[0] != tools.Plan {
		t.Errorf("the subagent's read ran in modes %q, want the plan mode (read-only, nothing asks)", box.modes)
	}
	steps := c.texts(Delegated)
	if len(steps) < 2 || steps[0] != "subagent 1: read store.go" {
		t.Errorf("subagent steps = %q, want its read and edit", steps)
	}
	reqs := recorded(t, srv, 5)
	last := string(reqs[4].Body)
	if !strings.Contains(last, "location: store.go:12") {
		t.Errorf("the parent's request after the subagent lacks its report")
	}
	if strings.Contains(last, "value1 := compute") {
		t.Errorf("the parent's request carries what the subagent read: the subagent's context leaked into it")
	}
	child := string(reqs[1].Body)
	if !strings.Contains(child, "You are a subagent") || strings.Contains(child, "Where is the cache invalidated?") {
		t.Errorf("the subagent's first request does not start from its task alone")
	}
	if !strings.Contains(string(reqs[3].Body), "read-only subagent") {
		t.Errorf("the subagent was not told its edit was refused")
	}
	msgs := s.Messages()
	var report *contextwin.Message
	for i := range msgs {
		if msgs[i].Role == contextwin.Tool && msgs[i].Payload.Kind == contextwin.Report {
			report = &msgs[i]
		}
	}
	if report == nil || !strings.Contains(report.Content, "location: store.go:12") {
		t.Errorf("the parent's history has no Report result with the report")
	}
	if st := s.Stats(); st.Subagents != 1 || st.SubagentPrefilled == 0 || st.Requests != 2 {
		t.Errorf("stats = %+v, want 1 subagent with its own figures and the parent's 2 requests", st)
	}
}

// TestSubagentBounded: a subagent that never stops is stopped at its
// rounds, asked for its report with tools off, and reports.
func TestSubagentBounded(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 65536})
	turns := []sim.Turn{subagentCall("Read everything", "what you found")}
	for i := 0; i < subagentRounds; i++ {
		turns = append(turns, readTurn(fmt.Sprintf("f%d.go", i)))
	}
	turns = append(turns, sim.Turn{Content: "found: 30 files"}, sim.Turn{Content: "Done."})
	srv.AppendScript(turns...)
	s, _ := newSession(sessionConfig{Engine: client, Tools: readBox(5), Context: contextwin.Config{Window: 65536}})
	defer s.Close()
	res, err := s.Run(context.Background(), "Explore", nil)
	if err != nil || res.Answer != "Done." {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	reqs := recorded(t, srv, len(turns))
	report := reqs[len(reqs)-2]
	if report.ToolChoice != "none" || !strings.Contains(string(report.Body), "Write your report now") {
		t.Errorf("the request after the subagent's %d rounds = tool_choice %q; want the report round with tools off", subagentRounds, report.ToolChoice)
	}
	if !strings.Contains(string(reqs[len(reqs)-1].Body), "found: 30 files") {
		t.Errorf("the parent did not get the forced report")
	}
}

// TestSubagentLimit: a run starts at most maxSubagents; a subagent starts
// none.
func TestSubagentLimit(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 32768})
	var turns []sim.Turn
	for i := 0; i <= maxSubagents; i++ {
		turns = append(turns, subagentCall("look", "what"))
		if i < maxSubagents {
			turns = append(turns, subagentCall("nested", "what"), sim.Turn{Content: fmt.Sprintf("report %d", i)})
		}
	}
	turns = append(turns, sim.Turn{Content: "Done."})
	srv.AppendScript(turns...)
	s, _ := newSession(sessionConfig{Engine: client, Tools: readBox(5), Context: contextwin.Config{Window: 32768}})
	defer s.Close()
	if _, err := s.Run(context.Background(), "Go", nil); err != nil {
		t.Fatal(err)
	}
	reqs := recorded(t, srv, len(turns))
	if !strings.Contains(string(reqs[2].Body), "cannot start another") {
		t.Errorf("a subagent's subagent call was not refused")
	}
	if !strings.Contains(string(reqs[len(reqs)-1].Body), fmt.Sprintf("had its %d subagents", maxSubagents)) {
		t.Errorf("the subagent call past the limit was not refused")
	}
}

// TestSubagentSlots: on a llama.cpp engine of two slots the subagent
// takes the other one and the parent's next request reuses its whole
// previous prompt; on one slot (the simulator keeps no copy of a prompt
// its slot drops) the parent's cache is gone, and the session learns it.
func TestSubagentSlots(t *testing.T) {
	for _, slots := range []int{2, 1} {
		t.Run(fmt.Sprint(slots, " slots"), func(t *testing.T) {
			srv, opts := simServer(t, sim.Config{Ctx: 16384, Slots: slots})
			srv.AppendScript(readTurn("a.go"), subagentCall("Find X", "where X is"), readTurn("b.go"),
				sim.Turn{Content: "X: b.go:3"}, sim.Turn{Content: "Done."})
			s, _ := newSession(sessionConfig{Engine: engine.NewClient(opts), Tools: readBox(60), Context: contextwin.Config{Window: 16384}})
			defer s.Close()
			s.slot = slotState{id: 0, pin: slots > 1, key: "parent", opts: opts}
			if _, err := s.Run(context.Background(), "Where is X?", nil); err != nil {
				t.Fatal(err)
			}
			reqs := recorded(t, srv, 5)
			parentBefore, child, parentAfter := reqs[1], reqs[2], reqs[4]
			if slots > 1 && child.Slot == parentBefore.Slot {
				t.Errorf("the subagent used the parent's slot %d of %d", child.Slot, slots)
			}
			reused := parentAfter.CacheN >= parentBefore.PromptTokens
			if slots > 1 && !reused {
				t.Errorf("after the subagent the parent reused %d tokens of its %d-token previous prompt, want all", parentAfter.CacheN, parentBefore.PromptTokens)
			}
			if slots == 1 && reused {
				t.Errorf("on one slot the parent reused its whole previous prompt (%d tokens): the subagent did not use the slot?", parentAfter.CacheN)
			}
			if s.slotLoses != (slots == 1) {
				t.Errorf("%d slots: the session learnt that its slot loses its prompt = %v, want %v", slots, s.slotLoses, slots == 1)
			}
		})
	}
}

// TestSubagentCancel: cancelling the run while its subagent works stops
// the subagent too; the run ends cancelled, without the subagent's later
// rounds.
func TestSubagentCancel(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 16384})
	turns := []sim.Turn{subagentCall("Read everything", "what you found")}
	for i := 0; i < 10; i++ {
		turns = append(turns, readTurn(fmt.Sprintf("f%d.go", i)))
	}
	srv.AppendScript(turns...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reads := 0
	box := &agenttest.Toolbox{Names: []string{"read"}, Answer: func(c engine.ToolCall) tools.Result {
		if reads++; reads == 3 {
			cancel()
		}
		return tools.Result{Content: "     1\tpackage x\n", Payload: contextwin.Payload{Kind: contextwin.Read, Path: "x.go", From: 1, To: 1, Total: 1}}
	}}
	s, _ := newSession(sessionConfig{Engine: client, Tools: box, Context: contextwin.Config{Window: 16384}})
	defer s.Close()
	res, _ := s.Run(ctx, "Explore", nil)
	if res.End != Canceled {
		t.Errorf("Run ended %v, want canceled", res.End)
	}
	if n := len(box.Calls()); n != 3 {
		t.Errorf("the subagent ran %d reads, want it stopped at the third", n)
	}
}

// Every request of a session names it to the engine's routers, the same
// id across its requests; a subagent's names its own and its parent's.
func TestSessionIdentity(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 16384})
	srv.AppendScript(readTurn("a.go"), subagentCall("Find X", "where"), sim.Turn{Content: "X: a.go:1"}, sim.Turn{Content: "Done."})
	s, _ := newSession(sessionConfig{Engine: client, Tools: readBox(5), Context: contextwin.Config{Window: 16384}})
	defer s.Close()
	if _, err := s.Run(context.Background(), "Where is X?", nil); err != nil {
		t.Fatal(err)
	}
	reqs := recorded(t, srv, 4)
	parent := reqs[0].Headers.Get("x-session-id")
	if parent == "" || reqs[1].Headers.Get("x-session-id") != parent || reqs[3].Headers.Get("x-session-id") != parent {
		t.Errorf("the session's requests name %q, %q, %q: want one id", parent, reqs[1].Headers.Get("x-session-id"), reqs[3].Headers.Get("x-session-id"))
	}
	if child := reqs[2].Headers; child.Get("x-session-id") != parent+"/sub-1" || child.Get("X-Dynamo-Parent-Session-ID") != parent {
		t.Errorf("the subagent's request names %q, parent %q", child.Get("x-session-id"), child.Get("X-Dynamo-Parent-Session-ID"))
	}
}
