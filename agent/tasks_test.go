package agent

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

// The model lists three steps, applies an edit for the first, runs a
// passing command for the second and claims all three done: the first
// two are ticked from what Reika saw, the third stays claimed.
func TestTasksTickedFromWhatRan(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	call := func(name, args string) sim.ScriptCall {
		return sim.ScriptCall{Name: name, Arguments: json.RawMessage(args)}
	}
	srv, client := simEngine(t, sim.Config{Ctx: 16384})
	srv.AppendScript(
		sim.Turn{Content: "Plan:\n- [ ] make main print 1 in main.go\n- [ ] check it with `cat main.go`\n- [ ] tell the user\n",
			ToolCalls: []sim.ScriptCall{call("edit", `{"path":"main.go","old_text":"func main() {}","new_text":"func main() { println(1) }"}`)}},
		sim.Turn{ToolCalls: []sim.ScriptCall{call("bash", `{"command":"cat main.go"}`)}},
		sim.Turn{Content: "Done:\n- [x] make main print 1 in main.go\n- [x] check it with `cat main.go`\n- [x] tell the user\n"},
	)
	ts, err := tools.New(tools.Config{Folders: []string{ws}, BashAllow: []string{"cat"}, Sandbox: plainSandbox{}, Proposer: func(_ context.Context, p tools.Proposal) (tools.Outcome, error) {
		return tools.Outcome{Applied: true}, os.WriteFile(p.Abs, []byte(p.New), 0o644)
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSession(sessionConfig{Engine: client, Tools: ts, Workspace: ws, TranscriptDir: t.TempDir(), Context: contextwin.Config{Window: 16384}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var c collect
	res, err := s.Run(context.Background(), "Make main print 1.", c.add)
	if err != nil {
		t.Fatal(err)
	}
	want := []Task{
		{Text: "make main print 1 in main.go", Status: TaskDone, Seen: "edit applied to main.go"},
		{Text: "check it with `cat main.go`", Status: TaskDone, Seen: "`cat main.go` exited 0"},
		{Text: "tell the user", Status: TaskClaimed},
	}
	if d := cmp.Diff(want, res.Tasks); d != "" {
		t.Errorf("the run's tasks (-want +got):\n%s", d)
	}
	var statuses [][]TaskStatus
	for _, e := range c.events {
		if e.Kind != TasksChanged {
			continue
		}
		var st []TaskStatus
		for _, task := range e.Tasks {
			st = append(st, task.Status)
		}
		statuses = append(statuses, st)
	}
	wantStatuses := [][]TaskStatus{
		{TaskPending, TaskPending, TaskPending}, // stated
		{TaskDone, TaskPending, TaskPending},    // the edit applied
		{TaskDone, TaskDone, TaskPending},       // cat exited 0
		{TaskDone, TaskDone, TaskClaimed},       // the model's [x]
	}
	if d := cmp.Diff(wantStatuses, statuses); d != "" {
		t.Errorf("TasksChanged events (-want +got):\n%s", d)
	}
}

// plainSandbox starts commands as they are: the allow list then lets a
// command run after an edit without asking.
type plainSandbox struct{}

func (plainSandbox) Start(cmd *exec.Cmd, _ bool) error { return cmd.Start() }
func (plainSandbox) Env() []string                     { return os.Environ() }
func (plainSandbox) Explain(string) string             { return "" }

// What ticks a step, and what does not.
func TestTaskList(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.go"), nil, 0o644)
	bash := func(cmd string) engine.ToolCall {
		b, _ := json.Marshal(map[string]string{"command": cmd})
		return engine.ToolCall{Name: tools.BashTool, Arguments: string(b)}
	}
	edit := func(path string, applied bool) tools.Result {
		return tools.Result{Proposal: &tools.Proposal{Path: path}, Outcome: &tools.Outcome{Applied: applied}}
	}
	l := newTaskList(ws)
	l.isCommand = func(w string) bool { return w == "go" || w == "make" }
	if l.stated("- [ ] only one step\n") || l.stated("1. a\n2. b\n") {
		t.Fatal("a reply with no task list of two steps changed the list")
	}
	l.stated("- [ ] edit a.go and b.go\n- [ ] run `go test ./...`\n- [x] rename `Foo` to `Bar`\n- [ ] run `make`\n")
	l.saw(bash("go test ./..."), tools.Result{Passed: true}) // stated before: counts
	l.saw(engine.ToolCall{Name: tools.EditTool}, edit("a.go", true))
	l.saw(engine.ToolCall{Name: tools.WriteTool}, edit("b.go", false)) // proposed, not applied
	l.saw(bash("make"), tools.Result{Error: true})                     // refused: never ran
	got := l.list()
	want := []TaskStatus{TaskPending, TaskDone, TaskClaimed, TaskPending}
	for i, task := range got {
		if task.Status != want[i] {
			t.Errorf("step %q = %s, want %s", task.Text, task.Status, want[i])
		}
	}
	// The next list keeps what was seen of the same steps; b.go lands;
	// the tests fail now.
	l.stated("- [x] edit a.go and b.go\n- [x] run `go test ./...`: ok\n")
	l.saw(engine.ToolCall{Name: tools.EditTool}, edit("b.go", true))
	l.saw(bash("gofmt -l . && go test ./..."), tools.Result{Passed: false})
	got = l.list()
	if len(got) != 2 || got[0].Status != TaskDone || got[1].Status != TaskClaimed {
		t.Errorf("after the second list = %+v, want done, then claimed (the tests failed since)", got)
	}
	l.saw(bash("go vet ./... && go test ./..."), tools.Result{Passed: true})
	if got = l.list(); got[1].Status != TaskDone {
		t.Errorf("a passing a && b chain did not tick its part: %+v", got[1])
	}

	// A file named by its last elements is the proposed path it ends,
	// the applied one first.
	l = newTaskList(ws)
	l.stated("- [ ] change run.go\n- [ ] change other.go\n")
	l.saw(engine.ToolCall{Name: tools.EditTool}, edit("b/run.go", false))
	l.saw(engine.ToolCall{Name: tools.EditTool}, edit("a/run.go", false))
	if got = l.list(); got[0].Status != TaskPending {
		t.Errorf("run.go proposed, not applied: %+v", got[0])
	}
	l.saw(engine.ToolCall{Name: tools.EditTool}, edit("b/run.go", true))
	if got = l.list(); got[0].Status != TaskDone || got[0].Seen != "edit applied to b/run.go" || got[1].Status != TaskPending {
		t.Errorf("b/run.go applied: %+v", got)
	}
}
