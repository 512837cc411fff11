//go:build unix

package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/contextwin"
)

func TestBashAllowAndConfirm(t *testing.T) {
	root := workspace(t, nil)
	var asked []string
	confirm := func(answer bool) Ask {
		return func(_ context.Context, q Question) Answer {
			asked = append(asked, q.Subject)
			if answer {
				return Once
			}
			return Deny
		}
	}
	allow := []string{"echo", "  true  ", ""}
	tests := []struct {
		name    string
		confirm Ask
		command string
		want    string
		err     bool
		asked   bool
	}{
		{name: "allowlisted with arguments", command: "echo hi", want: "hi\n[exit status 0]"},
		{name: "allowlisted alone", command: "true", want: "(no output)\n[exit status 0]"},
		{name: "a longer word is not the entry", command: "echoes", err: true,
			want: `bash: "echoes" was not run: it needs the user's confirmation (echoes is not on the bash_allow list), and the user cannot be asked here. Use the other tools, or tell the user the command to run`},
		{name: "operators need confirmation", command: "echo hi && touch x", err: true, want: "it needs the user's confirmation"},
		{name: "substitution needs confirmation", command: "echo $(id)", err: true, want: "it needs the user's confirmation"},
		{name: "redirection needs confirmation", command: "echo hi > x", err: true, want: "it needs the user's confirmation"},
		{name: "confirmed", confirm: confirm(true), command: "printf 'a\\n'; printf 'b\\n' >&2; exit 3", want: "a\nb\n[exit status 3]", asked: true},
		{name: "declined", confirm: confirm(false), command: "touch x", err: true, asked: true,
			want: `bash: the user declined to run "touch x"; do not run it again: find another way, or ask the user`},
		{name: "allowlisted runs without asking", confirm: confirm(false), command: "echo ok", want: "ok\n[exit status 0]"},
		{name: "empty", command: "  ", err: true, want: `bash needs "command"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			s := newSet(t, root, Config{BashAllow: allow, Ask: tt.confirm})
			res := call(t, s, "bash", map[string]any{"command": tt.command})
			if res.Error != tt.err || !strings.Contains(res.Content, tt.want) {
				t.Errorf("bash(%q) = %q (error %v), want %q (error %v)", tt.command, res.Content, res.Error, tt.want, tt.err)
			}
			if got := len(asked) > 0; got != tt.asked {
				t.Errorf("bash(%q) asked the user: %v, want %v", tt.command, asked, tt.asked)
			}
			if !tt.err && res.Payload != (contextwin.Payload{Kind: contextwin.Command, Path: strings.TrimSpace(tt.command)}) {
				t.Errorf("bash(%q) payload = %+v", tt.command, res.Payload)
			}
		})
	}
	if exists(filepath.Join(root, "x")) {
		t.Errorf("a refused command ran: x exists")
	}
}

// A front end that cannot ask says why in its own words (a headless run
// names the flag that would allow it); the question is what it is told.
func TestBashUnaskedReason(t *testing.T) {
	root := workspace(t, nil)
	var got Question
	s := newSet(t, root, Config{
		Ask:     func(context.Context, Question) Answer { return Unasked },
		Unasked: func(q Question) string { got = q; return "refused: non-interactive run" },
	})
	res := call(t, s, "bash", map[string]any{"command": "touch x"})
	want := `bash: "touch x" was not run: it needs the user's confirmation (touch is not on the bash_allow list), and refused: non-interactive run`
	if !res.Error || res.Content != want {
		t.Errorf("bash(touch x) = %q (error %v), want %q", res.Content, res.Error, want)
	}
	if got.Kind != AskCommand || got.Subject != "touch x" {
		t.Errorf("Unasked was given %+v, want the command's question", got)
	}
	if exists(filepath.Join(root, "x")) {
		t.Errorf("a refused command ran: x exists")
	}
}

func TestBashEnvironment(t *testing.T) {
	root := workspace(t, map[string]string{"f.txt": "x"})
	s := newSet(t, root, Config{BashAllow: []string{"pwd", "cat", "ls"}})
	real, _ := filepath.EvalSymlinks(root)
	if res := call(t, s, "bash", map[string]any{"command": "pwd"}); res.Content != root+"\n[exit status 0]" && res.Content != real+"\n[exit status 0]" {
		t.Errorf("bash(pwd) = %q, want the first folder", res.Content)
	}
	// stdin is closed: cat returns at once.
	if res := call(t, s, "bash", map[string]any{"command": "cat"}); res.Content != "(no output)\n[exit status 0]" {
		t.Errorf("bash(cat) = %q, want no output", res.Content)
	}
	if res := call(t, s, "bash", map[string]any{"command": "ls"}); res.Content != "f.txt\n[exit status 0]" {
		t.Errorf("bash(ls) = %q", res.Content)
	}
}

// TestBashTimeoutKillsTheGroup: at the time limit the command and what it
// started are killed.
func TestBashTimeoutKillsTheGroup(t *testing.T) {
	root := workspace(t, nil)
	s := newSet(t, root, Config{Ask: yes, BashTimeout: 2 * time.Second})
	res := call(t, s, "bash", map[string]any{"command": "sleep 300 & echo $! > child.pid; wait"})
	if !res.Error || !strings.Contains(res.Content, "[stopped at the time limit of 2 seconds, with its child processes;") {
		t.Errorf("bash(sleep) = %q, want it stopped at the time limit", res.Content)
	}
	waitGone(t, readPid(t, filepath.Join(root, "child.pid")))
}

func TestBashCancelKillsTheGroup(t *testing.T) {
	root := workspace(t, nil)
	s := newSet(t, root, Config{BashAllow: []string{"sleep"}, Ask: yes})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pidFile := filepath.Join(root, "child.pid")
	done := make(chan Result)
	go func() {
		done <- s.Run(ctx, engine.ToolCall{Name: "bash", Arguments: `{"command":"sleep 300 & echo $! > child.pid; wait"}`})
	}()
	for !exists(pidFile) || len(readFile(t, pidFile)) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	res := <-done
	if !res.Error || !strings.Contains(res.Content, "[cancelled: the command and its child processes were stopped]") {
		t.Errorf("bash(cancelled) = %q, want it cancelled", res.Content)
	}
	waitGone(t, readPid(t, pidFile))
	// A cancelled context runs nothing.
	res = s.Run(ctx, engine.ToolCall{Name: "bash", Arguments: `{"command":"touch ran"}`})
	if !res.Error || exists(filepath.Join(root, "ran")) {
		t.Errorf("bash(after cancel) = %q, want nothing run", res.Content)
	}
}

// TestBashBackgroundLeftovers: what a finished command left running is
// stopped with it.
func TestBashBackgroundLeftovers(t *testing.T) {
	root := workspace(t, nil)
	s := newSet(t, root, Config{Ask: yes})
	res := call(t, s, "bash", map[string]any{"command": "sleep 300 & echo $! > child.pid; echo started"})
	if res.Error || res.Content != "started\n[exit status 0]" {
		t.Errorf("bash(background) = %q", res.Content)
	}
	waitGone(t, readPid(t, filepath.Join(root, "child.pid")))
}

func TestBashSpill(t *testing.T) {
	root := workspace(t, nil)
	spill := filepath.Join(t.TempDir(), "spill")
	s := newSet(t, root, Config{BashAllow: []string{"seq"}, SpillDir: spill})
	res := call(t, s, "bash", map[string]any{"command": "seq 1 20000"})
	if res.Payload.Spill == "" || filepath.Dir(res.Payload.Spill) != spill {
		t.Fatalf("bash(seq 1 20000) spill = %q, want a file in %s", res.Payload.Spill, spill)
	}
	whole := readFile(t, res.Payload.Spill)
	if !strings.HasPrefix(whole, "1\n2\n") || !strings.HasSuffix(whole, "19999\n20000\n[exit status 0]") {
		t.Errorf("spill file holds %q…%q, want the whole output", whole[:10], whole[len(whole)-30:])
	}
	if !strings.Contains(res.Content, "is saved in "+res.Payload.Spill+"; page through it with read") || !strings.Contains(res.Content, "lines left out here") {
		t.Errorf("bash(seq) content does not say where the whole output is: %q", res.Content[len(res.Content)-200:])
	}
	if len(res.Content) > spillKeep+1000 {
		t.Errorf("bash(seq) content is %d bytes, want it cut to about %d", len(res.Content), spillKeep)
	}
	page := call(t, s, "read", map[string]any{"path": res.Payload.Spill, "offset": 19999, "limit": 2})
	if page.Content != " 19999\t19999\n 20000\t20000\n… 1 line more; read with offset=20001" {
		t.Errorf("read(spill, offset=19999) = %q", page.Content)
	}
	// A short output is not spilled; nor is anything without a spill dir.
	if res := call(t, s, "bash", map[string]any{"command": "seq 1 3"}); res.Payload.Spill != "" {
		t.Errorf("bash(seq 1 3) spilled to %s", res.Payload.Spill)
	}
	s = newSet(t, root, Config{BashAllow: []string{"seq"}})
	if res := call(t, s, "bash", map[string]any{"command": "seq 1 20000"}); res.Payload.Spill != "" || !strings.HasSuffix(res.Content, "20000\n[exit status 0]") {
		t.Errorf("bash(seq, no spill dir) spilled to %q", res.Payload.Spill)
	}
}

func TestCapture(t *testing.T) {
	c := &capture{max: 4 << 20}
	c.Write(bytes.Repeat([]byte("x"), 3<<20))
	c.Write(bytes.Repeat([]byte("y"), 2<<20))
	if s := c.String(); len(c.buf) != 4<<20 || !strings.HasSuffix(s, "… [output cut at 4 MB; 1048576 more bytes were not kept]\n") {
		t.Errorf("capture of 5 MB kept %d bytes, ends %q", len(c.buf), s[len(s)-60:])
	}
}

func readPid(t *testing.T, p string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, p)))
	if err != nil {
		t.Fatalf("pid file %s: %v", p, err)
	}
	return pid
}

// waitGone waits until process pid has exited (a zombie counts: it runs
// nothing), failing the test if it is still running after a long while.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for range 1000 {
		if processGone(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("process %d still runs, want it killed", pid)
}

func processGone(pid int) bool {
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := bytes.LastIndexByte(data, ')'); i >= 0 && i+2 < len(data) {
			return data[i+2] == 'Z' || data[i+2] == 'X'
		}
	} else if _, err := os.Stat("/proc/self/stat"); err == nil {
		return true // procfs works and the process is not in it
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
