package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent"
)

// reporter turns a run's events into session updates: the reply and the
// reasoning as they stream, a tool call per call with its kind, place and
// diff, the ctx chip as usage, and each shed, fold and warning as one
// status line of its own, never in the answer.
func (s *session) reporter() func(agent.Event) {
	var st stream
	var plan []sdk.PlanEntry
	// ran is an edit's end held for its diff, which the agent reports
	// after it: a client shows the call as done (or failed, when the user
	// rejected it) with the diff it has then, and shows an update after
	// that as a step of its own.
	var ran *agent.Event
	flush := func() {
		if ran != nil {
			s.toolRan(*ran)
			ran = nil
		}
	}
	return func(e agent.Event) {
		if ran != nil && (e.Kind != agent.ProposalReady || e.CallID != ran.CallID) {
			flush()
		}
		switch e.Kind {
		case agent.RoundStarted:
			st = stream{}
		case agent.TasksChanged:
			if p := planOf(e.Tasks); p != nil && !slices.EqualFunc(p, plan, sameEntry) {
				plan = p
				s.update(sdk.UpdatePlan(p...))
			}
		case agent.Streamed:
			text := st.answer.next(e.Text)
			if st.answer.diverged {
				st.answer.diverged = false
				s.status("the engine's reply was cut short, and its new one differs: the answer starts again below")
			}
			if text != "" {
				s.update(sdk.UpdateAgentMessageText(text))
			}
		case agent.Reasoned:
			if text := st.thought.next(e.Text); text != "" {
				s.update(sdk.UpdateAgentThoughtText(text))
			}
		case agent.ToolStarted:
			s.toolStarted(e)
		case agent.ToolRan:
			if e.Proposal == nil && (e.Tool == "edit" || e.Tool == "write") {
				ran = &e
				break
			}
			s.toolRan(e)
		case agent.Delegated:
			s.delegated(e)
		case agent.ProposalReady:
			s.proposed(e)
			flush()
		case agent.ChipChanged:
			s.chip(e.Chip)
		case agent.Shed, agent.Folded:
			s.compacted(e)
		case agent.Warning:
			if e.Retry {
				st.answer.again()
				st.thought.again()
			}
			s.status(e.Text)
		case agent.Debug, agent.NoteWritten, agent.Activity, agent.Waiting:
			fmt.Fprintf(s.srv.opts.Log, "reika acp: %s\n", e)
		}
	}
}

// stream is what a round's request streamed: a request sent again streams
// again from its start, and what the client has already is not sent twice.
type stream struct{ answer, thought shown }

// shown is the text of one kind the client has of the round's request.
type shown struct {
	text strings.Builder
	// before is the text shown before the request was sent again, at how
	// much of it the new reply is; diverged is set when the new reply
	// turned out to differ.
	before   string
	at       int
	diverged bool
}

// again marks the request sent again.
func (sh *shown) again() {
	if sh.before == "" { // else the client still has only the text before
		sh.before = sh.text.String()
	}
	sh.at = 0
	sh.text.Reset()
}

// next takes a piece the engine streamed and returns what the client
// does not have yet.
func (sh *shown) next(piece string) string {
	sh.text.WriteString(piece)
	if sh.before == "" {
		return piece
	}
	rest := sh.before[sh.at:]
	switch {
	case strings.HasPrefix(rest, piece):
		sh.at += len(piece)
		if sh.at == len(sh.before) {
			sh.before = ""
		}
		return ""
	case strings.HasPrefix(piece, rest):
		sh.before = ""
		return piece[len(rest):]
	}
	sh.before, sh.diverged = "", true
	return sh.text.String()
}

func (s *session) update(u sdk.SessionUpdate) { s.srv.update(s.id, u) }

// chip sends the ctx chip's figures as the protocol's usage: the tokens
// of the last request in the window.
func (s *session) chip(c agent.Chip) {
	if c.Window <= 0 {
		return
	}
	s.mu.Lock()
	same := s.usage == [2]int{c.Size, c.Window}
	s.usage = [2]int{c.Size, c.Window}
	s.mu.Unlock()
	if same {
		return // the client has it: no update says nothing new
	}
	s.update(sdk.SessionUpdate{UsageUpdate: &sdk.SessionUsageUpdate{Used: c.Size, Size: c.Window}})
}

