package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/sim"
)

// After a restart, session/load of the first session's id replays its
// conversation (the prompt, the tool call, the answer) before it answers,
// and the next prompt's request goes on from the transcript: it starts
// with the bytes of the last request of the first server.
func TestLoadAfterRestart(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{
		{Content: "Reading.", ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: []byte(`{"path":"main.go"}`)}}},
		{Content: "It prints hi."},
		{Content: "Still hi."},
	}}, map[string]string{"main.go": mainGo})
	first := w.connect(&client{})
	id := first.newSession(t, w.ws)
	if _, err := first.prompt(t, id, "What does main.go print?"); err != nil {
		t.Fatal(err)
	}
	first.stop()
	sent := len(w.requests(t, 2))

	c := &client{}
	second := w.connect(c)
	if _, err := second.LoadSession(second.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: w.ws, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	kinds := strings.Join(c.kinds(), " ")
	if !strings.HasPrefix(kinds, "user_message_chunk agent_message_chunk tool_call tool_call_update agent_message_chunk") {
		t.Errorf("replayed %s", kinds)
	}
	if got := c.text("user_message_chunk"); got != "What does main.go print?" {
		t.Errorf("the user's message replayed as %q", got)
	}
	if got := c.text("agent_message_chunk"); got != "Reading.It prints hi." {
		t.Errorf("the replies replayed as %q", got)
	}
	if res, err := second.prompt(t, id, "And now?"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt after load = %+v, %v", res, err)
	}
	reqs := w.requests(t, sent+1)
	before, after := messagesOf(t, reqs[sent-1].Body), messagesOf(t, reqs[len(reqs)-1].Body)
	if len(after) <= len(before) || !reflect.DeepEqual(after[:len(before)], before) {
		t.Errorf("the request after load does not go on from the last one before the restart:\nbefore %v\nafter  %v", before, after)
	}
	t.Logf("%d requests before the restart, %d after; the last before had %d messages, the first after %d", sent, len(reqs)-sent, len(before), len(after))
}

// The mode a session was set to is kept across a restart: the next
// process's session/load answers it, and its runs are in it.
func TestLoadKeepsTheMode(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "Hi."}}}, map[string]string{"main.go": mainGo})
	first := w.connect(&client{})
	id := first.newSession(t, w.ws)
	if _, err := first.SetSessionMode(first.ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "ask"}); err != nil {
		t.Fatal(err)
	}
	if _, err := first.prompt(t, id, "Hello."); err != nil {
		t.Fatal(err)
	}
	first.stop()
	second := w.connect(&client{})
	res, err := second.LoadSession(second.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: w.ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Modes == nil || res.Modes.CurrentModeId != "ask" {
		t.Errorf("session/load after a restart answered the mode %v, want ask", res.Modes)
	}
}

