package replay

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
	"github.com/reika-lsp/reika/repomap"
)

// replayOurs replays s through Reika itself: an agent session built by
// agent.Start, as the language server builds its own, with the repo map
// wired into the prefix the same way: a repomap.Map of the files the
// session reads whole, as if the editor had them open, rendered in the
// window's share when the prefix is built. The recording supplies
// what a real session gets from outside: the model's replies (scripted into
// the engine), the tools' results and the system prompt. The agent's
// requests go through the meter, so they are measured as the peers' are.
//
// A run that ends before the recording's last round (the agent stopped:
// the window too small, the engine failed) stalls the replay: the rest is
// not replayed, and the row says where.
//
// told, when not nil, sets what the agent's discovery would have read of
// the engine's model (the class a GGUF header gives): the simulator's
// /props names no model file.
func replayOurs(ctx context.Context, s *Recording, base string, m *meter, told func(*config.Settings)) (stalled int, err error) {
	e := &oursEngine{s: s, m: m}
	sess, done, err := oursSession(ctx, s, base, e, told)
	if err != nil {
		return 0, err
	}
	defer done()
	e.say = func(u string) { sess.Say(u) }
	for e.next < len(s.Rounds) {
		i := e.next
		user := s.Rounds[i].User
		if user == "" && i > 0 {
			return 0, fmt.Errorf("round %d: the reply before it called no tool, and no user message follows", i+1)
		}
		res, err := sess.Run(ctx, user, e.observe)
		if err != nil && res.End != agent.Answered {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			m.round = e.next + 1
			m.Problem(fmt.Sprintf("the agent stopped (%s): %v", res.End, err))
			return e.next + 1, nil
		}
		if e.next == i {
			return 0, fmt.Errorf("round %d: the run answered without sending the recorded turn", i+1)
		}
	}
	return 0, nil
}

// oursSession starts the agent session replayOurs drives, its engine e:
// the repo map is a repomap.Map of the files s reads whole, and the tools
// answer from the recording. done closes the session and the map.
func oursSession(ctx context.Context, s *Recording, base string, e *oursEngine, told func(*config.Settings)) (sess *agent.Session, done func(), err error) {
	repo := repomap.New()
	for _, r := range s.Rounds {
		for _, res := range r.Results {
			if f := wholeRead(res.Payload, res.Content); f != nil {
				repo.Update(f.Path, []byte(f.Text))
			}
		}
	}
	sess, err = agent.Start(ctx, agent.Setup{
		Getenv:     func(string) string { return "" },
		ConfigFile: agent.NoConfigFile,
		Override: func(st *config.Settings) {
			st.Endpoint = config.Value[string]{Value: base, Source: config.Source{Layer: config.Flag, Detail: "replay"}}
			if told != nil {
				told(st)
			}
		},
		StateDir: agent.NoTranscript,
		RepoMap:  agent.MapFiles(repo),
		Toolbox:  &oursTools{s: s, e: e},
		System:   s.System,
		Engine:   e,
		MaxSteps: len(s.Rounds) + 1,
		// A session recorded without the subagent tool is replayed
		// without it: the prefix is the one the peers get.
		NoSubagents: !s.HasSubagents(),
	})
	if err != nil {
		repo.Close()
		return nil, nil, err
	}
	return sess, func() { sess.Close(); repo.Close() }, nil
}

// oursPrefix is the fixed prefix ours' agent sends in window: the system
// prompt with the repo map it renders, and the tools. The peers get it
// too, so that every strategy carries the same prefix and its rows
// compare in absolute tokens, the prefix included. The agent's session
// is started and closed without a request; its discovery asks the
// engine at base for its window, which is what sizes the repo map.
func oursPrefix(ctx context.Context, s *Recording, base string, told func(*config.Settings)) (*agent.Prefix, error) {
	sess, done, err := oursSession(ctx, s, base, &oursEngine{s: s}, told)
	if err != nil {
		return nil, err
	}
	defer done()
	return sess.Prefix(), nil
}

// oursEngine is the agent's engine in a replay: each turn request is
// scripted with the recording's next reply and sent through the meter.
type oursEngine struct {
	s *Recording
	m *meter
	// next is the recorded round whose reply the next turn request gets;
	// begun is set once a request of it was sent.
	next  int
	begun bool
	// results are the tool results of the last round, as the agent holds
	// them (with the engine's call ids): the next round's new messages.
	results []contextwin.Message
	calls   int // tool calls answered in this round
	// say hands the user's message of a round that interrupts a run (the
	// recorded reply before it called tools) to the run.
	say func(string)
	// event is what the agent did to the request about to go (its
	// contextwin event's name), from the events it reports.
	event string
	// sub are the rounds of the subagent under way, subNext the one its
	// next turn request gets, subCalls its calls answered, subCall the
	// parent's call that runs it; sub is nil when none runs.
	sub      []Round
	subNext  int
	subCalls int
	subCall  string
}

// observe follows the agent's events: what the next request is.
func (e *oursEngine) observe(ev agent.Event) {
	switch {
	case ev.Kind == agent.RoundStarted && e.event == "":
		e.event = contextwin.Append.String()
	case ev.Kind == agent.Shed || ev.Kind == agent.Folded:
		switch {
		case ev.Emergency:
			e.event = contextwin.Emergency.String()
		case ev.Kind == agent.Folded:
			e.event = contextwin.Fold.String()
		case e.event != contextwin.Fold.String():
			e.event = contextwin.Shed.String()
		}
	}
}