// status sends one line the user should see beside the answer: a
// finished tool call of kind other, titled with the line.
func (s *session) status(line string) {
	s.mu.Lock()
	s.serial++
	id := sdk.ToolCallId(fmt.Sprintf("reika-%d", s.serial))
	s.mu.Unlock()
	s.update(sdk.StartToolCall(id, oneLine(line), sdk.WithStartKind(sdk.ToolKindOther), sdk.WithStartStatus(sdk.ToolCallStatusCompleted)))
}

// toolKinds are the protocol's kinds of the built-in tools.
var toolKinds = map[string]sdk.ToolKind{
	"read": sdk.ToolKindRead, "edit": sdk.ToolKindEdit, "write": sdk.ToolKindEdit,
	"glob": sdk.ToolKindSearch, "grep": sdk.ToolKindSearch, "bash": sdk.ToolKindExecute, "fetch_url": sdk.ToolKindFetch,
	"subagent": sdk.ToolKindThink,
}

// shownOutput are the tools whose result a tool call shows, up to
// outputShown bytes.
var shownOutput = map[string]bool{"bash": true, "grep": true, "glob": true, "fetch_url": true, "subagent": true}

const outputShown = 4000

// toolArgs are the arguments of a call the title and place are made of.
type toolArgs struct {
	Path    string `json:"path"`
	Pattern string `json:"pattern"`
	Command string `json:"command"`
	URL     string `json:"url"`
}

// toolTitle is a call's one line: what it does to what.
func toolTitle(name string, a toolArgs) string {
	switch name {
	case "read":
		return "Read " + a.Path
	case "edit":
		return "Edit " + a.Path
	case "write":
		return "Write " + a.Path
	case "glob":
		return "Find " + a.Pattern
	case "grep":
		if a.Path != "" {
			return fmt.Sprintf("Search %s in %s", a.Pattern, a.Path)
		}
		return "Search " + a.Pattern
	case "bash":
		return "Run " + oneLine(a.Command)
	case "fetch_url":
		return "Fetch " + a.URL
	}
	return name
}

func (s *session) toolStarted(e agent.Event) {
	var a toolArgs
	var raw any
	if json.Unmarshal([]byte(e.Args), &raw) == nil {
		json.Unmarshal([]byte(e.Args), &a)
	} else {
		raw = map[string]any{"arguments": e.Args} // not JSON: the model's text as it came
	}
	kind, ok := toolKinds[e.Tool]
	if !ok {
		kind = sdk.ToolKindOther
	}
	s.mu.Lock()
	s.serial++
	id := fmt.Sprintf("call-%d", s.serial)
	s.calls[e.CallID] = id
	s.running = id
	s.mu.Unlock()
	opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(kind), sdk.WithStartStatus(sdk.ToolCallStatusInProgress), sdk.WithStartRawInput(raw)}
	if a.Path != "" && e.Tool != "glob" {
		opts = append(opts, sdk.WithStartLocations([]sdk.ToolCallLocation{{Path: s.absolute(a.Path)}}))
	}
	s.update(sdk.StartToolCall(sdk.ToolCallId(id), oneLine(toolTitle(e.Tool, a)), opts...))
}

func (s *session) callID(model string) sdk.ToolCallId {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = ""
	return sdk.ToolCallId(s.calls[model])
}

// delegated shows a subagent's step in its tool call, the newest
// subagentSteps of them.
func (s *session) delegated(e agent.Event) {
	s.mu.Lock()
	id := s.calls[e.CallID]
	if id == "" {
		s.mu.Unlock()
		return
	}
	if s.steps == nil {
		s.steps = map[string][]string{}
	}
	steps := append(s.steps[id], oneLine(e.Text))
	if len(steps) > subagentSteps {
		steps = steps[len(steps)-subagentSteps:]
	}
	s.steps[id] = steps
	s.mu.Unlock()
	s.update(sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(strings.Join(steps, "\n")))})))
}

// subagentSteps is how many of a subagent's steps its tool call shows.
const subagentSteps = 8

func (s *session) toolRan(e agent.Event) {
	id := s.callID(e.CallID)
	if id == "" {
		return
	}
	status := sdk.ToolCallStatusCompleted
	opts := []sdk.ToolCallUpdateOpt{}
	switch {
	case e.ToolFailed:
		status = sdk.ToolCallStatusFailed
		opts = append(opts, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(e.Detail))}))
	case shownOutput[e.Tool] && strings.TrimSpace(e.Text) != "":
		// What a command printed, what a search found: the file a read
		// read is the editor's already, an edit's is its diff.
		opts = append(opts, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("```\n" + clip(strings.TrimRight(e.Text, "\n"), outputShown) + "\n```"))}))
	}
	opts = append(opts, sdk.WithUpdateStatus(status))
	s.update(sdk.UpdateToolCall(id, opts...))
}

