package lsp_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/internal/testslow"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// resumeResult is reika.resume's answer.
type resumeResult struct {
	Resumed  bool   `json:"resumed"`
	Path     string `json:"path"`
	Messages int    `json:"messages"`
}

func execResume(t *testing.T, p *lsptest.Pending) resumeResult {
	t.Helper()
	var res resumeResult
	if _, err := p.Wait(&res); err != nil {
		t.Fatalf("reika.resume: %v", err)
	}
	return res
}

// ask runs one instruction to its end.
func ask(t *testing.T, e *lsptest.Editor, instruction string) {
	t.Helper()
	mark := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": instruction}); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(mark)
}

// lastRequest is the body of the last request the engine received.
func lastRequest(e *lsptest.Editor) string {
	reqs := e.Engine.Requests()
	if len(reqs) == 0 {
		return ""
	}
	return string(reqs[len(reqs)-1].Body)
}

// A resume sent while the session starts (the engine slow to answer
// discovery) waits for it and resumes; a newSession after it starts a
// new transcript, never the resumed one.
func TestResumeWhileTheSessionStarts(t *testing.T) {
	g := &gate{}
	e := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Full(),
		Files:  map[string]string{"main.go": "package main\n"},
		Engine: sim.Config{Script: []sim.Turn{{Content: "the first answer"}, {Content: "the second answer"}, {Content: "the third answer"}}},
		Front:  g.start(t),
	})
	ask(t, e, "the first question")
	if _, err := e.Exec("reika.newSession"); err != nil {
		t.Fatal(err)
	}
	g.hold()
	status := e.ExecAsync("reika.status") // starts a session, held at discovery
	g.waitHeld(t)
	resume := e.ExecAsync("reika.resume")
	g.open()
	if _, err := status.Wait(nil); err != nil {
		t.Fatal(err)
	}
	res := execResume(t, resume)
	if !res.Resumed || res.Messages != 2 {
		t.Fatalf("reika.resume during the start = %+v, want the first session's 2 messages", res)
	}
	ask(t, e, "the second question")
	if body := lastRequest(e); !strings.Contains(body, "the first question") {
		t.Errorf("the request after the resume lacks the first question")
	}

	if _, err := e.Exec("reika.newSession"); err != nil {
		t.Fatal(err)
	}
	ask(t, e, "the third question")
	if body := lastRequest(e); strings.Contains(body, "the first question") {
		t.Errorf("the request after newSession carries the resumed conversation")
	}
	data, _ := os.ReadFile(res.Path)
	if bytes.Contains(data, []byte("the third question")) {
		t.Errorf("newSession went on writing the resumed transcript %s", res.Path)
	}
}

// A newSession sent while a resume starts the resumed session wins: the
// new session is in force, and the resume says so.
func TestNewSessionWhileAResumeStarts(t *testing.T) {
	g := &gate{}
	e := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Full(),
		Files:  map[string]string{"main.go": "package main\n"},
		Engine: sim.Config{Script: []sim.Turn{{Content: "the first answer"}, {Content: "the second answer"}}},
		Front:  g.start(t),
	})
	ask(t, e, "the first question")
	if _, err := e.Exec("reika.newSession"); err != nil {
		t.Fatal(err)
	}
	g.hold()
	mark := e.Mark()
	resume := e.ExecAsync("reika.resume")
	g.waitHeld(t)
	if _, err := e.Exec("reika.newSession"); err != nil {
		t.Fatal(err)
	}
	g.open()
	if res := execResume(t, resume); res.Resumed {
		t.Errorf("reika.resume = %+v, want resumed false: a newSession came after it", res)
	}
	e.WaitLine(mark, `a new session was asked for while the session in .* resumed: the new one is in force`)
	ask(t, e, "the second question")
	if body := lastRequest(e); strings.Contains(body, "the first question") {
		t.Errorf("the request after newSession carries the resumed conversation")
	}
}

// Two editors on one workspace: the second cannot resume the session the
// first holds (one writer per transcript); it is told so, and the first
// goes on writing a transcript that stays whole.
func TestResumeASessionInUse(t *testing.T) {
	e1 := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Full(),
		Files:  map[string]string{"main.go": "package main\n"},
		Engine: sim.Config{Script: []sim.Turn{{Content: "the first answer"}, {Content: "the second answer"}}},
	})
	ask(t, e1, "the first question")
	e2 := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), After: e1})
	mark := e2.Mark()
	if _, err := e2.Exec("reika.resume"); err == nil {
		t.Errorf("reika.resume of a session another server holds: no error")
	}
	e2.WaitLine(mark, `Reika could not resume the session in .*: session .* is in use by another Reika server .*; (the current session goes on|a new session starts with the next request)`)
	ask(t, e1, "the second question")
	matches, _ := filepath.Glob(filepath.Join(e1.StateDir, "*.jsonl"))
	for _, p := range matches {
		data, _ := os.ReadFile(p)
		if bytes.Count(data, []byte("the second question")) > 0 && bytes.Count(data, []byte(`"kind":"meta"`)) != 1 {
			t.Errorf("%s was written by two servers:\n%s", p, data)
		}
	}
}

