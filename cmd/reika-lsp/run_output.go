package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

// runEvent is one line of `reika-lsp run --json`: the shape runUsage
// documents. Its kinds and fields are stable identifiers, never the
// agent's display names.
type runEvent struct {
	Kind   string           `json:"kind"`
	Round  int              `json:"round,omitempty"`
	Chip   *contextwin.Chip `json:"chip,omitempty"`
	Tool   string           `json:"tool,omitempty"`
	CallID string           `json:"call_id,omitempty"`
	Args   string           `json:"args,omitempty"`
	Detail string           `json:"detail,omitempty"`
	Result string           `json:"result,omitempty"`
	Failed bool             `json:"failed,omitempty"`
	Text   string           `json:"text,omitempty"`
	// Tasks are the run's steps, each ticked only from what ran.
	Tasks []runTask `json:"tasks,omitempty"`

	Path    string `json:"path,omitempty"`
	Applied *bool  `json:"applied,omitempty"`
	Diff    string `json:"diff,omitempty"`

	Question string `json:"question,omitempty"`
	Subject  string `json:"subject,omitempty"`
	Why      string `json:"why,omitempty"`
	Allowed  *bool  `json:"allowed,omitempty"`

	Items      int  `json:"items,omitempty"`
	Chars      int  `json:"chars,omitempty"`
	Folded     int  `json:"folded,omitempty"`
	RecapChars int  `json:"recap_chars,omitempty"`
	Emergency  bool `json:"emergency,omitempty"`
	Retry      bool `json:"retry,omitempty"`

	// The last line's.
	End          string    `json:"end,omitempty"`
	Error        string    `json:"error,omitempty"`
	Answer       string    `json:"answer,omitempty"`
	Rounds       *int      `json:"rounds,omitempty"`
	FilesChanged *[]string `json:"files_changed,omitempty"`
	Transcript   string    `json:"transcript,omitempty"`
}

// runTask is a step of the run's task list on the wire.
type runTask struct {
	Text   string `json:"text"`
	Status string `json:"status"` // pending, done (Seen says why), claimed
	Seen   string `json:"seen,omitempty"`
}

// runKinds are the stable names of the agent's events on the wire;
// Finished and Failed are not among them: the run's last line says how
// it ended, once.
var runKinds = map[agent.EventKind]string{
	agent.RoundStarted: "round_started", agent.ChipChanged: "chip", agent.ToolStarted: "tool_started",
	agent.ToolRan: "tool_ran", agent.ProposalReady: "proposal", agent.NoteWritten: "note",
	agent.Shed: "shed", agent.Folded: "fold", agent.Warning: "warning", agent.Waiting: "waiting",
	agent.Activity: "activity", agent.Replied: "replied", agent.Debug: "debug",
	agent.Streamed: "text", agent.Reasoned: "reasoning", agent.Delegated: "subagent", agent.TasksChanged: "tasks",
}

// runEnds are the stable names of how a run ended.
var runEnds = map[agent.End]string{
	agent.Answered: "answered", agent.Canceled: "canceled", agent.StepLimit: "step_limit",
	agent.EngineFailed: "engine_failed", agent.TooSmall: "too_small",
}

// runPrinter prints a headless run: JSON lines on stdout, or the answer
// on stdout and a line per step on stderr. The tools may report from
// their own goroutines: it is safe for concurrent use.
type runPrinter struct {
	mu       sync.Mutex
	asJSON   bool
	stdout   io.Writer
	stderr   io.Writer
	enc      *json.Encoder
	sig      os.Signal
	timedOut bool
	round    int // the round under way, for the questions' lines
}

func newRunPrinter(asJSON bool, stdout, stderr io.Writer) *runPrinter {
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	return &runPrinter{asJSON: asJSON, stdout: stdout, stderr: stderr, enc: enc}
}

func (p *runPrinter) signalled(s os.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sig = s
}

func (p *runPrinter) timeout() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timedOut = true
}

func (p *runPrinter) signal() os.Signal {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sig
}

// event prints one of the run's events.
func (p *runPrinter) event(e agent.Event) {
	kind, ok := runKinds[e.Kind]
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Kind == agent.RoundStarted {
		p.round = e.Round
	}
	if p.asJSON {
		p.enc.Encode(jsonEvent(kind, e))
		return
	}
	var line string
	switch e.Kind {
	case agent.ToolRan:
		line = e.Tool + " " + clipWithEllipsis(oneLineText(e.Detail), 160)
	case agent.ProposalReady:
		if e.Proposal == nil || !e.Applied {
			return
		}
		line = "changed " + e.Proposal.Path
	case agent.NoteWritten:
		line = "note: " + clipWithEllipsis(oneLineText(e.Text), 160)
	case agent.Shed, agent.Folded:
		line = "▸ " + e.String()
	case agent.Warning:
		line = "! " + oneLineText(e.Text)
	case agent.Waiting:
		line = "… " + oneLineText(e.Text)
	case agent.Delegated:
		line = "  " + oneLineText(e.Text)
	case agent.TasksChanged:
		line = fmt.Sprintf("tasks: %d/%d done", agent.TasksDone(e.Tasks), len(e.Tasks))
	default:
		return
	}
	fmt.Fprintf(p.stderr, "[%d] %s\n", e.Round, line)
}

