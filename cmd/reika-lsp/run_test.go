package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/transcript"
)

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// reikaBinary builds this command once, for the tests that run it as a
// process (signals, exit status, stdin).
func reikaBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "reika-run-bin")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "reika-lsp")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// runWorkspace is a temporary workspace with a Go file and a folder a
// contained command may write in, and the environment of a run there:
// no config file, transcripts and caches in the test's own directories.
type runWorkspace struct {
	root  string
	state string
	env   []string
}

func newRunWorkspace(t *testing.T) *runWorkspace {
	t.Helper()
	base := t.TempDir()
	w := &runWorkspace{root: filepath.Join(base, "ws"), state: filepath.Join(base, "state")}
	for _, d := range []string{w.root, filepath.Join(w.root, "sub"), w.state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.root, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REIKA_") && !strings.HasPrefix(kv, "XDG_") {
			w.env = append(w.env, kv)
		}
	}
	w.env = append(w.env, "REIKA_CONFIG="+filepath.Join(base, "none.json"),
		"XDG_STATE_HOME="+w.state, "XDG_CACHE_HOME="+filepath.Join(base, "cache"))
	return w
}

// script writes the simulated engine's replies, one JSON turn a line.
func (w *runWorkspace) script(t *testing.T, turns ...string) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(w.root), "script.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(turns, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type runOutcome struct {
	code           int
	stdout, stderr string
}

// run runs `reika-lsp run args…` in the workspace, bounded in time.
func (w *runWorkspace) run(t *testing.T, stdin string, args ...string) runOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, reikaBinary(t), append([]string{"run"}, args...)...)
	cmd.Dir, cmd.Env = w.root, w.env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("reika-lsp run %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("reika-lsp run %v did not end in 90 s\n%s", args, stderr.String())
	}
	return runOutcome{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
}

func (w *runWorkspace) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// editScript reads main.go, edits it, runs a command off the allow list
// that writes sub/made, tries to create a CI workflow, and answers.
var editScript = []string{
	`{"tool_calls":[{"name":"read","arguments":{"path":"main.go"}}]}`,
	`{"tool_calls":[{"name":"edit","arguments":{"path":"main.go","old_text":"func main() {}","new_text":"func main() { println(1) }"}}]}`,
	`{"tool_calls":[{"name":"bash","arguments":{"command":"touch sub/made"}}]}`,
	`{"tool_calls":[{"name":"write","arguments":{"path":".github/workflows/ci.yml","content":"on: push\n"}}]}`,
	`{"content":"Done: main prints 1."}`,
}

const editedMain = "package main\n\nfunc main() { println(1) }\n"

// A run without flags: the edit lands on the disk (mode kept), the
// command and the protected file are refused and the model told which
// flag would allow the command; the answer is stdout, the files changed
// and the transcript are named on stderr, and the transcript is kept.
func TestRunEditsRefusesAndAnswers(t *testing.T) {
	w := newRunWorkspace(t)
	out := w.run(t, "", "--sim-script", w.script(t, editScript...), "make main print 1")
	if out.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout %s\nstderr %s", out.code, out.stdout, out.stderr)
	}
	if out.stdout != "Done: main prints 1.\n" {
		t.Errorf("stdout = %q, want the answer alone", out.stdout)
	}
	if got := w.read(t, "main.go"); got != editedMain {
		t.Errorf("main.go = %q, want %q", got, editedMain)
	}
	if st, err := os.Stat(filepath.Join(w.root, "main.go")); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("main.go's mode after the edit = %v (%v), want 0640 kept", st.Mode(), err)
	}
	if exists(filepath.Join(w.root, "sub", "made")) {
		t.Error("the command ran without --allow-commands")
	}
	if exists(filepath.Join(w.root, ".github")) {
		t.Error("a protected path was written in a headless run")
	}
	for _, want := range []string{"--allow-commands", "files changed: main.go", "transcript " + w.state} {
		if !strings.Contains(out.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out.stderr)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(w.root, ".main.go.reika-*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	transcripts, _ := filepath.Glob(filepath.Join(w.state, "reika", "sessions", "*.jsonl"))
	if len(transcripts) != 1 {
		t.Fatalf("transcripts = %v, want one", transcripts)
	}
	// The one reika.resume and session/load pick for this workspace.
	if got := transcript.Latest(filepath.Join(w.state, "reika", "sessions"), w.root); got != transcripts[0] {
		t.Errorf("the latest transcript of the workspace = %q, want the run's %q", got, transcripts[0])
	}
	data, _ := os.ReadFile(transcripts[0])
	for _, want := range []string{"make main print 1", "refused: non-interactive run; rerun with --allow-commands", "a headless run never changes a protected path"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the transcript (what the model was told) lacks %q", want)
		}
	}
}

