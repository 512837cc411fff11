package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/reika-lsp/reika/contextwin"
)

// Limits of the bash tool.
const (
	bashKeep  = 8 << 20         // output kept in memory; the rest is counted
	bashDrain = 2 * time.Second // how long output may trail a finished command
)

// AllowSetting names the allowlist setting in messages to the model.
const AllowSetting = "bash_allow"

type bashArgs struct {
	Command string `json:"command"`
	// Network asks for TCP, which the sandbox otherwise denies.
	Network bool `json:"network"`
	// Outside asks to run outside the sandbox.
	Outside bool `json:"outside_sandbox"`
}

// Sandbox contains the commands bash runs (agent/sandbox on Linux). It
// must be safe for concurrent use.
type Sandbox interface {
	// Start starts cmd contained; network lets it use TCP.
	Start(cmd *exec.Cmd, network bool) error
	// Env is the environment a contained command gets: the server's less
	// its secrets, with git told not to run hooks, fsmonitor or pagers.
	Env() []string
	// Explain returns a line to add to the output of a command that
	// failed, when the output looks like the sandbox stopped it.
	Explain(output string) string
}

func (s *Set) bash(ctx context.Context, raw json.RawMessage) Result {
	var a bashArgs
	if r := decode(BashTool, raw, &a); r != nil {
		return *r
	}
	command := strings.TrimSpace(a.Command)
	if command == "" {
		return failf(`bash needs "command", such as {"command":"go test ./..."}`)
	}
	p := contextwin.Payload{Kind: contextwin.Command, Path: command}
	r := runOf(ctx)
	if r.mode == Plan {
		return s.planBash(ctx, a, command, p)
	}
	contained := s.sandbox != nil && !a.Outside
	why := s.allowlist().check(command)
	label := "allow list"
	switch {
	case a.Outside && s.sandbox != nil:
		why = join("it asks to run outside the sandbox, where it can write anywhere you can (.git too), read your home and use the network", why)
		label = "outside the sandbox"
	case a.Network && contained:
		why = join("it asks for the network", why)
		label = "network"
	case why == "" && r.mode == AskAll:
		why = "this ask runs nothing unasked"
		label = "ask mode"
	case why == "" && s.sandbox == nil && r.hasWritten():
		why = "this run has changed files, which the command could run, and there is no sandbox to contain it"
		label = "no sandbox"
	}
	key := fmt.Sprintf("%t %t %s", a.Network, a.Outside, command)
	asked := false
	if why != "" && !r.allows(key) {
		answers := []Answer{Once, ThisRun}
		if _, plain := entryWords(command); plain && !a.Network && !a.Outside && s.remember != nil {
			answers = append(answers, Always)
		}
		q := Question{Kind: AskCommand, Subject: command, Why: why, Label: label, Answers: answers, Network: a.Network, Outside: a.Outside}
		switch s.ask(ctx, q) {
		case Unasked:
			if s.unasked != nil {
				return Result{Error: true, Payload: p, Content: fmt.Sprintf(
					BashTool+": %q was not run: it needs the user's confirmation (%s), and %s", command, why, s.unasked(q))}
			}
			return Result{Error: true, Payload: p, Content: fmt.Sprintf(
				BashTool+": %q was not run: it needs the user's confirmation (%s), and the user cannot be asked here. Use the other tools, or tell the user the command to run", command, why)}
		case Deny:
			return Result{Error: true, Payload: p, Content: fmt.Sprintf(
				BashTool+": the user declined to run %q; do not run it again: find another way, or ask the user", command)}
		case ThisRun:
			r.allow(key)
		case Always:
			if err := s.remember(command); err != nil {
				// The yes stands for this run; only keeping it failed.
				r.allow(key)
			} else {
				s.allowAlso(command)
			}
		}
		asked = true
	}
	if asked {
		// An asked command may have written anything: in a run without
		// a sandbox, what follows asks.
		r.setWrote()
	}
	text, failed, passed := s.execute(ctx, command, contained, a.Network)
	return Result{Content: text, Payload: p, Error: failed, Passed: passed}
}

// execute runs command, in the editor's terminal when it is not contained
// and there is one, and returns what the model reads of it: its output,
// its status, the sandbox's note on a refusal, and what became of the
// protected names a contained command created or changed; passed is set
// when the command ran to its end with exit status 0.
func (s *Set) execute(ctx context.Context, command string, contained, network bool) (text string, failed, passed bool) {
	var out, status string
	ran := false
	if !contained && s.terminal != nil {
		out, status, failed, ran = s.runInTerminal(ctx, command)
	}
	var before *scan
	if !ran {
		if contained {
			// What a contained command may leave to run later, at any
			// depth below the top level: looked for before and after it.
			before = scanProtected(s.roots())
		}
		out, status, failed = s.runCommand(ctx, command, contained, network)
	}
	if out == "" {
		out = "(no output)"
	}
	text = strings.TrimSuffix(out, "\n") + "\n" + status
	passed = !failed && status == exitZero
	if contained && !passed {
		if note := s.sandbox.Explain(out); note != "" {
			text += "\n" + note
		}
	}
	if before != nil {
		if note := s.review(ctx, command, before); note != "" {
			text += "\n" + note
		}
	}
	return text, failed, passed
}

