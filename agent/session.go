package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/agent/transcript"
	"github.com/reika-lsp/reika/contextwin"
)

// Engine is what the agent needs of the engine client.
type Engine interface {
	Chat(ctx context.Context, req engine.Request, onDelta func(engine.Delta)) (*engine.Response, error)
}

// Toolbox is what the agent needs of its tools.
type Toolbox interface {
	// Definitions are sent with every request, in a fixed order with
	// fixed bytes.
	Definitions() []engine.Tool
	// Run runs one call; a failure is a result for the model.
	Run(ctx context.Context, call engine.ToolCall) tools.Result
}

// sessionConfig is what a Session is built from; Start derives it from a
// Setup, the same way for every front end.
type sessionConfig struct {
	Engine Engine
	Tools  Toolbox

	// Context configures the planner: the window and the figures that
	// divide it, as discovery and the settings give them (contextwin.Config
	// documents each); its Minimal also leaves the project instructions out
	// of the bootstrap. The session sets its MapUpdate.
	Context contextwin.Config

	// Workspace is the root whose AGENTS.md joins the bootstrap.
	Workspace string
	// RepoMap, when set, is rendered into the bootstrap in the budget's
	// RepoMapChars when the prefix is built — at the start of the session
	// and at a shrink event, never in between — and learns every file the
	// agent reads.
	RepoMap RepoMap
	// System replaces the built-in system prompt.
	System string
	// Checker, when set, tells the errors each applied edit introduced;
	// they join the edit's result (introduced.go).
	Checker EditChecker

	// MaxSteps bounds the rounds of one run; 0 means 200.
	MaxSteps int
	// Temperature, when set, is sent with every request.
	Temperature *float64

	// TranscriptDir is where the transcript goes; "" keeps none.
	TranscriptDir string
	// Resume is a transcript to continue.
	Resume string
	// Meta describes the session in its transcript.
	Meta transcript.Meta

	// Debug logs one prefix-cache line per request the engine processes
	// (REIKA_DEBUG): the rounds', the notes', the warm-up's and the
	// checkpoint requests'.
	Debug bool

	// NoSubagents leaves the subagent tool out (subagent.go).
	NoSubagents bool

	// ReasoningBack puts a reply's reasoning on its message in the
	// session, so that the requests carry it back (reasoning_content) from
	// the turn that made it on, as it was sent, until a shrink event drops
	// it (REIKA_REASONING_BACK). Off, reasoning is in the transcript only.
	ReasoningBack bool
}

// RepoMap is what the agent needs of the repo map.
type RepoMap interface {
	// Render is the map in at most budget characters.
	Render(budget int) string
	// Learn takes a file the agent read, whole, as the read tool found it.
	Learn(f tools.FileText)
}