// kill -9 in the middle of a command, after an edit was applied: the
// command dies with the server, and the session resumes twice in a row
// (a kill -9 after the first resume too). The edit is never applied
// again, and the model hears that the command was interrupted.
func TestKillDuringACommand(t *testing.T) {
	for _, tc := range []struct {
		name, slow, args string
	}{
		{"contained", "sleep 29.417", `"command":"sleep 29.417"`},
		// Asked, and allowed: Pdeathsig and the watchdog both apply.
		{"outside the sandbox", "sleep 29.418", `"command":"sleep 29.418","outside_sandbox":true`},
	} {
		t.Run(tc.name, func(t *testing.T) { killDuringACommand(t, tc.slow, tc.args) })
	}
}

// killDuringACommand is TestKillDuringACommand with the command line slow
// (unique among the machine's processes), run by a bash call of args.
func killDuringACommand(t *testing.T, slow, args string) {
	script := []sim.Turn{
		{ToolCalls: []sim.ScriptCall{
			{Name: "edit", Arguments: []byte(`{"path":"notes.txt","old_text":"line1\n","new_text":"line1\nADDED\n"}`)},
			{Name: "bash", Arguments: []byte(`{` + args + `}`)},
		}},
		{Content: "the answer after the first resume"},
		{Content: "the answer after the second resume"},
	}
	cfg := lsptest.Config{
		Caps:                  lsptest.Full(),
		Files:                 map[string]string{"notes.txt": "line1\nline2\n"},
		SaveAll:               true,
		Engine:                sim.Config{Script: script},
		InitializationOptions: map[string]any{"reika": map[string]any{"bashAllow": []string{"sleep"}}},
		Binary:                reikaBinary(t),
		Timeout:               time.Minute,
	}
	e := lsptest.Start(t, cfg)
	e.OnShowMessageRequest(func(_ string, actions []string) string { return "Allow once" })
	notes := filepath.Join(e.Root, "notes.txt")
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "add a line, then wait"}); err != nil {
		t.Fatal(err)
	}
	pid := waitFor(t, "the command to run", func() int { return findProcess(slow) })
	if data, _ := os.ReadFile(notes); string(data) != "line1\nADDED\nline2\n" {
		t.Fatalf("notes.txt while the command runs = %q, want the edit applied", data)
	}
	kill9(t, e)
	waitFor(t, "the command to die with the server", func() int {
		if alive(pid) {
			return 0
		}
		return 1
	})

	for round, answer := range []string{"the answer after the first resume", "the answer after the second resume"} {
		cfg.After, cfg.Files = e, nil // the workspace as the crash left it
		e = lsptest.Start(t, cfg)
		mark := e.Mark()
		res := execResume(t, e.ExecAsync("reika.resume"))
		if !res.Resumed || res.Messages < 4 {
			t.Fatalf("resume %d = %+v, want the crashed session's messages", round+1, res)
		}
		if round == 0 {
			e.WaitLine(mark, `1 tool call had not finished when the server stopped \(bash\)`)
		}
		ask(t, e, "go on")
		body := lastRequest(e)
		if !strings.Contains(body, "interrupted: the server stopped before this call finished") {
			t.Errorf("resume %d: the request lacks the interrupted call's result", round+1)
		}
		if round == 1 && !strings.Contains(body, script[1].Content) {
			t.Errorf("resume 2: the request lacks the answer given after the first resume")
		}
		if strings.Count(body, "interrupted: the server stopped") != 1 {
			t.Errorf("resume %d: the interrupted call is answered %d times, want once", round+1, strings.Count(body, "interrupted: the server stopped"))
		}
		if data, _ := os.ReadFile(notes); string(data) != "line1\nADDED\nline2\n" {
			t.Errorf("resume %d: notes.txt = %q, want the edit applied once", round+1, data)
		}
		if got := e.Dump(); !strings.Contains(got, answer) {
			t.Errorf("resume %d: the run did not end with %q", round+1, answer)
		}
		kill9(t, e)
	}
	if n := len(e.Engine.Requests()); n == 0 {
		t.Fatal("no request reached the engine")
	}
}

// kill9 kills the editor's server with SIGKILL and waits until it is
// gone.
func kill9(t *testing.T, e *lsptest.Editor) {
	t.Helper()
	pid := e.ServerPID()
	syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "the server to die", func() int {
		if alive(pid) {
			return 0
		}
		return 1
	})
}

// waitFor polls f until it gives a non-zero value, at most 20 s.
func waitFor(t *testing.T, what string, f func() int) int {
	t.Helper()
	deadline := time.Now().Add(testslow.Scale(20 * time.Second))
	for time.Now().Before(deadline) {
		if v := f(); v != 0 {
			return v
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
	return 0
}

// findProcess is the pid of a process whose command line is line (words
// joined by spaces), 0 when there is none.
func findProcess(line string) int {
	want := strings.ReplaceAll(line, " ", "\x00") + "\x00"
	entries, _ := os.ReadDir("/proc")
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if cmd, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline")); string(cmd) == want && alive(pid) {
			return pid
		}
	}
	return 0
}