func messagesOf(t *testing.T, body []byte) []any {
	var req struct {
		Messages []any `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	return req.Messages
}

// A session id that names no transcript is refused, and one that is not
// a plain name cannot reach outside the state directory.
func TestLoadRefusesABadID(t *testing.T) {
	w := newWorld(t, sim.Config{}, nil)
	cn := w.connect(&client{})
	for _, id := range []string{"nope", "../../etc/passwd", ""} {
		_, err := cn.LoadSession(cn.ctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(id), Cwd: w.ws, McpServers: []sdk.McpServer{}})
		if err == nil {
			t.Errorf("session/load %q succeeded", id)
		}
	}
}

// The engine's window is smaller than the one configured: each refusal
// is one status line (the emergency's), the answer carries none of it,
// and the turn ends with the answer.
func TestOverflowIsOneLine(t *testing.T) {
	files := map[string]string{}
	var script []sim.Turn
	for i := 0; i < 6; i++ {
		var b strings.Builder
		for l := 1; l <= 140; l++ {
			fmt.Fprintf(&b, "build a%d step %d: compiled package pkg%d in %dms without warnings\n", i, l, l, 100+l*7%90)
		}
		files[fmt.Sprintf("logs/a%d.log", i)] = b.String()
		script = append(script, sim.Turn{Content: fmt.Sprintf("Reading log a%d.", i),
			ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: []byte(fmt.Sprintf(`{"path":"logs/a%d.log"}`, i))}}})
	}
	script = append(script, sim.Turn{Content: "They passed."})
	w := newWorld(t, sim.Config{Ctx: 8192, Script: script}, files)
	w.env["REIKA_CONTEXT_WINDOW"] = "32768"
	c := &client{}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	res, err := cn.prompt(t, id, "Read the a logs one by one.")
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	overflows := 0
	for _, r := range w.settled(t) {
		if r.Status == 400 {
			overflows++
		}
	}
	if overflows == 0 {
		t.Fatal("the engine refused nothing: the test tested nothing")
	}
	var told []string
	for _, tc := range c.matching("tool_call") {
		title := tc["title"].(string)
		if strings.Contains(title, "too long") {
			told = append(told, title)
			if tc["kind"] != "other" || tc["status"] != "completed" {
				t.Errorf("the line %q is a %v tool call, %v", title, tc["kind"], tc["status"])
			}
		}
	}
	if len(told) != overflows {
		t.Errorf("%d refusals, told %q", overflows, told)
	}
	if answer := c.text("agent_message_chunk"); strings.Contains(answer, "too long") || !strings.HasSuffix(answer, "They passed.") {
		t.Errorf("the answer %q", answer)
	}
	t.Logf("%d refusals: %q", overflows, told)
}

// A malformed tool call is a failed tool call; the run goes on and
// answers.
func TestMalformedToolCall(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{
		{ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: []byte(`{"path":"main.go"}`)}}, Fault: &sim.Fault{MalformedToolCalls: true}},
		{Content: "Recovered."},
	}}, map[string]string{"main.go": mainGo})
	c := &client{}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	res, err := cn.prompt(t, id, "Read main.go.")
	if err != nil || res.StopReason != sdk.StopReasonEndTurn || c.text("agent_message_chunk") != "Recovered." {
		t.Fatalf("prompt = %+v, %v, %q", res, err, c.text("agent_message_chunk"))
	}
	failed := false
	for _, u := range c.matching("tool_call_update") {
		if u["status"] == "failed" && strings.Contains(fmt.Sprint(u["content"]), "not valid JSON") {
			failed = true
		}
	}
	if !failed {
		t.Errorf("no failed tool call saying why:\n%s", c.all())
	}
}

// One session format: a session the language server's way (agent.Start
// on the workspace folder, as lsp calls it) loads here, and a session
// made here is the one reika.resume finds (agent.LatestTranscript; both
// were made in one second, so the names' order is left out).
func TestOneSessionFormat(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "Answered in the editor."}, {Content: "Answered here."}}}, map[string]string{"main.go": mainGo})
	getenv := func(k string) string { return w.env[k] }
	a, err := agent.Start(context.Background(), agent.Setup{Getenv: getenv, Folders: []string{w.ws}, StateDir: w.stateDir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "Asked in the editor.", nil); err != nil {
		t.Fatal(err)
	}
	lspID, lspPath := a.ID(), a.TranscriptPath()
	a.Close()

	c := &client{}
	cn := w.connect(c)
	if _, err := cn.LoadSession(cn.ctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(lspID), Cwd: w.ws, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if got := c.text("user_message_chunk") + " / " + c.text("agent_message_chunk"); got != "Asked in the editor. / Answered in the editor." {
		t.Errorf("the editor's session replayed as %q", got)
	}
	id := cn.newSession(t, w.ws)
	if _, err := cn.prompt(t, id, "Asked here."); err != nil {
		t.Fatal(err)
	}
	cn.stop()
	if got := agent.LatestTranscript(getenv, w.stateDir, w.ws, lspPath); filepath.Base(got) != string(id)+".jsonl" {
		t.Errorf("the latest transcript of the workspace is %s, want this session's %s", got, id)
	}
}

// /new starts the model afresh in the same thread: the next request
// carries none of the earlier conversation.
func TestNewCommand(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "First answer."}, {Content: "Second answer."}}}, nil)
	c := &client{}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	if _, err := cn.prompt(t, id, "The first question."); err != nil {
		t.Fatal(err)
	}
	if res, err := cn.prompt(t, id, "/new"); err != nil || res.StopReason != sdk.StopReasonEndTurn || !strings.Contains(c.text("agent_message_chunk"), "A new conversation") {
		t.Fatalf("/new = %+v, %v, %q", res, err, c.text("agent_message_chunk"))
	}
	if _, err := cn.prompt(t, id, "The second question."); err != nil {
		t.Fatal(err)
	}
	reqs := w.requests(t, 2)
	if last := string(reqs[len(reqs)-1].Body); strings.Contains(last, "The first question.") || !strings.Contains(last, "The second question.") {
		t.Errorf("the request after /new carries the earlier conversation")
	}
}

// /save writes the transcript as Markdown and says where; /recap says
// there is none before a fold; /compact folds or says why not.
func TestCommands(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "An answer."}, {Content: "The note."}}}, nil)
	c := &client{}
	cn := w.connect(c)
	id := cn.newSession(t, w.ws)
	if _, err := cn.prompt(t, id, "A question."); err != nil {
		t.Fatal(err)
	}
	say := func(cmd string) string {
		c.mu.Lock()
		c.updates = nil
		c.mu.Unlock()
		res, err := cn.prompt(t, id, cmd)
		if err != nil || res.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("%s = %+v, %v", cmd, res, err)
		}
		return c.text("agent_message_chunk")
	}
	saved := say("/save")
	path := strings.TrimPrefix(saved, "Saved the transcript to ")
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "A question.") {
		t.Errorf("/save said %q; the file: %v", saved, err)
	}
	if got := say("/recap"); !strings.HasPrefix(got, "No recap yet") {
		t.Errorf("/recap = %q", got)
	}
	if got := say("/compact"); !strings.HasPrefix(got, "Folded the conversation") && !strings.HasPrefix(got, "Nothing was folded: ") {
		t.Errorf("/compact = %q", got)
	} else {
		t.Logf("/compact: %s", got)
	}
}

// A session of one workspace does not load in another: the tools would be
// confined to a folder the conversation is not about.
func TestLoadRefusesAnotherWorkspace(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "An answer."}}}, nil)
	cn := w.connect(&client{})
	id := cn.newSession(t, w.ws)
	if _, err := cn.prompt(t, id, "A question."); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	_, err := cn.LoadSession(cn.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: other, McpServers: []sdk.McpServer{}})
	re, ok := err.(*sdk.RequestError)
	if !ok || !strings.Contains(re.Message, "open that folder to load it") {
		t.Fatalf("session/load in another workspace = %v", err)
	}
}

// Bad params say what is wrong in the message: a cwd that is not a
// directory, a session that does not exist, a mode that does not, an
// empty prompt.
func TestBadParamsSayWhy(t *testing.T) {
	w := newWorld(t, sim.Config{}, nil)
	cn := w.connect(&client{})
	_, err := cn.NewSession(cn.ctx, sdk.NewSessionRequest{Cwd: "relative/dir", McpServers: []sdk.McpServer{}})
	check := func(what string, err error, want string) {
		t.Helper()
		re, ok := err.(*sdk.RequestError)
		if !ok || re.Code != -32602 || !strings.Contains(re.Message, want) {
			t.Errorf("%s = %v, want -32602 saying %q", what, err, want)
		}
	}
	check("session/new of a relative cwd", err, "is not an absolute path")
	_, err = cn.prompt(t, "nope", "hello")
	check("session/prompt of no session", err, "no session nope")
	id := cn.newSession(t, w.ws)
	_, err = cn.SetSessionMode(cn.ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "yolo"})
	check("session/set_mode yolo", err, `no mode "yolo"`)
	_, err = cn.prompt(t, id, "  ")
	check("an empty prompt", err, "the prompt holds no text")
}

// session/list lists the cwd's sessions newest first, titled by their
// first message; session/resume continues one without sending its
// history; session/close ends one of this process, which a load brings
// back.
func TestListResumeClose(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "One."}, {Content: "Two."}, {Content: "Three."}}}, map[string]string{"main.go": mainGo})
	first := w.connect(&client{})
	a := first.newSession(t, w.ws)
	if _, err := first.prompt(t, a, "First question\nwith a second line"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // two transcripts' times apart
	b := first.newSession(t, w.ws)
	if _, err := first.prompt(t, b, "Second question"); err != nil {
		t.Fatal(err)
	}
	first.stop()
	c := &client{}
	second := w.connect(c)
	cwd := w.ws
	list, err := second.ListSessions(second.ctx, sdk.ListSessionsRequest{Cwd: &cwd})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 2 || list.Sessions[0].SessionId != b || list.Sessions[1].SessionId != a ||
		*list.Sessions[1].Title != "First question" || list.Sessions[0].Cwd != w.ws {
		t.Fatalf("session/list = %+v, want %s then %s, titled by their first lines", list.Sessions, b, a)
	}
	if _, err := second.ResumeSession(second.ctx, sdk.ResumeSessionRequest{SessionId: a, Cwd: w.ws}); err != nil {
		t.Fatal(err)
	}
	if kinds := strings.Join(c.kinds(), " "); strings.Contains(kinds, "user_message_chunk") {
		t.Errorf("session/resume sent the history: %s", kinds)
	}
	if res, err := second.prompt(t, a, "And now?"); err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt after resume = %+v, %v", res, err)
	}
	var last string
	waitFor(t, func() bool {
		for _, r := range w.engine.Requests() {
			if strings.Contains(string(r.Body), "And now?") {
				last = string(r.Body)
			}
		}
		return last != ""
	}, "the engine's record of the request after resume")
	if !strings.Contains(last, "First question") {
		t.Errorf("the resumed session's request lost its conversation")
	}
	if _, err := second.CloseSession(second.ctx, sdk.CloseSessionRequest{SessionId: a}); err != nil {
		t.Fatal(err)
	}
	if _, err := second.prompt(t, a, "Still there?"); err == nil {
		t.Errorf("a prompt to a closed session was answered")
	}
	if _, err := second.CloseSession(second.ctx, sdk.CloseSessionRequest{SessionId: a}); err == nil {
		t.Errorf("closing a closed session did not fail")
	}
}

// An MCP server a client offers in session/new that the user is asked
// about and does not answer for (the client cancels the question) is not
// started, and the user is told so and why, not left to wonder.
func TestEditorMCPServersAreTold(t *testing.T) {
	w := newWorld(t, sim.Config{}, map[string]string{"main.go": mainGo})
	c := &client{}
	cn := w.connect(c)
	if _, err := cn.NewSession(cn.ctx, sdk.NewSessionRequest{Cwd: w.ws, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "fs", Command: "mcp-fs", Args: []string{}, Env: []sdk.EnvVariable{}}},
	}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		for _, tc := range c.matching("tool_call") {
			if title, _ := tc["title"].(string); strings.Contains(title, "the MCP server fs the editor offered is not started") {
				return true
			}
		}
		return false
	}, "the line saying the editor's MCP server is not started")
}

// The mode is a config option too: session/new offers it, and
// session/set_config_option sets it as set_mode does.
func TestModeAsConfigOption(t *testing.T) {
	w := newWorld(t, sim.Config{}, map[string]string{"main.go": mainGo})
	cn := w.connect(&client{})
	res, err := cn.NewSession(cn.ctx, sdk.NewSessionRequest{Cwd: w.ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if m := option(res.ConfigOptions, "mode"); m == nil || m.CurrentValue != "normal" {
		t.Fatalf("session/new's config options = %+v, want the mode, normal", res.ConfigOptions)
	}
	set, err := cn.SetSessionConfigOption(cn.ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: res.SessionId, ConfigId: "mode", Value: "plan"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := option(set.ConfigOptions, "mode").CurrentValue; got != "plan" {
		t.Errorf("after set_config_option plan the mode is %q", got)
	}
	if _, err := cn.SetSessionConfigOption(cn.ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: res.SessionId, ConfigId: "colour", Value: "x"}}); err == nil {
		t.Errorf("an option the session does not offer was set")
	}
}

// session/delete ends a session and removes its transcript: no list shows
// it and no load finds it; an id that names no session is refused.
func TestDeleteSession(t *testing.T) {
	w := newWorld(t, sim.Config{Script: []sim.Turn{{Content: "One."}}}, map[string]string{"main.go": mainGo})
	cn := w.connect(&client{})
	id := cn.newSession(t, w.ws)
	if _, err := cn.prompt(t, id, "First question"); err != nil {
		t.Fatal(err)
	}
	if _, err := cn.UnstableDeleteSession(cn.ctx, sdk.UnstableDeleteSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	cwd := w.ws
	if list, err := cn.ListSessions(cn.ctx, sdk.ListSessionsRequest{Cwd: &cwd}); err != nil || len(list.Sessions) != 0 {
		t.Errorf("session/list after delete = %+v, %v; want none", list.Sessions, err)
	}
	if _, err := cn.LoadSession(cn.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: w.ws, McpServers: []sdk.McpServer{}}); err == nil {
		t.Errorf("a deleted session loaded")
	}
	for _, bad := range []sdk.SessionId{id, "../secrets"} {
		if _, err := cn.UnstableDeleteSession(cn.ctx, sdk.UnstableDeleteSessionRequest{SessionId: bad}); err == nil {
			t.Errorf("session/delete %q succeeded, want it refused", bad)
		}
	}
}