// proposed adds a change's diff to its tool call, and says when it did
// not land.
func (s *session) proposed(e agent.Event) {
	id := s.callID(e.CallID)
	p := e.Proposal
	if id == "" || p == nil {
		return
	}
	var diff sdk.ToolCallContent
	if p.Create {
		diff = sdk.ToolDiffContent(p.Abs, p.New)
	} else {
		diff = sdk.ToolDiffContent(p.Abs, p.New, p.Old)
	}
	content := []sdk.ToolCallContent{diff}
	if !e.Applied {
		content = append(content, sdk.ToolContent(sdk.TextBlock("not applied")))
	}
	s.update(sdk.UpdateToolCall(id, sdk.WithUpdateContent(content), sdk.WithUpdateLocations([]sdk.ToolCallLocation{{Path: p.Abs}})))
}

// replayHistory sends a resumed session's conversation as updates: the
// user's messages, the replies, each tool call with its result's opening.
func (s *session) replayHistory() {
	a := s.agentSession()
	if a == nil {
		return
	}
	ids := map[string]sdk.ToolCallId{}
	for _, m := range a.Messages() {
		switch m.Role {
		case "user":
			if !m.Continuation {
				s.update(sdk.UpdateUserMessageText(m.Content))
			}
		case "assistant":
			if m.Reasoning != "" {
				s.update(sdk.UpdateAgentThoughtText(m.Reasoning))
			}
			if m.Content != "" {
				s.update(sdk.UpdateAgentMessageText(m.Content))
			}
			for _, c := range m.ToolCalls {
				var args toolArgs
				json.Unmarshal([]byte(c.Arguments), &args)
				kind, ok := toolKinds[c.Name]
				if !ok {
					kind = sdk.ToolKindOther
				}
				s.mu.Lock()
				s.serial++
				id := sdk.ToolCallId(fmt.Sprintf("call-%d", s.serial))
				s.mu.Unlock()
				ids[c.ID] = id
				s.update(sdk.StartToolCall(id, oneLine(toolTitle(c.Name, args)), sdk.WithStartKind(kind), sdk.WithStartStatus(sdk.ToolCallStatusCompleted)))
			}
		case "tool":
			if id, ok := ids[m.ToolCallID]; ok {
				delete(ids, m.ToolCallID)
				s.update(sdk.UpdateToolCall(id, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(clip(m.Content, 2000)))})))
			}
		}
	}
	s.chip(a.Chip())
}

// clip is s cut to about n bytes at a line's end.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	if i := strings.LastIndexByte(cut, '\n'); i > n/2 {
		cut = cut[:i+1]
	}
	return cut + "…"
}

// absolute is a workspace path made absolute.
func (s *session) absolute(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(s.root, filepath.FromSlash(p))
}

// relative is abs in the workspace's terms, and whether it is inside.
func (s *session) relative(abs string) (string, bool) {
	rel, err := filepath.Rel(s.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return abs, false
	}
	return filepath.ToSlash(rel), true
}

// planOf is the run's task list as the protocol's plan entries: a step
// Reika saw done completed; one the model says is done and Reika did not
// see pending, its content saying so (claimedSuffix); the first other
// step in progress. The agent keeps the list (agent/tasks.go): a reply
// with none gives no plan (nil).
func planOf(tasks []agent.Task) []sdk.PlanEntry {
	var out []sdk.PlanEntry
	current := false
	for _, t := range tasks {
		e := sdk.PlanEntry{Content: t.Text, Priority: sdk.PlanEntryPriorityMedium, Status: sdk.PlanEntryStatusPending}
		switch t.Status {
		case agent.TaskDone:
			e.Status = sdk.PlanEntryStatusCompleted
		case agent.TaskClaimed:
			e.Content += claimedSuffix
		default:
			if !current {
				e.Status, current = sdk.PlanEntryStatusInProgress, true
			}
		}
		out = append(out, e)
	}
	return out
}

// claimedSuffix ends a step the model says is done and Reika did not see
// done: the protocol's statuses have no word for it.
const claimedSuffix = " (claimed, not seen)"

func sameEntry(a, b sdk.PlanEntry) bool {
	return a.Content == b.Content && a.Status == b.Status && a.Priority == b.Priority
}
