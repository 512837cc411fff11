package agent

import (
	"fmt"

	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

// Chip is the status line's view of the context (contextwin's), for
// front ends that speak only to the agent.
type Chip = contextwin.Chip

// Budget is the division of the window (contextwin's), likewise.
type Budget = contextwin.Budget

// Breakdown is the window at a glance by part (contextwin's), likewise.
type Breakdown = contextwin.Breakdown

// Image is a picture the user attached to an ask (RunImages).
type Image = contextwin.Image

// EventKind says what happened.
type EventKind int

const (
	// RoundStarted: a request is about to go to the engine.
	RoundStarted EventKind = iota
	// ChipChanged: the engine answered; Chip has its figures.
	ChipChanged
	// ToolRan: a tool call finished; Tool and Detail say which and what.
	ToolRan
	// NoteWritten: the model wrote its note before a fold.
	NoteWritten
	// Shed: old results were shed to their summaries.
	Shed
	// Folded: old turns were folded into a recap; an emergency fold too.
	Folded
	// ProposalReady: an edit or a new file was proposed (and perhaps
	// applied: see Outcome).
	ProposalReady
	// Warning: something the user should know (Text).
	Warning
	// Debug: a prefix-cache line (REIKA_DEBUG).
	Debug
	// Finished: the run ended; Result says how.
	Finished
	// Failed: the run ended on an error; Err says which.
	Failed
	// Waiting: the engine has sent nothing for a while (Text says how
	// long); a progress line, not a warning.
	Waiting
	// Replied: the model answered (Text), and the run goes on with what
	// the user said meanwhile (Session.Say).
	Replied
	// Activity: what the run waits for, every few seconds of a long wait
	// (Text: "engine reading about 12k tokens, 4 s", "engine writing, 310
	// tokens, 6 s", "running go test ./... (8 s)"); a progress line only.
	Activity
	// Streamed: a piece of the model's reply (Text) as the engine streams
	// it, for front ends that show the conversation as it is written. A
	// request that is retried streams again from its start; a note
	// round's text is not streamed.
	Streamed
	// Reasoned: a piece of the model's reasoning (Text), likewise.
	Reasoned
	// ToolStarted: a tool call is about to run; Tool, CallID and Args say
	// which. Its ToolRan (and ProposalReady) carry the same CallID.
	ToolStarted
	// Delegated: a step of a subagent (Text, "subagent 1: read x.go"),
	// under the parent's call CallID; a progress line.
	Delegated
	// TasksChanged: the run's task list (Tasks) was stated, or a step's
	// status changed (tasks.go).
	TasksChanged
)

var eventNames = [...]string{
	RoundStarted: "round", ChipChanged: "chip", ToolRan: "tool", NoteWritten: "note", Shed: "shed",
	Folded: "fold", ProposalReady: "proposal", Warning: "warning", Debug: "debug", Finished: "finished", Failed: "failed",
	Waiting: "waiting", Replied: "replied", Activity: "activity", Streamed: "streamed", Reasoned: "reasoned",
	ToolStarted: "tool started", Delegated: "subagent", TasksChanged: "tasks",
}

func (k EventKind) String() string { return eventNames[k] }

// Event is one thing a run reports to its front end. It carries no LSP
// types: the front end turns it into progress, messages or status.
type Event struct {
	Kind  EventKind
	Round int
	Chip  contextwin.Chip
	// Tool and Detail: the tool that ran and a one-line account of it.
	Tool, Detail string
	// CallID and Args: the model's id of the tool call and its argument
	// text (ToolStarted); ToolFailed: the call's result is an error
	// (ToolRan).
	CallID, Args string
	ToolFailed   bool
	// Text: a warning, a debug line, a note; a tool's result as the model
	// reads it (ToolRan).
	Text string
	// Shed and Folded figures.
	ShedItems  []contextwin.Removed
	ShedChars  int
	Folded     int
	RecapChars int
	// Retry marks the Warning that the round's request is sent again
	// (what it streamed so far streams again, from its start).
	Retry bool
	// Emergency marks the Shed and Folded of an emergency shrink (the
	// engine refused the request as too long), and the Warning that says
	// in one line what it did.
	Emergency bool
	// Show marks a Warning the user should see at once, not only in a
	// log: the transcript cannot be written, or is again.
	Show bool
	// Proposal and whether the front end applied it (its Outcome).
	Proposal *tools.Proposal
	Applied  bool
	// Result ends a run.
	Result *Result
	Err    error
	// Tasks: the run's task list, each step with what Reika saw of it
	// (TasksChanged).
	Tasks []Task
}

func (e Event) String() string {
	switch e.Kind {
	case ToolRan:
		return fmt.Sprintf("%s %s", e.Tool, e.Detail)
	case Shed:
		return fmt.Sprintf("shed %d results (%d bytes)", len(e.ShedItems), e.ShedChars)
	case Folded:
		if e.Emergency {
			return fmt.Sprintf("emergency fold: %d messages into a %d-byte recap", e.Folded, e.RecapChars)
		}
		return fmt.Sprintf("fold: %d messages into a %d-byte recap", e.Folded, e.RecapChars)
	case ChipChanged:
		return e.Chip.String()
	case Finished:
		if e.Result != nil {
			return "finished: " + e.Result.End.String()
		}
	case Failed:
		return fmt.Sprintf("failed: %v", e.Err)
	}
	if e.Text != "" {
		return e.Kind.String() + ": " + e.Text
	}
	return e.Kind.String()
}

// End says how a run ended.
type End int

const (
	// Answered: the model gave its final answer.
	Answered End = iota
	// Canceled: the user cancelled.
	Canceled
	// StepLimit: the run took as many rounds as it may.
	StepLimit
	// EngineFailed: the engine failed in a way retrying does not mend.
	EngineFailed
	// TooSmall: the window cannot hold the fixed prefix and one round.
	TooSmall
)

var endNames = [...]string{Answered: "answered", Canceled: "canceled", StepLimit: "step limit reached", EngineFailed: "engine error", TooSmall: "window too small"}

func (e End) String() string { return endNames[e] }

// Result is how a run ended.
type Result struct {
	End    End
	Answer string // the final answer, when the model gave one
	Rounds int    // requests that carried a round (notes and retries aside)
	// Proposals are the changes the run proposed, in order.
	Proposals []*tools.Proposal
	Err       error // for EngineFailed and TooSmall
	// Tasks is the run's task list as it ended, nil when no reply
	// stated one.
	Tasks []Task
}