// Session is one conversation with the engine. Runs take turns: one at a
// time. Its methods are safe for concurrent use.
type Session struct {
	cfg    sessionConfig
	tools  []engine.Tool // the definitions, in their fixed order and bytes
	prefix *Prefix       // built at the first request; guarded by mu
	tr     *transcript.Writer

	mu      sync.Mutex // guards cw, prev, stats, said
	cw      *contextwin.Planner
	prev    []byte // prompt bytes of the last request sent
	stats   Stats
	said    []string // the user's messages for the run under way, not yet in it
	ending  bool     // the run under way took its last messages: Say refuses
	running atomic.Bool
	figures figureNotes // what was told of counts not taken; guarded by mu
	debug   debugTrail  // REIKA_DEBUG's view of every request; guarded by mu
	// toldTextCalls: the user heard that the engine sends tool calls as
	// text; guarded by mu.
	toldTextCalls bool

	retryWait [retries]time.Duration
	// sleep waits before a retry (sleep in run.go); tests count the
	// waits instead of sitting through them.
	sleep func(ctx context.Context, d time.Duration) error

	// warm is the warm-up in flight, nil when none; guarded by mu.
	warm *warmup
	// resumed says how the transcript resumed: for the log; resumeNotes
	// what it skipped and the calls it found interrupted.
	resumed     string
	resumeNotes []Notice
	// replaying is set while a transcript is replayed into the planner;
	// replayMaps are the map updates it recorded, for the folds to come.
	replaying  bool
	replayMaps []string
	// replayPrefixes are the prefixes a fold put in front of its request
	// in the session replayed (prefixAtFold), for the folds to come.
	replayPrefixes []*Prefix
	// toolNews are what the user should hear of the tools a fold put in
	// force, not yet told; guarded by mu.
	toolNews []string

	// slot is the engine slot and the saving of its cache (slot.go).
	slot slotState
	// watchSlot is the session's last prompt, in tokens, when a subagent
	// shared its slot and its next request is to show whether the engine
	// kept that prompt; slotLoses is set once one showed it did not
	// (subagent.go). Guarded by mu.
	watchSlot int
	slotLoses bool
	// mode is the front end's mode for the session's runs, as it last
	// recorded it (SetMode); guarded by mu.
	mode string
	// model is the model the user switched to (SetModel), "" for the
	// client's own; disc is what the engine told of it at the switch, nil
	// before one (Info's discovery tells of the configured model).
	// Guarded by mu.
	model string
	disc  *engine.Discovery
	// key names the session to the engine's routers (engine.Request.Session):
	// its transcript's id, so that a resume and a restart keep it, else an
	// id of its own; parentKey is a subagent's parent's. Set once.
	key, parentKey string
	children       int // subagents started, for their keys; guarded by mu
	// router is set behind llama.cpp's router mode, whose model may sleep
	// between runs (modelAwake). Set once.
	router bool
	// resumedSlot is the slot the resumed session last recorded,
	// resumedSave its last save; resumeReq is the request it sent last,
	// rebuilt, which the warm-up sends again. Set by replay.
	resumedSlot, resumedSave *transcript.Slot
	resumeReq                *engine.Request

	info    *Info  // how Start built it; nil for a session a test built
	cleanup func() // removes what Start made for the session alone
}

// Stats are a session's running figures, from the engine's own reports.
type Stats struct {
	Requests int // everything sent: rounds, notes, retries, warm-up
	Rounds   int
	Events   int // shrink events (shed, fold, emergency)
	Folds    int
	Notes    int
	// Prefilled are prompt tokens the engine processed anew, Reused those
	// it took from its cache; PromptMS the time it spent on the former.
	Prefilled, Reused int
	PromptMS          float64
	Overflows         int
	Truncations       int
	// Outliers are prompt counts not believed, Uncounted the answers that
	// came without one (see contextwin.Figure).
	Outliers, Uncounted int
	LastPrompt          int
	// Decoded are the tokens the engine generated (completion tokens):
	// the model's turns, its notes, the warm-up's.
	Decoded int
	// Subagents ran; what their requests prefilled and generated, which
	// the figures above leave out.
	Subagents                          int
	SubagentPrefilled, SubagentDecoded int
}

// newSession starts a session, or resumes the one cfg.Resume names. Start
// is the way in for front ends; tests call it with the parts they fake.
func newSession(cfg sessionConfig) (*Session, error) {
	if cfg.Engine == nil || cfg.Tools == nil {
		return nil, errors.New("agent: a session needs an engine and tools")
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 200
	}
	s := &Session{cfg: cfg, retryWait: defaultRetryWait, sleep: sleep, slot: slotState{id: -1}, key: transcript.NewID(time.Now())}
	s.tools = cfg.Tools.Definitions()
	if !cfg.NoSubagents {
		s.tools = beforeMCP(s.tools, subagentDefinition())
	}
	// The prefix is built at the first request (Prefix), so that the repo
	// map it carries sees the documents opened meanwhile.
	planner := cfg.Context
	planner.MapUpdate = s.mapUpdate
	planner.PrefixAtFold = s.prefixAtFold
	s.cw = contextwin.NewPlanner(planner)
	switch {
	case cfg.Resume != "":
		w, recs, err := transcript.Open(cfg.Resume)
		if err != nil {
			return nil, err
		}
		s.tr = w
		s.resumed = s.replay(recs)
		if text, warning := skippedLine(cfg.Resume, w.Skipped()); text != "" {
			s.resumeNotes = append(s.resumeNotes, Notice{Warning: warning, Text: text})
		}
		if text := s.closeInterrupted(unfinishedCalls(recs)); text != "" {
			s.resumeNotes = append(s.resumeNotes, Notice{Warning: true, Text: text})
		}
	case cfg.TranscriptDir != "":
		meta := cfg.Meta
		meta.Workspace, meta.Window = cfg.Workspace, cfg.Context.Window
		// A transcript that cannot be written never stops the session:
		// the writer says so and tries again at every record.
		s.tr = transcript.Begin(cfg.TranscriptDir, meta)
	}
	return s, nil
}