// With --allow-commands the command runs (contained), as if the user
// allowed it for the run.
func TestRunAllowCommands(t *testing.T) {
	w := newRunWorkspace(t)
	out := w.run(t, "", "--no-transcript", "--allow-commands", "--sim-script", w.script(t, editScript...), "make main print 1")
	if out.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", out.code, out.stderr)
	}
	if strings.Contains(out.stderr, "there is no sandbox on this machine") {
		t.Skip("no sandbox here: --allow-commands rightly refuses uncontained commands")
	}
	if !exists(filepath.Join(w.root, "sub", "made")) {
		t.Errorf("--allow-commands did not run the command\n%s", out.stderr)
	}
	if exists(filepath.Join(w.root, ".github")) {
		t.Error("--allow-commands let a protected path be written")
	}
	if entries, _ := os.ReadDir(filepath.Join(w.state, "reika", "sessions")); len(entries) > 0 {
		t.Errorf("--no-transcript wrote %d transcripts", len(entries))
	}
}

// decodeLines parses stdout as JSON lines.
func decodeLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a --json line is not JSON: %v\n%s", err, sc.Text())
		}
		if _, ok := m["kind"].(string); !ok {
			t.Fatalf("a --json line has no kind: %s", sc.Text())
		}
		lines = append(lines, m)
	}
	if len(lines) == 0 {
		t.Fatal("--json printed nothing")
	}
	return lines
}

// --json: every line an object with a kind, the steps there, and the last
// line the run's end with the answer and the files changed.
func TestRunJSON(t *testing.T) {
	w := newRunWorkspace(t)
	out := w.run(t, "", "--json", "--no-transcript", "--sim-script", w.script(t, editScript...), "make main print 1")
	if out.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", out.code, out.stderr)
	}
	lines := decodeLines(t, out.stdout)
	kinds := map[string]int{}
	for _, l := range lines {
		kinds[l["kind"].(string)]++
	}
	for _, k := range []string{"round_started", "tool_started", "tool_ran", "proposal", "approval"} {
		if kinds[k] == 0 {
			t.Errorf("no %q line; kinds %v", k, kinds)
		}
	}
	if kinds["finished"] != 1 || kinds["failed"] != 0 {
		t.Errorf("finished %d, failed %d lines; want one finished", kinds["finished"], kinds["failed"])
	}
	last := lines[len(lines)-1]
	want := map[string]any{"kind": "finished", "end": "answered", "answer": "Done: main prints 1.", "rounds": 5.0, "files_changed": []any{"main.go"}}
	for k, v := range want {
		if fmt.Sprint(last[k]) != fmt.Sprint(v) {
			t.Errorf("last line's %s = %v, want %v", k, last[k], v)
		}
	}
	for _, l := range lines {
		if l["kind"] == "approval" && (l["allowed"] != false || l["round"] != 3.0 || l["subject"] != "touch sub/made" || !strings.Contains(fmt.Sprint(l["text"]), "--allow-commands")) {
			t.Errorf("approval line %v, want the command refused naming --allow-commands", l)
		}
		if l["kind"] == "tool_ran" && l["tool"] == "bash" && (l["failed"] != true || !strings.Contains(fmt.Sprint(l["result"]), "refused: non-interactive run")) {
			t.Errorf("bash's tool_ran %v, want a failure that says it was refused", l)
		}
	}
}

// The instruction "-" is read from stdin; an empty one, none, or a bad
// flag is a usage error.
func TestRunInstructionAndUsage(t *testing.T) {
	w := newRunWorkspace(t)
	script := w.script(t, `{"content":"Read."}`)
	out := w.run(t, "the instruction from stdin\n", "--sim-script", script, "-")
	if out.code != 0 || out.stdout != "Read.\n" {
		t.Fatalf("run - = exit %d, stdout %q; want 0 and the answer\n%s", out.code, out.stdout, out.stderr)
	}
	transcripts, _ := filepath.Glob(filepath.Join(w.state, "reika", "sessions", "*.jsonl"))
	if len(transcripts) != 1 {
		t.Fatalf("transcripts = %v, want one", transcripts)
	}
	if data, _ := os.ReadFile(transcripts[0]); !strings.Contains(string(data), "the instruction from stdin") {
		t.Error("the instruction read from stdin is not in the transcript")
	}
	// --sim alone answers briefly and changes nothing.
	out = w.run(t, "", "--sim", "--no-transcript", "look around")
	if out.code != 0 || strings.TrimSpace(out.stdout) == "" || !strings.Contains(out.stderr, "answered in 1 round; no file changed") {
		t.Errorf("run --sim = exit %d, stdout %q, stderr %q; want an answer in one round, nothing changed", out.code, out.stdout, out.stderr)
	}
	for _, tt := range []struct {
		stdin string
		args  []string
	}{
		{"", nil},
		{"", []string{"--sim"}},
		{"  \n", []string{"--sim", "-"}},
		{"", []string{"--sim", "one", "two"}},
		{"", []string{"--no-such-flag", "x"}},
		{"", []string{"--max-steps", "-1", "x"}},
	} {
		out := w.run(t, tt.stdin, tt.args...)
		if out.code != 2 || out.stderr == "" {
			t.Errorf("run %q = exit %d, stderr %q; want 2 with a message", tt.args, out.code, out.stderr)
		}
	}
}

