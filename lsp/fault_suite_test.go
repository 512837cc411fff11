package lsp_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/internal/testslow"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// TestFaultSuite plays one engine fault per case through the real server:
// what the user sees (one line each, no blank lines), that the transcript
// on disk is whole and holds the instruction, and that the next ask
// works. Faults of the wire and of the client have their own scenarios
// (wire_garbage, apply_unanswered, bash_cannot_ask, shutdown_while_streaming,
// the cancel_* ones).
func TestFaultSuite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault string // the first reply's fault, as in a script
		seen  string // a line the user sees during or at the end of the run
		end   string // the run's last line
	}{
		{"500", `{"status": 500}`, `engine server error .*retrying in 1s`, `Reika: recovered\.`},
		{"503 loading", `{"status": 503}`, `engine is loading its model .*retrying`, `Reika: recovered\.`},
		{"429", `{"status": 429}`, `engine rate limit .*retrying`, `Reika: recovered\.`},
		{"HTML 502 from a proxy", `{"html": true}`, `an HTML page titled "502 Bad Gateway".*retrying`, `Reika: recovered\.`},
		{"killed mid-stream", `{"cut_after": 2}`, `stream cut short .*retrying`, `Reika: recovered\.`},
		{"malformed tool call", `{"malformed_tool_calls": true}`, `read failed`, `Reika: recovered\.`},
		{"30 s latency, cancelled", "", `progress begin`, `Reika stopped: cancelled`}, // latency by request number, below
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := `{"content": "late", "fault": ` + tc.fault + `}`
			if strings.Contains(tc.fault, "malformed") {
				first = `{"tool_calls": [{"name": "read", "arguments": {"path": "main.go"}}], "fault": ` + tc.fault + `}`
			}
			var rules []sim.FaultRule
			if strings.Contains(tc.name, "cancelled") {
				// The latency goes to the first request by its number, not
				// to a scripted turn: a request cancelled before it took
				// its turn would leave the slow turn to the next ask.
				first = `{"content": "second answer."}` // for whichever request takes it
				rules = []sim.FaultRule{{Fault: sim.Fault{Latency: 30 * time.Second}, First: 1}}
			}
			script, err := sim.ParseScript([]byte(`[` + first + `, {"content": "recovered."}, {"content": "second answer."}]`))
			if err != nil {
				t.Fatal(err)
			}
			e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: map[string]string{"main.go": "package main\n"},
				Engine: sim.Config{Script: script, Faults: rules}, Timeout: 60 * time.Second})
			mark := e.Mark()
			if _, err := e.Exec("reika.ask", map[string]any{"instruction": "First ask: " + tc.name}); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(tc.name, "cancelled") {
				// The request is at the engine, which sits on it.
				for deadline := time.Now().Add(testslow.Scale(10 * time.Second)); e.Engine.Arrived() < 1; time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the first request never reached the engine")
					}
				}
				if _, err := e.Exec("reika.cancel"); err != nil {
					t.Fatal(err)
				}
			}
			end := e.WaitRunEnd(mark)
			if !regexp.MustCompile(tc.end).MatchString(end.Line) {
				t.Errorf("the run ended with %q, want /%s/", end.Line, tc.end)
			}
			seen := false
			for _, ev := range e.Events()[mark:] {
				if strings.Contains(ev.Line, "\n") && ev.Method == "window/showMessage" {
					t.Errorf("a message of several lines: %q", ev.Line)
				}
				seen = seen || regexp.MustCompile(tc.seen).MatchString(ev.Line)
			}
			if !seen {
				t.Errorf("nothing matched /%s/ in:\n%s", tc.seen, strings.Join(e.Transcript(), "\n"))
			}
			checkTranscript(t, e.StateDir, "First ask: "+tc.name)

			mark = e.Mark()
			if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Second ask."}); err != nil {
				t.Fatal(err)
			}
			if end := e.WaitRunEnd(mark); !strings.Contains(end.Line, "second answer.") && !strings.Contains(end.Line, "recovered.") {
				t.Errorf("the next ask ended with %q, want an answer", end.Line)
			}
		})
	}
}

// checkTranscript reads the session's transcript: every line a JSON
// object, the instruction among them.
func checkTranscript(t *testing.T, dir, instruction string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(paths) == 0 {
		t.Fatalf("no transcript in %s", dir)
	}
	f, err := os.Open(paths[len(paths)-1])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	found := false
	for n := 1; sc.Scan(); n++ {
		if !json.Valid(sc.Bytes()) {
			t.Errorf("transcript line %d is not JSON: %.200s", n, sc.Text())
		}
		found = found || strings.Contains(sc.Text(), instruction)
	}
	if !found {
		t.Errorf("the transcript does not hold the instruction %q", instruction)
	}
}

// An ask sent the moment the previous answer shows is never "already
// working": the run is over before the user hears it is.
func TestAskRightAfterTheAnswer(t *testing.T) {
	var turns []sim.Turn
	for i := 0; i < 20; i++ {
		turns = append(turns, sim.Turn{Content: "answer."})
	}
	e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: map[string]string{"main.go": "package main\n"},
		Engine: sim.Config{Script: turns}})
	for i := 0; i < 20; i++ {
		mark := e.Mark()
		res, err := e.Exec("reika.ask", map[string]any{"instruction": "Again."})
		if err != nil || !strings.Contains(string(res), `"started":true`) {
			t.Fatalf("ask %d right after the previous answer = %s, %v; want started", i+1, res, err)
		}
		e.WaitRunEnd(mark)
	}
}

