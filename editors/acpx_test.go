package editors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// acpxPrompt is a prompt of two paragraphs, as a user types it.
const acpxPrompt = "Make Greet shout.\n\nKeep its comment as it is."

// greetShouts is greetGo after greetEdit.
var greetShouts = strings.Replace(greetGo, `return "hello, " + name`, `return "Hello, " + name + "!"`, 1)

// An acpxLine is the snippet's acpx command: the environment it sets and
// the arguments before the prompt.
type acpxLine struct {
	env  map[string]string
	args []string
}

// global returns the line's global options: its words before exec.
func (l acpxLine) global() []string {
	i := slices.Index(l.args, "exec")
	if i < 0 {
		i = len(l.args)
	}
	return slices.Clone(l.args[:i])
}

// parseAcpx reads the snippet's acpx line as a POSIX shell does for the
// forms it uses: leading NAME=value words, plain and single-quoted words.
func parseAcpx(t *testing.T, text string) acpxLine {
	t.Helper()
	word := regexp.MustCompile(`'([^']*)'|(\S+)`)
	for _, l := range strings.Split(text, "\n") {
		var words []string
		for _, m := range word.FindAllStringSubmatch(l, -1) {
			words = append(words, m[1]+m[2])
		}
		out := acpxLine{env: map[string]string{}}
		i := 0
		for ; i < len(words) && regexp.MustCompile(`^[A-Z_]+=`).MatchString(words[i]); i++ {
			k, v, _ := strings.Cut(words[i], "=")
			out.env[k] = v
		}
		if i == len(words) || words[i] != "acpx" {
			continue
		}
		// The last word is the snippet's prompt; the test gives its own.
		if len(words) < i+3 {
			t.Fatalf("the acpx snippet's line has no prompt: %q", l)
		}
		out.args = words[i+1 : len(words)-1]
		return out
	}
	t.Fatalf("the acpx snippet has no acpx line:\n%s", text)
	return acpxLine{}
}

// acpxCLI returns node and acpx's entry point, which `npm ci` in
// editors/acp installs (.ci/install-acp-client).
func acpxCLI(t *testing.T) (node, cli string) {
	t.Helper()
	node = need(t, "node")
	cli, err := filepath.Abs(filepath.Join("acp", "node_modules", "acpx", "dist", "cli.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cli); err != nil {
		need(t, "acpx (npm ci in editors/acp)")
	}
	return node, cli
}

// runAcpx runs acpx's exec as the snippet does, with more global options
// (before the subcommand), more of exec's options and the test's prompt
// in place of the snippet's. It returns acpx's stdout and exit code.
func runAcpx(t *testing.T, r *rig, line acpxLine, global, options []string, prompt string) (string, int) {
	t.Helper()
	args := append(line.global(), global...)
	args = append(args, line.args[len(line.global()):]...)
	args = append(args, options...)
	return acpx(t, r, line, append(args, prompt)...)
}

// acpx runs acpx with args in the rig's workspace with the rig's
// environment plus the snippet's, the simulated engine in the usual one's
// place, killed after 60 s. It returns acpx's stdout and its exit code;
// stderr goes to the test's log when the test fails.
func acpx(t *testing.T, r *rig, line acpxLine, args ...string) (string, int) {
	t.Helper()
	node, cli := acpxCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{cli}, args...)...)
	cmd.Dir = r.WS
	env := r.Env()
	for k, v := range line.env {
		env = append(env, k+"="+v)
	}
	cmd.Env = append(env, "REIKA_ENDPOINT="+r.Endpoint)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("acpx %q: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout.String(), stderr.String())
		}
	})
	// Errors, not fatal: the test's deferred close runs this too.
	if ctx.Err() != nil {
		t.Errorf("acpx %q did not finish within 60s", args)
		return stdout.String(), -1
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Errorf("acpx: %v", err)
		return "", -1
	}
	return stdout.String(), cmd.ProcessState.ExitCode()
}