// An engine that is not there: exit 1, and --json's one line says so.
func TestRunEngineUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	w := newRunWorkspace(t)
	w.env = append(w.env, "REIKA_ENDPOINT=http://"+addr+"/v1")
	out := w.run(t, "", "--json", "--no-transcript", "--timeout", "20s", "say hi")
	if out.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", out.code, out.stdout, out.stderr)
	}
	lines := decodeLines(t, out.stdout)
	last := lines[len(lines)-1]
	if last["kind"] != "failed" || last["end"] != "start_failed" || !strings.Contains(fmt.Sprint(last["error"]), addr) {
		t.Errorf("last line = %v, want failed at start, naming the endpoint", last)
	}
	if got := w.read(t, "main.go"); got != "package main\n\nfunc main() {}\n" {
		t.Errorf("main.go changed in a run that never started: %q", got)
	}
}

// The step limit and --timeout end the run as a failure.
func TestRunLimits(t *testing.T) {
	w := newRunWorkspace(t)
	out := w.run(t, "", "--json", "--no-transcript", "--max-steps", "1", "--sim-script", w.script(t, editScript...), "x")
	if out.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", out.code, out.stderr)
	}
	lines := decodeLines(t, out.stdout)
	if last := lines[len(lines)-1]; last["kind"] != "failed" || last["end"] != "step_limit" || last["rounds"] != 1.0 {
		t.Errorf("last line = %v, want failed at the step limit after 1 round", last)
	}
	slow := w.script(t, `{"content":"too late","fault":{"latency":"60s"}}`)
	start := time.Now()
	out = w.run(t, "", "--json", "--no-transcript", "--timeout", "500ms", "--sim-script", slow, "x")
	if out.code != 1 || time.Since(start) > 30*time.Second {
		t.Fatalf("exit %d after %v, want 1 soon after the timeout\n%s", out.code, time.Since(start), out.stderr)
	}
	lines = decodeLines(t, out.stdout)
	if last := lines[len(lines)-1]; last["kind"] != "failed" || last["end"] != "timeout" || !strings.Contains(fmt.Sprint(last["error"]), "--timeout") {
		t.Errorf("last line = %v, want failed at the timeout", last)
	}
}

// SIGINT and SIGTERM cancel the run: 130 and 143, the last line says so,
// and the transcript is kept.
func TestRunSignals(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			w := newRunWorkspace(t)
			script := w.script(t, `{"tool_calls":[{"name":"read","arguments":{"path":"main.go"}}]}`,
				`{"content":"too late","fault":{"latency":"60s"}}`)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, reikaBinary(t), "run", "--json", "--sim-script", script, "read main.go")
			cmd.Dir, cmd.Env = w.root, w.env
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Signalled once the second round's request is out.
			sc := bufio.NewScanner(stdout)
			var rest []string
			for sc.Scan() {
				if strings.Contains(sc.Text(), `"kind":"round_started","round":2`) {
					cmd.Process.Signal(tt.sig)
				}
				rest = append(rest, sc.Text())
			}
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != tt.code {
				t.Fatalf("exit %d after %v, want %d\n%s", code, tt.sig, tt.code, strings.Join(rest, "\n"))
			}
			lines := decodeLines(t, strings.Join(rest, "\n"))
			if last := lines[len(lines)-1]; last["kind"] != "failed" || last["end"] != "interrupted" || last["transcript"] == nil {
				t.Errorf("last line = %v, want failed, interrupted, with the transcript", last)
			}
			if transcripts, _ := filepath.Glob(filepath.Join(w.state, "reika", "sessions", "*.jsonl")); len(transcripts) != 1 {
				t.Errorf("transcripts = %v, want the run's kept", transcripts)
			}
		})
	}
}

// fetch_url to a new host is refused without --allow-network, and the
// model is told the flag; nothing leaves the machine.
func TestRunFetchRefused(t *testing.T) {
	w := newRunWorkspace(t)
	w.env = append(w.env, "REIKA_FETCH=1")
	script := w.script(t, `{"tool_calls":[{"name":"fetch_url","arguments":{"url":"https://example.com/docs"}}]}`, `{"content":"Could not fetch."}`)
	out := w.run(t, "", "--json", "--no-transcript", "--allow-commands", "--sim-script", script, "read the docs")
	if out.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", out.code, out.stderr)
	}
	var approvals, results int
	for _, l := range decodeLines(t, out.stdout) {
		switch {
		case l["kind"] == "approval":
			approvals++
			if l["question"] != "fetch" || l["allowed"] != false || !strings.Contains(fmt.Sprint(l["text"]), "--allow-network") {
				t.Errorf("approval line %v, want the fetch refused naming --allow-network", l)
			}
		case l["kind"] == "tool_ran" && l["tool"] == "fetch_url":
			results++
			if l["failed"] != true || !strings.Contains(fmt.Sprint(l["result"]), "rerun with --allow-network") {
				t.Errorf("fetch_url's result %v, want refused, naming --allow-network", l["result"])
			}
		}
	}
	if approvals != 1 || results != 1 {
		t.Errorf("%d approval and %d fetch_url lines, want one each", approvals, results)
	}
}