func (e *oursEngine) Chat(ctx context.Context, req engine.Request, _ func(engine.Delta)) (*engine.Response, error) {
	if e.sub != nil {
		return e.subChat(ctx, req)
	}
	if e.next >= len(e.s.Rounds) {
		return nil, errors.New("replay: the agent asked for a turn past the recording's end")
	}
	if !e.begun {
		e.begun = true
		r := e.s.Rounds[e.next]
		fresh := e.results
		if r.User != "" {
			fresh = append(fresh, contextwin.Message{Role: contextwin.User, Content: r.User})
		}
		e.m.begin(e.next+1, scriptTurn(r.Assistant), fresh)
		e.results = nil
	}
	side := req.ToolChoice == "none"
	event := e.event
	switch {
	case side && req.MaxTokens == 1:
		event = "checkpoint" // the request after a fold that ends at a checkpoint
	case side:
		event = contextwin.Note.String()
	}
	resp, err := e.m.Chat(ctx, req, Call{Side: side, Event: event})
	if err == nil && !side {
		if r := e.s.Rounds[e.next]; len(r.Sub) > 0 && len(resp.ToolCalls) == 1 && resp.ToolCalls[0].Name == agent.SubagentTool {
			e.sub, e.subNext, e.subCalls, e.subCall = r.Sub, 0, 0, resp.ToolCalls[0].ID
		}
		e.next++
		e.begun, e.calls, e.event = false, 0, ""
		if e.next < len(e.s.Rounds) && len(resp.ToolCalls) > 0 {
			if u := e.s.Rounds[e.next].User; u != "" {
				e.say(u)
			}
		}
	}
	return resp, err
}

// subChat sends a request of the subagent under way: a turn request
// scripted with its next recorded round, or its note or checkpoint
// request, which the engine answers itself. After its last round, its
// report is the parent's new message.
func (e *oursEngine) subChat(ctx context.Context, req engine.Request) (*engine.Response, error) {
	last := ""
	if n := len(req.Messages); n > 0 {
		last = req.Messages[n-1].Content
	}
	turn := req.MaxTokens != 1 && (req.ToolChoice != "none" || strings.Contains(last, agent.ReportQuestion))
	event := "subagent"
	switch {
	case req.MaxTokens == 1:
		event = "checkpoint"
	case !turn:
		event = contextwin.Note.String()
	}
	if turn {
		if e.subNext >= len(e.sub) {
			return nil, errors.New("replay: the subagent asked for a turn past its recorded rounds")
		}
		e.m.srv.AppendScript(scriptTurn(e.sub[e.subNext].Assistant))
	}
	resp, err := e.m.Chat(ctx, req, Call{Side: true, Sub: true, Event: event})
	if err == nil && turn {
		e.subNext++
		e.subCalls = 0
		if e.subNext == len(e.sub) {
			e.results = append(e.results, contextwin.Message{Role: contextwin.Tool, ToolCallID: e.subCall,
				Content: strings.TrimSpace(resp.Content), Payload: contextwin.Payload{Kind: contextwin.Report}})
			e.sub = nil
		}
	}
	return resp, err
}

// oursTools answers the agent's tool calls with the recording's results
// for the round just sent, in call order.
type oursTools struct {
	s *Recording
	e *oursEngine
}

func (t *oursTools) Definitions() []engine.Tool { return t.s.Tools }

func (t *oursTools) Run(_ context.Context, call engine.ToolCall) tools.Result {
	r := t.s.Rounds[t.e.next-1]
	k := t.e.calls
	t.e.calls++
	child := t.e.sub != nil && t.e.subNext > 0
	if child {
		// A call of the subagent's, answered from its round.
		r, k = t.e.sub[t.e.subNext-1], t.e.subCalls
		t.e.subCalls++
		t.e.calls--
	}
	if k >= len(r.Results) {
		return tools.Result{Error: true, Content: "replay: the recording has no result for this call"}
	}
	rec := r.Results[k]
	p := rec.Payload
	// The agent's tools save a long command, search or page to a file the
	// model can page through, and say so in the payload: the whole output,
	// so the recording decides.
	if contextwin.ShouldSpill(p, len(rec.Content)) {
		p.Spill = "/tmp/reika/spill/" + call.ID + ".txt"
	}
	// The model sees the result as every strategy does (Cut); the repo map
	// learns the file from the recording, as the editor would show it.
	content := Cut(rec).Content
	res := tools.Result{Content: content, Payload: p, Read: wholeRead(p, rec.Content)}
	if !child {
		t.e.results = append(t.e.results, contextwin.Message{Role: contextwin.Tool, ToolCallID: call.ID, Content: content, Payload: p})
	}
	return res
}

// wholeRead is the file a recorded read shows whole, nil for anything else.
func wholeRead(p contextwin.Payload, content string) *tools.FileText {
	if p.Kind != contextwin.Read || p.From > 1 || p.To < p.Total || p.Total == 0 {
		return nil
	}
	text, ok := unnumber(content)
	if !ok {
		return nil
	}
	return &tools.FileText{Path: p.Path, Abs: p.Path, Text: text}
}

// unnumber turns a whole read's numbered lines ("     1\tpackage x") back
// into the file's text.
func unnumber(content string) (string, bool) {
	var b strings.Builder
	for line := range strings.Lines(content) {
		_, text, ok := strings.Cut(line, "\t")
		if !ok {
			return "", false
		}
		b.WriteString(text)
	}
	s := b.String()
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s, true
}