// alive reports whether pid runs: it exists and is not a zombie waiting
// for a parent to reap it.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] != 'Z' && stat[i+2] != 'X'
}

// A state folder where no transcript can be made (a file stands where it
// should be; a read-only or full disk fails the same way): the ask runs
// and answers, the user is shown once where the transcript is not kept,
// and once that it is again when the folder can be made.
func TestAskWithoutATranscriptFolder(t *testing.T) {
	e := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Full(),
		Files:  map[string]string{"main.go": "package main\n"},
		Engine: sim.Config{Script: []sim.Turn{{Content: "the first answer"}, {Content: "the second answer"}}},
	})
	if _, err := e.Exec("reika.newSession"); err != nil { // the next ask starts one
		t.Fatal(err)
	}
	os.RemoveAll(e.StateDir)
	os.WriteFile(e.StateDir, nil, 0o600)
	mark := e.Mark()
	ask(t, e, "the first question")
	e.WaitLine(mark, `showMessage warning: Reika: the transcript cannot be written in `+regexp.QuoteMeta(e.StateDir))
	if !strings.Contains(e.Dump(), "the first answer") {
		t.Errorf("the ask did not answer without a transcript\n%s", e.Dump())
	}
	os.Remove(e.StateDir)
	mark = e.Mark()
	ask(t, e, "the second question")
	e.WaitLine(mark, `showMessage warning: Reika: the transcript in .* is written again`)
	matches, _ := filepath.Glob(filepath.Join(e.StateDir, "*.jsonl"))
	if len(matches) != 1 {
		t.Fatalf("transcripts after the folder came back: %q, want one", matches)
	}
	data, _ := os.ReadFile(matches[0])
	for _, want := range []string{"the first question", "the first answer", "the second question"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the transcript lacks %q", want)
		}
	}
}

// A damaged line and a record of a newer version in the middle of a
// transcript: the resume skips them, says which, and goes on.
func TestResumeADamagedTranscript(t *testing.T) {
	e := lsptest.Start(t, lsptest.Config{
		Caps:   lsptest.Full(),
		Files:  map[string]string{"main.go": "package main\n"},
		Engine: sim.Config{Script: []sim.Turn{{Content: "the first answer"}, {Content: "the second answer"}}},
	})
	ask(t, e, "the first question")
	if _, err := e.Exec("reika.newSession"); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(e.StateDir, "*.jsonl"))
	if len(matches) != 1 {
		t.Fatalf("transcripts: %q, want one", matches)
	}
	lines := strings.SplitAfter(readFile(t, matches[0]), "\n")
	damaged := append(append(lines[:2:2], "garbage {\n", `{"kind":"hologram","at":"2026-01-01T00:00:00Z"}`+"\n"), lines[2:]...)
	os.WriteFile(matches[0], []byte(strings.Join(damaged, "")), 0o600)
	mark := e.Mark()
	res := execResume(t, e.ExecAsync("reika.resume"))
	if !res.Resumed || res.Messages != 2 {
		t.Fatalf("reika.resume of a damaged transcript = %+v, want its 2 messages", res)
	}
	e.WaitLine(mark, `showMessage warning: Reika: the transcript .*: 2 lines skipped \(line 3: a damaged line .*; line 4: a "hologram" record`)
	ask(t, e, "the second question")
	if body := lastRequest(e); !strings.Contains(body, "the first answer") {
		t.Errorf("the request after the resume lacks the first answer")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// kill -9 while the engine streams the reply: the instruction is on
// disk, the reply is not; the session resumes twice in a row (a kill -9
// after the first resume too), each time from a transcript read whole.
func TestKillDuringTheStream(t *testing.T) {
	script := []sim.Turn{
		{Content: "an answer the crash cuts short", Fault: &sim.Fault{StallAfter: 2}},
		{Content: "the answer after the first resume"},
		{Content: "the answer after the second resume"},
	}
	cfg := lsptest.Config{
		Caps:    lsptest.Full(),
		Files:   map[string]string{"main.go": "package main\n"},
		Engine:  sim.Config{Script: script},
		Binary:  reikaBinary(t),
		Timeout: time.Minute,
	}
	e := lsptest.Start(t, cfg)
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "the first question"}); err != nil {
		t.Fatal(err)
	}
	e.Engine.WaitStreaming(1)
	kill9(t, e)
	for round, messages := range []int{1, 3} {
		cfg.After, cfg.Files = e, nil
		e = lsptest.Start(t, cfg)
		res := execResume(t, e.ExecAsync("reika.resume"))
		if !res.Resumed || res.Messages != messages {
			t.Fatalf("resume %d = %+v, want %d messages", round+1, res, messages)
		}
		ask(t, e, "go on")
		body := lastRequest(e)
		if !strings.Contains(body, "the first question") || round == 1 && !strings.Contains(body, script[1].Content) {
			t.Errorf("resume %d: the request lacks what was said before the crash", round+1)
		}
		if !strings.Contains(e.Dump(), script[round+1].Content) {
			t.Errorf("resume %d: the run did not end with %q", round+1, script[round+1].Content)
		}
		kill9(t, e)
	}
}