// TestAcpxSnippet: the snippet starts `reika-lsp acp` with the usual
// local endpoint, and pins the acpx the tests run.
func TestAcpxSnippet(t *testing.T) {
	line := parseAcpx(t, snippet(t, "acpx-acp"))
	if got := agentOf(line); got != "reika-lsp acp" {
		t.Errorf("the snippet's agent is %q, want reika-lsp acp", got)
	}
	if line.env["REIKA_ENDPOINT"] != "http://127.0.0.1:8080/v1" {
		t.Errorf("the snippet's environment %v, want REIKA_ENDPOINT at llama-server's usual address", line.env)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join("acp", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if want := "acpx@" + pkg.Dependencies["acpx"]; !strings.Contains(snippet(t, "acpx-acp"), want) {
		t.Errorf("the snippet does not install %s, the version editors/acp pins", want)
	}
}

// agentOf is the value of the line's --agent option.
func agentOf(l acpxLine) string {
	for i, a := range l.args {
		if a == "--agent" && i+1 < len(l.args) {
			return l.args[i+1]
		}
	}
	return ""
}

// acpxMessage is one line of acpx's --format json output: an ACP message
// either way between acpx and the agent.
type acpxMessage struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

// acpxMessages parses acpx's --format json output.
func acpxMessages(t *testing.T, out string) []acpxMessage {
	t.Helper()
	var ms []acpxMessage
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m acpxMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("acpx --format json printed a line that is not JSON: %q", l)
		}
		ms = append(ms, m)
	}
	return ms
}

// TestAcpxClient runs the real acpx (the pinned one in editors/acp) with
// the snippet's command line against `reika-lsp acp` and the simulated
// engine: a prompt of two paragraphs answered, then an edit in the
// ask-first mode allowed and denied through acpx's permission flags.
func TestAcpxClient(t *testing.T) {
	longBoot(t, "TestACPClient")
	line := parseAcpx(t, snippet(t, "acpx-acp"))
	// Reika's mode as the session config option acpx sets before the prompt.
	askFirst := []string{"--config-option", "mode=ask"}
	t.Run("reply", func(t *testing.T) {
		r := newRig(t, `[{"content": "`+acpAnswer+`"}]`, map[string]string{"greet.go": greetGo})
		out, code := runAcpx(t, r, line, []string{"--format", "quiet"}, nil, acpxPrompt)
		if code != 0 || strings.TrimSpace(out) != acpAnswer {
			t.Fatalf("acpx exited %d and printed %q, want the engine's answer %q", code, out, acpAnswer)
		}
		if req := r.requests(t, 1)[0]; !strings.Contains(req, acpxPrompt) {
			t.Errorf("the engine's request does not carry the prompt's two paragraphs as typed:\n%s", req)
		}
	})
	t.Run("session", func(t *testing.T) { testAcpxSession(t, line) })
	t.Run("edit/allow", func(t *testing.T) {
		r := newRig(t, `[`+greetEdit+`, {"content": "Greet shouts now."}]`, map[string]string{"greet.go": greetGo})
		out, code := runAcpx(t, r, line, []string{"--approve-all", "--format", "json"}, askFirst, acpxPrompt)
		if code != 0 {
			t.Fatalf("acpx exited %d", code)
		}
		checkAcpxEdit(t, acpxMessages(t, out), "once")
		if got := r.read(t, "greet.go"); got != greetShouts {
			t.Errorf("greet.go after the edit was allowed:\n%s", got)
		}
	})
	t.Run("edit/deny", func(t *testing.T) {
		r := newRig(t, `[`+greetEdit+`, {"content": "Left as it was."}]`, map[string]string{"greet.go": greetGo})
		out, code := runAcpx(t, r, line, []string{"--deny-all", "--format", "json"}, askFirst, acpxPrompt)
		// 5 is acpx's exit code for a permission it denied.
		if code != 5 {
			t.Errorf("acpx exited %d, want 5 (a permission denied)", code)
		}
		checkAcpxEdit(t, acpxMessages(t, out), "deny")
		if got := r.read(t, "greet.go"); got != greetGo {
			t.Errorf("greet.go changed though the edit was denied:\n%s", got)
		}
		if reqs := r.requests(t, 2); !strings.Contains(reqs[1], "rejected") {
			t.Errorf("the model is not told the edit was rejected:\n%s", reqs[1])
		}
	})
}

