package mcp_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/mcp"
	"github.com/reika-lsp/reika/agent/mcp/mcptest"
	"github.com/reika-lsp/reika/agent/tools"
)

func TestMain(m *testing.M) { mcptest.Main(m) }

// asker answers questions from a script and keeps them, and the tools
// allowed always (remembered, unless rememberErr).
type asker struct {
	mu          sync.Mutex
	answers     []tools.Answer
	asked       []tools.Question
	allowed     []string
	remembered  []string
	rememberErr error
}

func (a *asker) remember(tool string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rememberErr == nil {
		a.remembered = append(a.remembered, tool)
	}
	return a.rememberErr
}

func (a *asker) ask(_ context.Context, q tools.Question) tools.Answer {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	if len(a.answers) == 0 {
		return tools.Deny
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	return ans
}

func (a *asker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

// start starts a toolbox over the built-in tools with the test server
// named docs (env adds to its environment), and closes it at the end.
func start(t *testing.T, a *asker, env ...string) (*mcp.Toolbox, []mcp.Notice) {
	t.Helper()
	set, err := tools.New(tools.Config{Folders: []string{t.TempDir()}, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cmd, args, vars := mcptest.Server(t, env...)
	cfg := mcp.Config{Servers: []mcp.Server{{Name: "docs", Command: cmd, Args: args, Env: vars}}, Spill: set.Spill}
	if a != nil {
		cfg.Ask, cfg.Allowed, cfg.Remember = a.ask, a.allowed, a.remember
	}
	box, notices := mcp.Start(context.Background(), set, cfg)
	t.Cleanup(func() { box.Close() })
	return box, notices
}

func call(box *mcp.Toolbox, ctx context.Context, name, args string) tools.Result {
	return box.Run(ctx, engine.ToolCall{ID: "c", Name: name, Arguments: args})
}

// TestDefinitions: the server's tools come after the built-in ones,
// named mcp__docs__<tool> in the order of their names, with the server's
// schema; two sessions get the same bytes.
func TestDefinitions(t *testing.T) {
	box, notices := start(t, nil)
	if len(notices) != 1 || notices[0].Warning || !strings.Contains(notices[0].Text, "MCP server docs: 2 tools") {
		t.Fatalf("notices = %+v, want one that docs has 2 tools", notices)
	}
	defs := box.Definitions()
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	n := len(names)
	if n < 3 || names[n-2] != "mcp__docs__big" || names[n-1] != "mcp__docs__echo" || names[0] != tools.ReadTool {
		t.Fatalf("names = %q, want the built-in tools then mcp__docs__big, mcp__docs__echo", names)
	}
	if !strings.Contains(string(defs[n-1].Parameters), `"text"`) || !strings.Contains(defs[n-1].Description, "Answers the text.") {
		t.Errorf("echo = %+v, want the server's description and schema", defs[n-1])
	}
	again, _ := start(t, nil)
	if d := cmp.Diff(defs, again.Definitions()); d != "" {
		t.Errorf("a second session's definitions differ (-first +second):\n%s", d)
	}
	if got := mcp.ToolName("my.server", "a tool/x"); got != "mcp__my_server__a_tool_x" {
		t.Errorf("ToolName = %q, want mcp__my_server__a_tool_x", got)
	}
}

// TestCallAsks: a call asks with the server, tool and arguments; runs on
// once, is refused on deny, runs unasked after "this run" in that run
// only, and never runs in plan mode.
func TestCallAsks(t *testing.T) {
	a := &asker{answers: []tools.Answer{tools.Once, tools.Deny, tools.ThisRun, tools.Once}}
	box, _ := start(t, a)
	ctx := tools.WithRun(context.Background(), tools.Normal)
	res := call(box, ctx, "mcp__docs__echo", `{"text":"hi"}`)
	if res.Error || res.Content != "echo: hi" {
		t.Fatalf("once: %+v, want echo: hi", res)
	}
	q := a.asked[0]
	if q.Kind != tools.AskMCP || q.Subject != "docs echo" || q.Detail != `{"text":"hi"}` {
		t.Errorf("question = %+v, want kind mcp, docs echo, the arguments", q)
	}
	res = call(box, ctx, "mcp__docs__echo", `{"text":"no"}`)
	if !res.Error || !strings.Contains(res.Content, "declined") {
		t.Errorf("deny: %+v, want the model told the user declined", res)
	}
	for i := range 2 {
		if res := call(box, ctx, "mcp__docs__echo", `{"text":"x"}`); res.Error {
			t.Errorf("this run, call %d: %+v", i, res)
		}
	}
	if a.count() != 3 {
		t.Errorf("asked %d times, want 3 (this run allows the second call)", a.count())
	}
	next := tools.WithRun(context.Background(), tools.Normal)
	if call(box, next, "mcp__docs__echo", `{"text":"x"}`); a.count() != 4 {
		t.Errorf("a new run was not asked")
	}
	plan := tools.WithRun(context.Background(), tools.Plan)
	if res := call(box, plan, "mcp__docs__echo", `{}`); !res.Error || !strings.Contains(res.Content, "plan mode") || a.count() != 4 {
		t.Errorf("plan mode: %+v (asked %d), want refused unasked", res, a.count())
	}
	if res := call(box, ctx, tools.GlobTool, `{"pattern":"*"}`); res.Error {
		t.Errorf("a built-in call: %+v", res)
	}
}

// TestLongResultSpilled: a long result keeps its ends and is saved whole,
// its other parts named by type and size.
func TestLongResultSpilled(t *testing.T) {
	box, _ := start(t, &asker{answers: []tools.Answer{tools.Once}})
	res := call(box, context.Background(), "mcp__docs__big", `{"lines":20000}`)
	if res.Error || res.Payload.Spill == "" || !strings.Contains(res.Content, "saved in") {
		t.Fatalf("result (%d bytes, spill %q), want it spilled", len(res.Content), res.Payload.Spill)
	}
	whole, err := os.ReadFile(res.Payload.Spill)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(whole), "line 20000 of") || !strings.HasSuffix(string(whole), "[image image/png, 3 bytes]") {
		t.Errorf("the spilled file lacks the last line or the image's name: …%s", whole[len(whole)-80:])
	}
}

// TestServerDies: a server killed in the session is started again once;
// when that fails, the model is told it is not running.
func TestServerDies(t *testing.T) {
	for _, restarts := range []bool{true, false} {
		t.Run("restarts="+strconv.FormatBool(restarts), func(t *testing.T) {
			dir := t.TempDir()
			pidfile := filepath.Join(dir, "pid")
			env := []string{"REIKA_MCPTEST_PIDFILE=" + pidfile}
			if !restarts {
				env = append(env, "REIKA_MCPTEST_ONCE="+filepath.Join(dir, "once"))
			}
			a := &asker{answers: []tools.Answer{tools.Always}}
			box, _ := start(t, a, env...)
			if res := call(box, context.Background(), "mcp__docs__echo", `{"text":"before"}`); res.Error {
				t.Fatalf("before the kill: %+v", res)
			}
			kill(t, pidfile)
			if restarts { // two calls at once find it gone: one restart serves both
				var wg sync.WaitGroup
				var both [2]tools.Result
				for i := range both {
					wg.Go(func() { both[i] = call(box, context.Background(), "mcp__docs__echo", `{"text":"after"}`) })
				}
				wg.Wait()
				for i, res := range both {
					if res.Content != "echo: after" {
						t.Fatalf("call %d at once after a kill: %+v, want the restarted server's answer", i, res)
					}
				}
			}
			res := call(box, context.Background(), "mcp__docs__echo", `{"text":"after"}`)
			if restarts {
				if res.Error || res.Content != "echo: after" {
					t.Fatalf("after a kill: %+v, want the restarted server's answer", res)
				}
				kill(t, pidfile)
				res = call(box, context.Background(), "mcp__docs__echo", `{"text":"again"}`)
			}
			if !res.Error || !strings.Contains(res.Content, "the MCP server docs is not running") {
				t.Fatalf("after the last kill: %+v, want not running", res)
			}
			began := time.Now()
			if res := call(box, context.Background(), "mcp__docs__echo", `{}`); !strings.Contains(res.Content, "not running") || time.Since(began) > time.Second {
				t.Errorf("a later call: %+v in %s, want not running at once", res, time.Since(began))
			}
			if a.count() != 1 {
				t.Errorf("asked %d times, want once (always)", a.count())
			}
		})
	}
}

func kill(t *testing.T, pidfile string) {
	t.Helper()
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for range 100 { // until it is gone (a zombie still takes signal 0)
		if syscall.Kill(pid, 0) != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServerFails: a server that cannot start, or stops at once, is a
// warning that names it and what it said, and the others start.
func TestServerFails(t *testing.T) {
	set, err := tools.New(tools.Config{Folders: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	once := filepath.Join(t.TempDir(), "once")
	os.WriteFile(once, nil, 0o600)
	cmd, args, vars := mcptest.Server(t)
	_, _, failing := mcptest.Server(t, "REIKA_MCPTEST_ONCE="+once)
	box, notices := mcp.Start(context.Background(), set, mcp.Config{Wait: 5 * time.Second, Servers: []mcp.Server{
		{Name: "missing", Command: filepath.Join(t.TempDir(), "no-such-server")},
		{Name: "stops", Command: cmd, Args: args, Env: failing},
		{Name: "docs", Command: cmd, Args: args, Env: vars},
	}})
	defer box.Close()
	if len(notices) != 3 || !notices[0].Warning || !strings.Contains(notices[0].Text, "MCP server missing did not start") ||
		!notices[1].Warning || !strings.Contains(notices[1].Text, "started once already") || notices[2].Warning {
		t.Errorf("notices = %+v, want missing and stops warned of (with its output), docs started", notices)
	}
	if got, want := len(box.Definitions()), len(set.Definitions())+2; got != want {
		t.Errorf("%d definitions, want %d", got, want)
	}
}

// TestListChanged: a server that announces new tools does not change the
// definitions in force; its next result tells the model once; the new
// list, fetched at once, comes into force at TakeChange (the session's
// next fold), the late tool with it.
func TestListChanged(t *testing.T) {
	box, _ := start(t, &asker{answers: []tools.Answer{tools.Always, tools.Once}})
	before := box.Definitions()
	if _, _, ok := box.TakeChange(); ok {
		t.Fatalf("TakeChange before any change = ok")
	}
	if res := call(box, context.Background(), "mcp__docs__echo", `{"text":"add a tool"}`); res.Error {
		t.Fatalf("add a tool: %+v", res)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !box.Pending() && time.Now().Before(deadline) { // the notification, then the list, come on their own
		time.Sleep(5 * time.Millisecond)
	}
	if !box.Pending() {
		t.Fatalf("no new list pending 10 s after the server added a tool")
	}
	res := call(box, context.Background(), "mcp__docs__echo", `{"text":"x"}`)
	if !strings.Contains(res.Content, "announced that its tools changed; the new list takes effect at the next fold") {
		t.Errorf("after the change: %q, want the model told", res.Content)
	}
	if res := call(box, context.Background(), "mcp__docs__echo", `{"text":"y"}`); res.Content != "echo: y" {
		t.Errorf("told again: %q", res.Content)
	}
	if d := cmp.Diff(before, box.Definitions()); d != "" {
		t.Errorf("definitions changed before TakeChange (-before +after):\n%s", d)
	}
	if res := call(box, context.Background(), "mcp__docs__late", `{}`); !res.Error || !strings.Contains(res.Content, "not available in this session") {
		t.Errorf("the late tool ran before TakeChange: %+v", res)
	}
	defs, said, ok := box.TakeChange()
	if !ok || !strings.Contains(said, "added: mcp__docs__late; removed: none") {
		t.Fatalf("TakeChange = %v, %q; want the late tool added", ok, said)
	}
	if got, want := len(defs), len(before)+1; got != want || defs[len(defs)-1].Name != "mcp__docs__late" {
		t.Errorf("definitions after TakeChange: %d, the last %s; want %d, the late tool last", got, defs[len(defs)-1].Name, want)
	}
	if d := cmp.Diff(before, defs[:len(before)]); d != "" {
		t.Errorf("the definitions before the new one changed (-before +after):\n%s", d)
	}
	if res := call(box, context.Background(), "mcp__docs__late", `{}`); res.Error {
		t.Errorf("the late tool after TakeChange: %+v", res)
	}
	if _, _, ok := box.TakeChange(); ok {
		t.Errorf("a second TakeChange with nothing new = ok")
	}
}

// TestHTTPServer: a server over the streamable HTTP transport gets its
// headers, offers the same definitions as over stdio, answers a call, and
// once it is gone (one restart tried) is told as not running; a server
// that refuses the connection is a warning.
func TestHTTPServer(t *testing.T) {
	set, err := tools.New(tools.Config{Folders: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	url, stop := mcptest.HTTP(t, "Authorization: Bearer t")
	a := &asker{answers: []tools.Answer{tools.Always}}
	box, notices := mcp.Start(context.Background(), set, mcp.Config{Ask: a.ask, Remember: a.remember, Wait: 5 * time.Second, Servers: []mcp.Server{
		{Name: "docs", URL: url, Headers: map[string]string{"Authorization": "Bearer t"}},
		{Name: "nokey", URL: url},
	}})
	defer box.Close()
	if len(notices) != 2 || notices[0].Warning || !notices[1].Warning || !strings.Contains(notices[1].Text, "MCP server nokey did not start") {
		t.Fatalf("notices = %+v, want docs started and nokey refused", notices)
	}
	stdio, _ := start(t, nil)
	if d := cmp.Diff(stdio.Definitions(), box.Definitions()); d != "" {
		t.Errorf("definitions over HTTP differ from stdio's (-stdio +http):\n%s", d)
	}
	if res := call(box, context.Background(), "mcp__docs__echo", `{"text":"web"}`); res.Content != "echo: web" {
		t.Fatalf("call: %+v", res)
	}
	stop()
	res := call(box, context.Background(), "mcp__docs__echo", `{"text":"gone"}`)
	if !res.Error || !strings.Contains(res.Content, "the MCP server docs is not running") {
		t.Errorf("after the server stopped: %+v, want not running", res)
	}
}

// TestAlways: a tool on the allow list runs unasked, but in ask mode,
// where the run's grants alone count; "always" keeps the
// tool in the list and runs it unasked after; when keeping it fails, the
// yes stands for the run only.
func TestAlways(t *testing.T) {
	a := &asker{allowed: []string{"mcp__docs__big"}, answers: []tools.Answer{tools.Always}}
	box, _ := start(t, a)
	if res := call(box, context.Background(), "mcp__docs__big", `{"lines":1}`); res.Error || a.count() != 0 {
		t.Errorf("an allowed tool: %+v, asked %d times; want it run unasked", res, a.count())
	}
	askAll := tools.WithRun(context.Background(), tools.AskAll)
	a.answers = append([]tools.Answer{tools.ThisRun}, a.answers...)
	call(box, askAll, "mcp__docs__big", `{"lines":1}`)
	call(box, askAll, "mcp__docs__big", `{"lines":1}`)
	if a.count() != 1 {
		t.Errorf("ask mode: asked %d times about an allowed tool, want once (then this run)", a.count())
	}
	a.asked = nil
	for range 2 {
		if res := call(box, context.Background(), "mcp__docs__echo", `{"text":"a"}`); res.Error {
			t.Errorf("always: %+v", res)
		}
	}
	if a.count() != 1 || len(a.remembered) != 1 || a.remembered[0] != "mcp__docs__echo" || !slices.Contains(a.asked[0].Answers, tools.Always) {
		t.Errorf("asked %d times, remembered %q; want asked once with always offered, echo kept", a.count(), a.remembered)
	}

	failing := &asker{answers: []tools.Answer{tools.Always, tools.Once}, rememberErr: errors.New("read-only")}
	box, _ = start(t, failing)
	run := tools.WithRun(context.Background(), tools.Normal)
	call(box, run, "mcp__docs__echo", `{"text":"a"}`)
	call(box, run, "mcp__docs__echo", `{"text":"b"}`)
	if failing.count() != 1 {
		t.Errorf("asked %d times in the run, want once", failing.count())
	}
	call(box, context.Background(), "mcp__docs__echo", `{"text":"c"}`)
	if failing.count() != 2 {
		t.Errorf("a new run was not asked after always could not be kept")
	}
}

// TestNpmServer: a real MCP server from npm (server-filesystem, pinned by
// testdata/npm), started over stdio from the config, lists its tools
// after the built-in ones in the order of their names, and a call of one,
// asked and allowed once, answers with the file's text.
func TestNpmServer(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from npm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, args := mcptest.NpmServer(t, root)
	set, err := tools.New(tools.Config{Folders: []string{t.TempDir()}, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	a := &asker{answers: []tools.Answer{tools.Once}}
	box, notices := mcp.Start(context.Background(), set, mcp.Config{
		Servers: []mcp.Server{{Name: "fs", Command: cmd, Args: args}}, Ask: a.ask, Spill: set.Spill, Wait: 30 * time.Second})
	t.Cleanup(func() { box.Close() })
	if len(notices) != 1 || notices[0].Warning || !strings.Contains(notices[0].Text, "MCP server fs:") {
		t.Fatalf("notices = %+v, want one that fs started with its tools", notices)
	}
	var names []string
	for _, d := range box.Definitions() {
		if strings.HasPrefix(d.Name, "mcp__fs__") {
			names = append(names, d.Name)
		}
	}
	if !slices.Contains(names, "mcp__fs__read_text_file") || !slices.IsSorted(names) {
		t.Fatalf("the server's tools = %q, want read_text_file among them, in the order of their names", names)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := call(box, ctx, "mcp__fs__read_text_file", `{"path":`+strconv.Quote(filepath.Join(root, "hello.txt"))+`}`)
	if res.Error || !strings.Contains(res.Content, "hello from npm") {
		t.Errorf("read_text_file = %+v, want the file's text", res)
	}
	if a.count() != 1 {
		t.Errorf("asked %d times, want once", a.count())
	}
}