// jsonEvent is an agent's event as its JSON line.
func jsonEvent(kind string, e agent.Event) runEvent {
	ev := runEvent{Kind: kind, Round: e.Round}
	switch e.Kind {
	case agent.RoundStarted, agent.ChipChanged:
		chip := e.Chip
		ev.Chip = &chip
	case agent.ToolStarted:
		ev.Tool, ev.CallID, ev.Args = e.Tool, e.CallID, e.Args
	case agent.Delegated:
		ev.CallID, ev.Text = e.CallID, e.Text
	case agent.TasksChanged:
		for _, t := range e.Tasks {
			ev.Tasks = append(ev.Tasks, runTask{Text: t.Text, Status: string(t.Status), Seen: t.Seen})
		}
	case agent.ToolRan:
		ev.Tool, ev.CallID, ev.Detail, ev.Result, ev.Failed = e.Tool, e.CallID, e.Detail, e.Text, e.ToolFailed
	case agent.ProposalReady:
		applied := e.Applied
		ev.CallID, ev.Applied = e.CallID, &applied
		if e.Proposal != nil {
			ev.Path, ev.Diff = e.Proposal.Path, e.Proposal.Diff
		}
	case agent.Shed:
		ev.Items, ev.Chars, ev.Emergency = len(e.ShedItems), e.ShedChars, e.Emergency
	case agent.Folded:
		ev.Folded, ev.RecapChars, ev.Emergency = e.Folded, e.RecapChars, e.Emergency
	case agent.Warning:
		ev.Text, ev.Retry, ev.Emergency = e.Text, e.Retry, e.Emergency
	default:
		ev.Text = e.Text
	}
	return ev
}

// approval prints a question the run answered by its flags.
func (p *runPrinter) approval(q tools.Question, refusal string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.asJSON {
		allowed := refusal == ""
		p.enc.Encode(runEvent{Kind: "approval", Round: p.round, Question: string(q.Kind), Subject: q.Subject, Why: q.Why, Allowed: &allowed, Text: refusal})
		return
	}
	if refusal == "" {
		refusal = "allowed by the run's flags"
	}
	fmt.Fprintf(p.stderr, "[%d] %s %q (%s): %s\n", p.round, q.Kind, oneLineText(q.Subject), q.Why, refusal)
}

// warning prints a notice of the session's start.
func (p *runPrinter) warning(text string) {
	p.event(agent.Event{Kind: agent.Warning, Text: text})
}

// startFailed says that no session could start: nothing ran.
func (p *runPrinter) startFailed(err error) error {
	p.last(runEvent{Kind: "failed", End: "start_failed", Error: err.Error()}, nil)
	return err
}

// finish prints how the run ended: the last line.
func (p *runPrinter) finish(res agent.Result, err error, files []string, transcriptPath string) {
	rounds := res.Rounds
	ev := runEvent{Kind: "finished", End: runEnds[res.End], Answer: res.Answer, Rounds: &rounds, Transcript: transcriptPath}
	if err != nil {
		ev.Kind, ev.Error = "failed", err.Error()
	}
	p.last(ev, files)
}

// last prints the run's last line; a failure a signal or the timeout
// caused says so.
func (p *runPrinter) last(ev runEvent, files []string) {
	if files == nil {
		files = []string{}
	}
	ev.FilesChanged = &files
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Kind == "failed" {
		switch {
		case p.sig == os.Interrupt:
			ev.End, ev.Error = "interrupted", "interrupted by SIGINT"
		case p.sig == syscall.SIGTERM:
			ev.End, ev.Error = "interrupted", "terminated by SIGTERM"
		case p.timedOut:
			ev.End = "timeout"
		}
	}
	if p.asJSON {
		p.enc.Encode(ev)
		return
	}
	if ev.Answer != "" {
		fmt.Fprintln(p.stdout, strings.TrimRight(ev.Answer, "\n"))
	}
	var b strings.Builder
	b.WriteString("reika-lsp run: ")
	if ev.Kind == "finished" {
		fmt.Fprintf(&b, "answered in %s", rounds(*ev.Rounds))
	} else {
		b.WriteString(ev.Error)
		if ev.Rounds != nil {
			fmt.Fprintf(&b, " (after %s)", rounds(*ev.Rounds))
		}
	}
	if len(files) > 0 {
		fmt.Fprintf(&b, "; files changed: %s", strings.Join(files, ", "))
	} else if ev.Rounds != nil {
		b.WriteString("; no file changed")
	}
	if ev.Transcript != "" {
		fmt.Fprintf(&b, "; transcript %s", ev.Transcript)
	}
	fmt.Fprintln(p.stderr, b.String())
}

func rounds(n int) string {
	if n == 1 {
		return "1 round"
	}
	return fmt.Sprintf("%d rounds", n)
}

// oneLineText is text on one line, its line breaks made spaces.
func oneLineText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// errRunTimeout is the cause of a run's end at its --timeout.
var errRunTimeout = errors.New("the run reached its --timeout")