// Close ends the session, after the save of its engine slot under way,
// if any; its transcript is kept.
func (s *Session) Close() error {
	s.awaitSave(context.Background())
	if s.cleanup != nil {
		s.cleanup()
	}
	if s.tr != nil {
		return s.tr.Close()
	}
	return nil
}

// TranscriptPath is where the transcript is written; "" when none.
func (s *Session) TranscriptPath() string {
	if s.tr == nil {
		return ""
	}
	return s.tr.Path()
}

// Stats returns the session's figures so far.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Chip is the status line's view of the context.
func (s *Session) Chip() contextwin.Chip {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cw.Chip()
}

// Breakdown is the last request by part — the fixed prefix, the repo map,
// the recap, the conversation, the tool results — with the reserve and
// the free room, in tokens.
func (s *Session) Breakdown() Breakdown {
	s.mu.Lock()
	defer s.mu.Unlock()
	repoMap := 0
	if s.prefix != nil {
		repoMap = len(s.prefix.Map)
	}
	return s.cw.Breakdown(repoMap)
}

// Budget is the current division of the window.
func (s *Session) Budget() contextwin.Budget {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cw.Budget()
}

// Recap is the current recap, nil before the first fold.
func (s *Session) Recap() *contextwin.Recap {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cw.Recap()
}

// Say gives the run under way a message from the user: it joins the
// conversation before the run's next request, and a run whose model
// answered goes on with it instead of ending. Said between runs, it joins
// the next run after its instruction. Say reports false, keeping nothing,
// when the run under way is ending: it has taken its last messages, and
// the caller must start a new run for this one.
func (s *Session) Say(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ending {
		return false
	}
	s.said = append(s.said, text)
	return true
}

// endUnlessSaid ends the run unless the user said something meanwhile: it
// reports whether the run ends, after which Say refuses until the run has
// returned.
func (s *Session) endUnlessSaid() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.said) > 0 {
		return false
	}
	s.ending = true
	return true
}

// takeSaid returns the messages Say queued, and forgets them.
func (s *Session) takeSaid() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.said
	s.said = nil
	return out
}

// SetMode records the front end's mode for the session's runs ("ask",
// "plan"; "" the normal one) in the transcript, so that a resume of the
// session finds it (Mode).
func (s *Session) SetMode(mode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == mode {
		return
	}
	s.mode = mode
	s.note(transcript.KindMode, mode)
}

// Mode is the mode the front end last recorded for the session, the
// resumed transcript's included.
func (s *Session) Mode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// Running reports whether a run is under way.
func (s *Session) Running() bool { return s.running.Load() }

// projectInstructionsMax bounds the AGENTS.md the bootstrap carries.
const projectInstructionsMax = 16 << 10

// systemPrompt is the built-in prompt, then the bootstrap: the project's
// instructions and the repo map (returned too), unless in minimal mode.
func (s *Session) systemPrompt() (system, repoMap string) {
	var b strings.Builder
	if s.cfg.System != "" {
		b.WriteString(s.cfg.System)
	} else {
		b.WriteString(defaultSystem)
	}
	if s.cfg.Context.Minimal {
		return b.String(), ""
	}
	if s.cfg.Workspace != "" {
		if data, err := os.ReadFile(filepath.Join(s.cfg.Workspace, "AGENTS.md")); err == nil && len(data) > 0 {
			text := string(data)
			if len(text) > projectInstructionsMax {
				text = text[:projectInstructionsMax] + "\n[… the rest of AGENTS.md was left out]"
			}
			fmt.Fprintf(&b, "\n\n# Project instructions (AGENTS.md)\n\n%s", strings.TrimSpace(text))
		}
	}
	if s.cfg.RepoMap != nil {
		if n := s.Budget().RepoMapChars; n > 0 {
			if repoMap = s.cfg.RepoMap.Render(n); repoMap != "" {
				fmt.Fprintf(&b, "\n\n# Repository map\n\n%s", repoMap)
			}
		}
	}
	return b.String(), repoMap
}

