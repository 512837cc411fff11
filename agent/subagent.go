package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

// Subagents. The subagent tool hands a task to a run of the same loop
// with a context of its own: the same fixed prefix (so the engine's cache
// of it serves both), its own planner, read-only tools unless the parent
// asks for edits (the plan mode's tools), at most subagentRounds rounds and subagentDecoded
// generated tokens, then a round with tools off that asks for the report.
// The report is the call's result (a contextwin.Report: kept whole while
// it fits, shed to its opening, its "key: value" facts taken into the
// ledger at a fold). Its requests go to a slot of their own where the
// engine has several; where it has one, the parent's cache is gone when
// the report comes back, and the parent's planner is told (SlotTaken).

// SubagentTool is the name of the tool that delegates.
const SubagentTool = "subagent"

// Bounds of the subagents.
const (
	// maxSubagents is how many a run may start.
	maxSubagents = 3
	// subagentRounds bounds a subagent's rounds before its report round.
	subagentRounds = 30
	// subagentDecoded bounds the tokens it generates before it.
	subagentDecoded = 12000
)

// subagentDefinition is the tool's definition, among the fixed prefix's.
func subagentDefinition() engine.Tool {
	return engine.Tool{
		Name: SubagentTool,
		Description: "Hand a self-contained task (an exploration of many reads and searches) to a helper with a fresh context; " +
			"only its report comes back, so what it reads does not fill yours. Read-only unless edits is true. At most 3 a task.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"task":{"type":"string","description":"what to find out or do, with the paths you know"},` +
			`"report":{"type":"string","description":"what to return; facts as key: value lines"},` +
			`"edits":{"type":"boolean"}},` +
			`"required":["task","report"]}`),
	}
}

// subagentArgs are a call's arguments.
type subagentArgs struct {
	Task   string `json:"task"`
	Report string `json:"report"`
	Edits  bool   `json:"edits"`
}

// ReportQuestion asks a subagent for its report when its rounds or tokens
// are spent.
const ReportQuestion = "Stop here: no more tool calls. Write your report now, from what you found so far, as asked: "

// subagentInstruction is what the subagent is told.
func subagentInstruction(a subagentArgs) string {
	var b strings.Builder
	b.WriteString("You are a subagent: another agent handed you this task and reads only your final answer, your report.\n\n")
	b.WriteString("Task: " + strings.TrimSpace(a.Task) + "\n\n")
	b.WriteString("Report: " + strings.TrimSpace(a.Report) + "\n\n")
	if a.Edits {
		b.WriteString("You may edit files. ")
	} else {
		b.WriteString("Do not edit files: you are read-only. ")
	}
	fmt.Fprintf(&b, "You have at most %d tool rounds. State facts as \"key: value\" lines, name files with their line numbers, and end with the report itself.", subagentRounds)
	return b.String()
}

// subagent runs one subagent call to its report.
func (r *run) subagent(ctx context.Context, call engine.ToolCall) tools.Result {
	s := r.s
	var a subagentArgs
	if err := json.Unmarshal([]byte(call.Arguments), &a); err != nil || strings.TrimSpace(a.Task) == "" || strings.TrimSpace(a.Report) == "" {
		return tools.Result{Error: true, Content: `error: subagent needs {"task": "…", "report": "…"} (edits optional, a boolean)`}
	}
	if r.sub {
		return tools.Result{Error: true, Content: "error: a subagent cannot start another; do the task yourself"}
	}
	if r.subagents >= maxSubagents {
		return tools.Result{Error: true, Content: fmt.Sprintf("error: this task has had its %d subagents; go on yourself", maxSubagents)}
	}
	r.subagents++
	n := r.subagents
	child, shared := s.child(ctx, a.Edits)
	defer child.Close()
	cr := &run{s: child, sub: true, maxDecoded: subagentDecoded, report: func(e Event) {
		if text := subagentStep(e); text != "" {
			r.report(Event{Kind: Delegated, Round: r.rounds, CallID: call.ID, Tool: SubagentTool, Text: fmt.Sprintf("subagent %d: %s", n, text)})
		}
	}}
	cctx := ctx
	if !a.Edits {
		cctx = readOnly(ctx)
	}
	res := cr.loop(cctx, subagentInstruction(a))
	report, end := res.Answer, res.End
	if end == StepLimit && ctx.Err() == nil {
		report, end = cr.reportRound(cctx, a)
	}
	if shared {
		r.sharedSlot()
	}
	st := child.Stats()
	s.mu.Lock()
	s.stats.Subagents++
	s.stats.SubagentPrefilled += st.Prefilled
	s.stats.SubagentDecoded += st.Decoded
	s.mu.Unlock()
	r.proposals = append(r.proposals, cr.proposals...)
	if strings.TrimSpace(report) == "" {
		why := end.String()
		if res.Err != nil {
			why = res.Err.Error()
		}
		return tools.Result{Error: true, Content: fmt.Sprintf("error: the subagent gave no report (%s after %d rounds)", why, cr.rounds)}
	}
	return tools.Result{Content: strings.TrimSpace(report), Payload: contextwin.Payload{Kind: contextwin.Report, Path: oneLineOf(a.Task, 80)}}
}