// A client that advertises progress and showDocument and never answers
// them: the run goes on at once (the user hears it started another way),
// and a long answer that cannot be opened is shown in the message.
func TestClientNeverAnswers(t *testing.T) {
	long := strings.Repeat("A long answer. ", 60)
	script, err := sim.ParseScript([]byte(`[{"content": "` + long + `"}]`))
	if err != nil {
		t.Fatal(err)
	}
	e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: map[string]string{"main.go": "package main\n"},
		Engine: sim.Config{Script: script}, ClientTimeout: 30 * time.Second,
		Ignore: []string{"window/workDoneProgress/create", "window/showDocument"}})
	mark := e.Mark()
	start := time.Now()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Explain."}); err != nil {
		t.Fatal(err)
	}
	e.WaitLine(mark, `Reika is working on it`)
	e.WaitRunEnd(mark)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the run took %v: it waited for answers that never came", d)
	}
}

// The engine is down: the ask says so in one line with what to check.
// A settings push cannot point the server elsewhere (the endpoint widens
// trust: a push may carry a repository's settings): the user is warned,
// once, and the next ask still fails. Once the user fixes their config
// file, the next ask works.
func TestEngineDownThenUp(t *testing.T) {
	script, err := sim.ParseScript([]byte(`[{"content": "up again."}]`))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(conf, []byte(`{"endpoint": "http://127.0.0.1:1/v1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: map[string]string{"main.go": "package main\n"},
		Engine: sim.Config{Script: script}, Env: map[string]string{"REIKA_ENDPOINT": "", "REIKA_CONFIG": conf}})
	mark := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Anything."}); err != nil {
		t.Fatal(err)
	}
	down := e.WaitLine(mark, `showMessage error: Reika: .*unreachable.*check the endpoint`)
	if strings.Contains(down.Line, "\n") {
		t.Errorf("the message is several lines: %q", down.Line)
	}
	push := map[string]any{"settings": map[string]any{"reika": map[string]any{"endpoint": e.Engine.URL + "/v1"}}}
	mark = e.Mark()
	e.Notify("workspace/didChangeConfiguration", push)
	e.WaitLine(mark, `showMessage warning: Reika: endpoint from the editor's settings push is ignored: settings that widen trust .* come from .*config\.json, REIKA_\* or the editor's startup options`)
	e.Notify("workspace/didChangeConfiguration", push)
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Still?"}); err != nil {
		t.Fatal(err)
	}
	e.WaitLine(mark, `showMessage error: Reika: .*unreachable`)
	warned := 0
	for _, ev := range e.Events()[mark:] {
		if strings.Contains(ev.Line, "settings push is ignored") {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("the user was warned %d times of the ignored endpoint, want once", warned)
	}

	if err := os.WriteFile(conf, []byte(`{"endpoint": "`+e.Engine.URL+`/v1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	mark = e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Again."}); err != nil {
		t.Fatal(err)
	}
	if end := e.WaitRunEnd(mark); !strings.Contains(end.Line, "up again.") {
		t.Errorf("the ask after the fix ended with %q", end.Line)
	}
}

// The user closes the document while the run is under way: the edit goes
// to the file as it is on disk, unversioned, and lands there.
func TestDocumentClosedMidRun(t *testing.T) {
	script, err := sim.ParseScript([]byte(`[
		{"tool_calls": [{"name": "edit", "arguments": {"path": "main.go", "old_text": "func main() {}", "new_text": "func main() { println(1) }"}}], "fault": {"latency": "300ms"}},
		{"content": "Done."}]`))
	if err != nil {
		t.Fatal(err)
	}
	e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: map[string]string{"main.go": "package main\n\nfunc main() {}\n"},
		Engine: sim.Config{Script: script}})
	e.Open("main.go")
	mark := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Print 1."}); err != nil {
		t.Fatal(err)
	}
	e.WaitProgress(mark, "begin")
	e.Close("main.go")
	if end := e.WaitRunEnd(mark); !strings.Contains(end.Line, "1 change applied to main.go") {
		t.Errorf("the run ended with %q", end.Line)
	}
	if text, ok := e.Current("main.go"); !ok || !strings.Contains(text, "println(1)") {
		t.Errorf("main.go in the editor = %q (open %v), want the edit", text, ok)
	}
}

// No code actions on a file outside the workspace: an ask about it would
// be refused.
func TestNoCodeActionsOutsideTheWorkspace(t *testing.T) {
	e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: map[string]string{"main.go": "package main\n"}})
	var got []json.RawMessage
	rng := map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 3}}
	for _, uri := range []string{"file:///etc/hostname", lsptest.FileURI(e.Abs("main.go"))} {
		got = nil
		if _, err := e.Call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
			"range": rng, "context": map[string]any{"diagnostics": []any{}}}, &got); err != nil {
			t.Fatal(err)
		}
		if inside := strings.HasSuffix(uri, "main.go"); inside != (len(got) > 0) {
			t.Errorf("code actions on %s: %d, want some only inside the workspace", uri, len(got))
		}
	}
}