// defaultSystem is the built-in system prompt.
const defaultSystem = `You are Reika, a coding agent working inside the user's editor on their workspace.

Work in small, verifiable steps with the tools you are given. Read code before you change it. Edits and new files are proposed to the user, who sees them in the editor; say briefly what each change does. Prefer precise searches and line ranges to whole files when you only need a part.

The conversation is kept inside a limited context window. Older tool results may be replaced by short summaries and older turns by a recap; a notice says so when it happens. Nothing is lost: read a file or run a search again when you need the full text.

When the task is done, answer with a short account of what you changed and why, without calling tools.`

// fromTranscript turns a transcript message back into a session message.
func fromTranscript(m transcript.Message) contextwin.Message {
	c := contextwin.Message{Role: contextwin.Role(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, Payload: m.Payload, Continuation: m.Continuation, Images: m.Images}
	if m.ReasoningSent {
		c.Reasoning = m.Reasoning
	}
	for _, tc := range m.ToolCalls {
		c.ToolCalls = append(c.ToolCalls, contextwin.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	return c
}

// record appends a message to the session and to the transcript, with
// the reply's reasoning: the transcript keeps it whether or not m carries
// it (is sending it back), and says which.
func (s *Session) record(m contextwin.Message, reasoning string) {
	tm := transcript.Message{Role: string(m.Role), Content: m.Content, Reasoning: reasoning, ReasoningSent: m.Reasoning != "",
		ToolCallID: m.ToolCallID, Payload: m.Payload, Continuation: m.Continuation, Images: m.Images}
	for _, c := range m.ToolCalls {
		tm.ToolCalls = append(tm.ToolCalls, transcript.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cw.Append(m)
	s.drove(transcript.Record{Kind: transcript.KindMessage, Message: &tm})
}

// drove records a call made on the planner, in the order it was made: the
// caller holds mu, so that the transcript's order is the planner's.
func (s *Session) drove(r transcript.Record) {
	if s.tr != nil {
		s.tr.Append(r)
	}
}

// plan asks the planner for the next request and records that it did.
// The caller holds mu.
func (s *Session) plan() contextwin.Plan {
	p := s.cw.Plan()
	s.drove(transcript.Record{Kind: transcript.KindPlan, Plan: &transcript.Plan{Event: p.Event}})
	return p
}

// setPrefix installs a fixed prefix and records it. The caller holds mu.
func (s *Session) setPrefix(p *Prefix) {
	s.prefix = p
	s.cw.SetPrefixChars(p.Chars)
	if s.tr != nil {
		tools, err := json.Marshal(p.Tools)
		if err == nil {
			s.drove(transcript.Record{Kind: transcript.KindPrefix, Prefix: &transcript.Prefix{System: p.System, Tools: tools, Chars: p.Chars, Map: p.Map}})
		}
	}
}

// note records a transcript line of another kind.
func (s *Session) note(kind transcript.Kind, text string) {
	if s.tr != nil {
		s.tr.Append(transcript.Record{Kind: kind, Text: text})
	}
}

// sync makes the transcript durable: after the instruction, after a
// reply (before the calls it makes run) and after each call's result.
func (s *Session) sync() {
	if s.tr != nil {
		s.tr.Sync()
	}
}

// transcriptNotices is what the user should hear of the transcript since
// the last call: that it cannot be written, that it is again.
func (s *Session) transcriptNotices() []string {
	if s.tr == nil {
		return nil
	}
	return s.tr.Notices()
}

// Prefix is the session's fixed prefix, built the first time it is asked
// for and then kept until a shrink event.
func (s *Session) Prefix() *Prefix {
	s.mu.Lock()
	p := s.prefix
	s.mu.Unlock()
	if p != nil {
		return p
	}
	system, repoMap := s.systemPrompt()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prefix == nil {
		p := NewPrefix(system, s.tools)
		p.Map = repoMap
		s.setPrefix(p)
	}
	return s.prefix
}

// mapUpdate is what the repo map learnt since the prefix was built: the
// entries of files that are new or changed, for a fold to carry in the
// recap — after the request's change point, so the prefix stays cached.
// contextwin calls it while s.mu is held.
func (s *Session) mapUpdate() string {
	if s.replaying {
		// A resumed session gets what the session it continues got.
		if len(s.replayMaps) == 0 {
			return ""
		}
		m := s.replayMaps[0]
		s.replayMaps = s.replayMaps[1:]
		return m
	}
	m := ""
	if n := s.cw.Budget().RepoMapChars; s.cfg.RepoMap != nil && s.prefix != nil && !s.cfg.Context.Minimal && n > 0 {
		m = mapDelta(s.prefix.Map, s.cfg.RepoMap.Render(n), n/4)
	}
	s.drove(transcript.Record{Kind: transcript.KindMapUpdate, Text: m})
	return m
}

// mapDelta lists the file blocks of a rendered map (a line naming a file,
// then its indented symbols) that now has and old has not, in at most
// limit bytes.
func mapDelta(old, now string, limit int) string {
	seen := map[string]bool{}
	for _, blk := range mapBlocks(old) {
		seen[blk] = true
	}
	var b strings.Builder
	for _, blk := range mapBlocks(now) {
		if seen[blk] || b.Len()+len(blk) > limit {
			continue
		}
		b.WriteString(blk)
	}
	return strings.TrimRight(b.String(), "\n")
}

// mapBlocks splits a rendered map into its files' blocks.
func mapBlocks(m string) []string {
	var out []string
	start := 0
	for i := 0; i < len(m); {
		j := strings.IndexByte(m[i:], '\n')
		if j < 0 {
			j = len(m) - i - 1
		}
		next := i + j + 1
		if next < len(m) && m[next] != ' ' && m[next] != '\t' {
			out = append(out, m[start:next])
			start = next
		}
		i = next
	}
	if start < len(m) {
		out = append(out, m[start:])
	}
	return out
}

// Messages returns the whole conversation so far, shed and folded parts
// included, as the session holds it (reasoning aside).
func (s *Session) Messages() []contextwin.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cw.Messages()
}

// Compact folds the conversation now (reika.compact): the note round, then
// the fold, without waiting for the shed point. It returns the request's
// estimated size before and after, or why there was nothing to do (no
// known window, nothing to fold, a run under way).
func (s *Session) Compact(ctx context.Context, report func(Event)) (before, after int, err error) {
	if !s.running.CompareAndSwap(false, true) {
		return 0, 0, ErrBusy
	}
	defer s.running.Store(false)
	if report == nil {
		report = func(Event) {}
	}
	s.awaitWarmup(ctx)
	if err := s.awaitSave(ctx); err != nil {
		return 0, 0, err
	}
	s.confirmSlot(ctx)
	s.Prefix()
	s.mu.Lock()
	before = s.cw.Chip().Size
	err = s.cw.Compact()
	var p contextwin.Plan
	if err == nil {
		s.drove(transcript.Record{Kind: transcript.KindCompact})
		p = s.plan()
	}
	s.mu.Unlock()
	if err != nil {
		return before, before, err
	}
	r := &run{s: s, report: report}
	if p.Event == contextwin.Note {
		p = r.noteRound(ctx, p)
		if ctx.Err() != nil {
			return before, before, ctx.Err()
		}
	}
	r.reportShrink(p)
	s.sync()
	s.markSlot(ctx)
	return before, p.Estimate, nil
}

// EditRecap replaces the current recap with the user's edit; the next
// request carries it. It reports false when there is no recap yet.
func (s *Session) EditRecap(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := s.cw.EditRecap(text)
	if ok {
		s.drove(transcript.Record{Kind: transcript.KindRecapEdit, Text: text})
	}
	return ok
}