// sharedSlot follows a subagent that used the session's slot. llama.cpp
// keeps a prompt its slot drops in host memory (--cache-ram, on by
// default in recent builds) and takes it back when the session returns;
// an engine started without it, or older, has lost the session's cache.
// The session's next request shows which (watchSlot); once it showed a
// loss, the planner is told after every later subagent (SlotTaken), which
// folds a request past half the usable room while its prefill is paid
// anyway.
func (r *run) sharedSlot() {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.slotLoses {
		s.watchSlot = s.stats.LastPrompt
		return
	}
	if s.cw.SlotTaken() {
		r.report(Event{Kind: Activity, Round: r.rounds, Text: "the subagent used this session's engine slot, which keeps no copy of the session's prompt: the next request folds, while its prefill is paid anyway"})
	}
}

// sawSlot takes the figures of the session's first request after a
// subagent that shared its slot: cached, the tokens the engine reused, is
// well short of the session's previous prompt when the engine lost it.
// The caller holds mu.
func (s *Session) sawSlot(cached int, known bool) {
	if s.watchSlot == 0 || !known {
		return
	}
	if cached < s.watchSlot*9/10 {
		s.slotLoses = true
	}
	s.watchSlot = 0
}

// reportRound asks a subagent whose rounds or tokens are spent for its
// report, with tools off.
func (r *run) reportRound(ctx context.Context, a subagentArgs) (string, End) {
	s := r.s
	s.record(contextwin.Message{Role: contextwin.User, Content: ReportQuestion + strings.TrimSpace(a.Report)}, "")
	p, ok := r.planRound(ctx)
	if !ok {
		return "", TooSmall
	}
	req := s.Prefix().Request(p.Messages, p.MaxTokens, "none")
	req.Temperature = s.cfg.Temperature
	resp, err := r.chat(ctx, "report", req, p, nil)
	if err != nil || resp == nil {
		return "", EngineFailed
	}
	return resp.Content, Answered
}

// subagentStep is the one line a parent's progress shows of a
// subagent's event, "" for what it does not show.
func subagentStep(e Event) string {
	switch e.Kind {
	case ToolStarted:
		return e.Tool + " " + oneLineOf(toolSubject(engine.ToolCall{Name: e.Tool, Arguments: e.Args}), 60)
	case Folded, Shed:
		return e.String()
	case Failed:
		return "failed: " + oneLineOf(fmt.Sprint(e.Err), 80)
	}
	return ""
}

// oneLineOf is the first line of s, cut to n bytes.
func oneLineOf(s string, n int) string {
	return clipWithEllipsis(firstLine(strings.TrimSpace(s)), n)
}

// child is a session for a subagent: the parent's engine, tools, window
// and fixed prefix, a planner of its own, no transcript. Its requests go
// to a slot of their own where the engine has several (shared reports
// false); else to the parent's, whose cache they then evict.
func (s *Session) child(ctx context.Context, edits bool) (c *Session, shared bool) {
	cfg := s.cfg
	cfg.TranscriptDir, cfg.Resume = "", ""
	cfg.MaxSteps = subagentRounds
	if !edits {
		cfg.Tools = readOnlyTools{cfg.Tools}
	}
	c = &Session{cfg: cfg, retryWait: s.retryWait, sleep: s.sleep, tools: s.tools}
	c.parentKey = s.sessionKey()
	s.mu.Lock()
	s.children++
	c.key = fmt.Sprintf("%s/sub-%d", c.parentKey, s.children)
	c.model, c.disc = s.model, s.disc
	s.mu.Unlock()
	c.cw = contextwin.NewPlanner(cfg.Context)
	if d := c.disc; d != nil {
		// The model the parent switched to, in its window.
		c.cw.SetModel(d.Window, d.OutputLimit, d.Cache)
	}
	prefix := s.Prefix()
	c.prefix = prefix
	c.cw.SetPrefixChars(prefix.Chars)
	c.slot, shared = s.childSlot(ctx)
	return c, shared
}

// readOnlyTools refuses a read-only subagent the tools that change files,
// whatever the toolbox does with the plan mode its context carries.
type readOnlyTools struct{ Toolbox }

func (t readOnlyTools) Run(ctx context.Context, call engine.ToolCall) tools.Result {
	switch call.Name {
	case tools.EditTool, tools.WriteTool:
		return tools.Result{Error: true, Content: "error: you are a read-only subagent: state the change in your report instead"}
	}
	return t.Toolbox.Run(ctx, call)
}

// subagents reports whether the session offers the subagent tool.
func (s *Session) subagents() bool { return !s.cfg.NoSubagents }

// readOnly is the context a read-only subagent's tools run in: a run of
// its own in the plan mode (read, glob, grep, the read-only commands;
// nothing asks, edits are refused).
func readOnly(ctx context.Context) context.Context { return tools.WithChildRun(ctx, tools.Plan) }

// childSlot is the engine slot a subagent's requests go to: another than
// the parent's where llama.cpp has several and lists them; else the
// parent's, and shared reports whether that evicts the parent's cache (a
// llama.cpp slot; vLLM and SGLang keep every sequence's prefix blocks).
func (s *Session) childSlot(ctx context.Context) (st slotState, shared bool) {
	s.mu.Lock()
	parent := slotState{id: s.slot.id, pin: s.slot.pin, why: s.slot.why, key: s.slot.key, opts: s.slot.opts}
	s.mu.Unlock()
	if !parent.pin {
		return parent, parent.id >= 0
	}
	slots, err := engine.Slots(ctx, parent.opts)
	if err != nil {
		return parent, true
	}
	var others []engine.Slot
	for _, sl := range slots {
		if sl.ID != parent.id {
			others = append(others, sl)
		}
	}
	id, why := engine.ChooseSlot(others, parent.key+"/subagent", -1, "")
	if id < 0 {
		return parent, true
	}
	return slotState{id: id, pin: true, why: why, opts: parent.opts}, false
}