// exitZero is the status line of a command that exited with status 0.
const exitZero = "[exit status 0]"

// Terminal runs command with bash -c in dir where the user sees it (an
// editor's terminal), stopped when ctx ends. It returns what the command
// printed and its exit status (-1 when a signal ended it), the context's
// error when ctx ended first (with what it printed by then), an error
// that wraps ErrNoTerminal when the terminal could not start it, or
// another error when it started the command and lost track of it.
type Terminal func(ctx context.Context, command, dir string) (output string, exit int, err error)

// ErrNoTerminal is what a Terminal's error wraps when it did not start the
// command: only then does the command run here instead. One the terminal
// started is never run a second time.
var ErrNoTerminal = errors.New("the editor's terminal did not start the command")

// runInTerminal runs command in the terminal, under the commands' time
// limit; ran is false when the terminal could not run it.
func (s *Set) runInTerminal(ctx context.Context, command string) (out, status string, failed, ran bool) {
	tctx, cancel := context.WithTimeout(ctx, s.bashTimeout)
	defer cancel()
	out, exit, err := s.terminal(tctx, command, s.folders[0].root)
	switch {
	case ctx.Err() != nil:
		return out, "[cancelled: the command was stopped in the editor's terminal]", true, true
	case tctx.Err() != nil:
		return out, fmt.Sprintf("[stopped at the time limit of %s in the editor's terminal; run something shorter, or limit its time]", humanDuration(s.bashTimeout)), true, true
	case errors.Is(err, ErrNoTerminal):
		return "", "", false, false
	case err != nil:
		return out, fmt.Sprintf("[the editor's terminal started the command but did not say how it ended: %v]", err), true, true
	case exit < 0:
		return out, "[stopped by a signal in the editor's terminal]", false, true
	}
	return out, fmt.Sprintf("[exit status %d]", exit), false, true
}

// join puts two reasons together; either may be empty.
func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// ask puts a question to the user; Unasked when nobody can be asked.
func (s *Set) ask(ctx context.Context, q Question) Answer {
	if s.asker == nil {
		return Unasked
	}
	return s.asker(ctx, q)
}

// runCommand runs command with bash -c in the first folder, contained
// by the sandbox when contained is set, stdin closed,
// stdout and stderr together. A timeout or a cancelled ctx kills the
// whole process group; so does the end of the command, for what it left
// running in the background. It returns the output, the status line and
// whether the command was stopped or could not start.
func (s *Set) runCommand(ctx context.Context, command string, contained, network bool) (string, string, bool) {
	if err := ctx.Err(); err != nil {
		return "", "[not run: the request was cancelled]", true
	}
	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Sprintf("[not run: %v]", err), true
	}
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = s.folders[0].root
	cmd.Stdout, cmd.Stderr = w, w
	ownGroup(cmd)
	if contained {
		cmd.Env = s.sandbox.Env()
		err = s.sandbox.Start(cmd, network)
	} else {
		dieWithServer(cmd)
		err = cmd.Start()
	}
	if err != nil {
		r.Close()
		w.Close()
		return "", fmt.Sprintf("[not run: cannot start bash: %v]", err), true
	}
	w.Close()
	stopGuard := guard(cmd)
	defer stopGuard()
	out := &capture{max: bashKeep}
	readDone := make(chan struct{})
	go func() {
		io.Copy(out, r)
		close(readDone)
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	timer := time.NewTimer(s.bashTimeout)
	defer timer.Stop()
	var werr error
	stopped := ""
	select {
	case werr = <-waitDone:
	case <-timer.C:
		stopped = "timeout"
		killGroup(cmd)
		werr = <-waitDone
	case <-ctx.Done():
		stopped = "cancel"
		killGroup(cmd)
		werr = <-waitDone
	}
	killGroup(cmd) // what the command left running
	drain := time.NewTimer(bashDrain)
	select {
	case <-readDone:
	case <-drain.C: // a process outside the group still holds the pipe
	}
	drain.Stop()
	r.Close()
	<-readDone

	text := out.String()
	var status string
	failed := stopped != ""
	switch {
	case stopped == "timeout":
		status = fmt.Sprintf("[stopped at the time limit of %s, with its child processes; run something shorter, or limit its time]", humanDuration(s.bashTimeout))
	case stopped == "cancel":
		status = "[cancelled: the command and its child processes were stopped]"
	case werr == nil:
		status = exitZero
	default:
		var ee *exec.ExitError
		if errors.As(werr, &ee) && ee.ExitCode() >= 0 {
			status = fmt.Sprintf("[exit status %d]", ee.ExitCode())
		} else {
			status = fmt.Sprintf("[%v]", werr)
		}
	}
	return text, status, failed
}

// capture keeps the first max bytes written to it and counts the rest.
type capture struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped int
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - len(c.buf)
	if room >= len(p) {
		c.buf = append(c.buf, p...)
	} else {
		c.buf = append(c.buf, p[:max(room, 0)]...)
		c.dropped += len(p) - max(room, 0)
	}
	return len(p), nil
}

func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := validUTF8(string(c.buf))
	if c.dropped > 0 {
		s += fmt.Sprintf("\n… [output cut at %d MB; %d more bytes were not kept]\n", c.max>>20, c.dropped)
	}
	return s
}