// checkAcpxEdit checks the ACP messages of an edit in the ask-first mode:
// the agent asks with the edit's diff, acpx answers with the option
// answer ("once" or "deny"), the call says nothing more once it has
// ended (a client shows each update as a step of its own), the file is
// written through acpx only when allowed, and the turn ends.
func checkAcpxEdit(t *testing.T, ms []acpxMessage, answer string) {
	t.Helper()
	type diff struct{ Type, Path, OldText, NewText string }
	type call struct {
		SessionUpdate, ToolCallID, Status string
		Content                           []diff
	}
	asked, answered, endAt, after, wrote := -1, "", -1, -1, false
	var stop string
	for i, m := range ms {
		switch {
		case m.Method == "session/request_permission":
			var p struct{ ToolCall call }
			json.Unmarshal(m.Params, &p)
			for _, d := range p.ToolCall.Content {
				if d.Type == "diff" && strings.HasSuffix(d.Path, "greet.go") && d.OldText == greetGo && d.NewText == greetShouts {
					asked = i
				}
			}
		case m.Method == "session/update":
			var p struct{ Update call }
			json.Unmarshal(m.Params, &p)
			switch {
			case p.Update.ToolCallID == "":
			case endAt >= 0 && after < 0:
				after = i
			case p.Update.Status == "completed" || p.Update.Status == "failed":
				endAt = i
			}
		case m.Method == "fs/write_text_file":
			wrote = true
		case m.Method == "" && m.Result != nil:
			var res struct {
				Outcome    struct{ OptionID string }
				StopReason string
			}
			json.Unmarshal(m.Result, &res)
			if asked >= 0 && answered == "" && res.Outcome.OptionID != "" {
				answered = res.Outcome.OptionID
			}
			if res.StopReason != "" {
				stop = res.StopReason
			}
		}
	}
	if asked < 0 {
		t.Fatalf("no permission asked with the edit's diff of greet.go")
	}
	if answered != answer {
		t.Errorf("acpx answered the permission %q, want %q", answered, answer)
	}
	if endAt < 0 {
		t.Errorf("the edit's call never ends")
	}
	if after >= 0 {
		t.Errorf("the edit's call ended (message %d) and then was updated again (message %d)", endAt+1, after+1)
	}
	if wrote != (answer == "once") {
		t.Errorf("fs/write_text_file sent: %v, with the answer %q", wrote, answer)
	}
	if stop != "end_turn" {
		t.Errorf("the prompt's stop reason %q, want end_turn", stop)
	}
}

// testAcpxSession runs acpx's persistent session: created, a prompt, the
// agent process gone when acpx's owner ends after its idle second, then a
// second prompt that a new `reika-lsp acp` resumes, the conversation whole.
func testAcpxSession(t *testing.T, line acpxLine) {
	r := newRig(t, `[{"content": "First answer."}, {"content": "Second answer."}]`, map[string]string{"greet.go": greetGo})
	g := line.global()
	if out, code := acpx(t, r, line, append(g, "sessions", "new")...); code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("acpx sessions new exited %d and printed %q", code, out)
	}
	defer func() {
		acpx(t, r, line, append(g, "sessions", "close")...)
		acpxIdle(t, r, line)
	}()
	if out, code := acpx(t, r, line, append(g, "--ttl", "1", "--format", "quiet", "One.")...); code != 0 || strings.TrimSpace(out) != "First answer." {
		t.Fatalf("the first prompt: acpx exited %d and printed %q", code, out)
	}
	acpxIdle(t, r, line)
	out, code := acpx(t, r, line, append(g, "--ttl", "1", "--format", "json", "Two.")...)
	if code != 0 {
		t.Fatalf("the second prompt: acpx exited %d", code)
	}
	var methods, reply []string
	for _, m := range acpxMessages(t, out) {
		methods = append(methods, m.Method)
		var p struct {
			Update struct {
				SessionUpdate string
				Content       struct{ Text string }
			}
		}
		if m.Method == "session/update" && json.Unmarshal(m.Params, &p) == nil && p.Update.SessionUpdate == "agent_message_chunk" {
			reply = append(reply, p.Update.Content.Text)
		}
	}
	if !slices.Contains(methods, "session/resume") && !slices.Contains(methods, "session/load") {
		t.Errorf("the second prompt's agent was not asked to resume the session: %q", methods)
	}
	if got := strings.Join(reply, ""); got != "Second answer." {
		t.Errorf("the second prompt's reply %q, want the engine's second answer", got)
	}
	req := r.requests(t, 2)[1]
	for _, want := range []string{"One.", "First answer.", "Two."} {
		if !strings.Contains(req, want) {
			t.Errorf("the second request does not carry %q:\n%s", want, req)
		}
	}
}

// acpxIdle waits (up to 20 s) until acpx says no owner of the session is
// alive, so that no agent process outlives what the test expects.
func acpxIdle(t *testing.T, r *rig, line acpxLine) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, _ := acpx(t, r, line, append(line.global(), "--format", "json", "status")...)
		var st struct{ Status string }
		json.Unmarshal([]byte(out), &st)
		if st.Status != "" && st.Status != "alive" {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("acpx status still %q after 20s: %s", st.Status, out)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
