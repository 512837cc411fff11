package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"runtime"
	"strings"
	"sync"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/contextwin"
)

// Reserve is the room every strategy holds back for the reply: contextwin's
// starting reserve, so that usable means the same for all.
const Reserve = contextwin.DefaultReserve

// Row is one strategy's figures for one session in one window.
type Row struct {
	Strategy string `json:"strategy"`
	Window   int    `json:"window"`
	Session  string `json:"session"`
	// Prefilled is Σ prompt_n: the prompt tokens the engine processed
	// anew, over every request it answered (side calls included).
	Prefilled int `json:"prefilled"`
	// Growth is the physical lower bound: what an infinite window would
	// have prefilled for the same content (see Request.Growth).
	Growth int `json:"growth"`
	// Ratio is Prefilled ÷ Growth.
	Ratio float64 `json:"ratio"`
	// Events are the turn requests whose messages do not extend the
	// previous turn request's: each one invalidates the engine's prefix
	// cache from where it differs. Side calls are not counted (their
	// cost is in Prefilled and Requests).
	Events int `json:"events"`
	// LiveMean is the mean prompt of the turn requests ÷ usable;
	// PeakRatio the largest prompt of any request ÷ the window.
	LiveMean  float64 `json:"live_mean"`
	PeakRatio float64 `json:"peak_ratio"`
	// Overflows are the engine's refusals of a request as too long.
	Overflows int `json:"overflows"`
	// SubPrefilled is the share of Prefilled the subagents' requests
	// prefilled (a session whose rounds ran subagents, ours only).
	SubPrefilled int `json:"sub_prefilled,omitempty"`
	// Stalled is the round at which the session stopped before the
	// recording's end (0: it went to the end). A stalled row is a failure,
	// whatever its other figures say.
	Stalled int `json:"stalled,omitempty"`
	// Skipped counts the turns a peer gave up (ErrSkipped): the engine
	// refused every request it could make for them. A row with a skipped
	// turn is a failure too: the recording went on without the turn's
	// request, so its figures leave out what the turn would have cost.
	Skipped int `json:"skipped,omitempty"`
	// FactsKept is the share of the planted facts whose value is visible
	// in the last request.
	FactsKept float64 `json:"facts_kept"`
	// Requests the engine answered, and the prefill time it reported for
	// them (Σ prompt_ms, in seconds).
	Requests       int     `json:"requests"`
	PrefillSeconds float64 `json:"prefill_s"`
	// Decoded is Σ completion_tokens: the tokens the engine generated
	// over every request it answered — the model's turns and the side
	// calls' notes and summaries.
	Decoded int `json:"decoded"`
	// EngineSeconds is the engine time of Prefilled and Decoded at the
	// speeds of the replay (Speeds.Seconds; Replay's are DefaultSpeeds,
	// Results' are Options.Speeds), in seconds.
	EngineSeconds float64 `json:"engine_s"`
	// Losses are what a user loses beyond the planted facts: re-reads,
	// the trail of changed files, the notes that survive.
	Losses
}

// Failed reports a row whose figures are no result: the session stalled
// before its last round, or a turn was given up.
func (r Row) Failed() bool { return r.Stalled > 0 || r.Skipped > 0 }

// Request is what one request of a replay was and cost.
type Request struct {
	Round int // 1-based round of the recording
	Side  bool
	Sub   bool   // a subagent's request (Call.Sub)
	Event string // the strategy's word for it (Call.Event)
	// Refused is set when the engine refused it as too long; the figures
	// below are then zero.
	Refused bool
	// Extends is set when its messages start with the previous turn
	// request's messages, byte for byte (and the tools are the same);
	// the first request extends nothing and counts as extending.
	Extends      bool
	PromptTokens int
	CacheN       int
	PromptN      int
	PromptMS     float64
	// Common is how many of the prompt's tokens the engine held before
	// the first that differs: where a dense engine restarts. CacheN below
	// it is what restarting from a checkpoint cost.
	Common int
	// Decoded are the tokens the engine generated for it (its usage's
	// completion_tokens).
	Decoded int
	// Growth is what this request carried that no earlier one had: for
	// the first, its whole prompt; after it, the conversation's new
	// messages (user messages and tool results; as the strategy sent
	// them when it cut them, as delivered by Cut otherwise), plus the
	// markers that close the model's previous reply and open the next
	// one. The model's
	// own replies are not growth: the engine generated them and holds
	// them in its cache. Side calls' questions are not growth either.
	Growth int
}

// Result is one replay: the row and every request.
type Result struct {
	Row      Row
	Requests []Request
	// Problems lists, by round, what the strategy would have told the
	// user (contextwin's TooSmall and GiveUp) and the turns it gave up.
	Problems []string
	// Last is the last turn request the engine answered.
	Last engine.Request
}

// Options select what Run replays.
type Options struct {
	Recordings []*Recording
	Windows    []int
	Strategies []string // names; empty means all
	// Parallel replays at once; 0 means GOMAXPROCS.
	Parallel int
	// Speeds price the rows' tokens in engine seconds; zero means
	// DefaultSpeeds.
	Speeds Speeds
	// Engine is the simulated engine every replay runs against; the zero
	// value is llama.cpp with a dense model.
	Engine Engine
}

// Run replays every session in every window with every strategy and
// returns the rows ordered by window, session and strategy.
func Run(ctx context.Context, opt Options) ([]Row, error) {
	res, err := Results(ctx, opt)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, len(res))
	for i, r := range res {
		rows[i] = r.Row
	}
	return rows, nil
}

// Results is Run with every replay's requests: the results ordered by
// window, session and strategy.
func Results(ctx context.Context, opt Options) ([]Result, error) {
	names := opt.Strategies
	if len(names) == 0 {
		for _, s := range Strategies {
			names = append(names, s.Name)
		}
	}
	for _, n := range names {
		if _, err := strategy(n); err != nil {
			return nil, err
		}
	}
	speeds := opt.Speeds
	if speeds == (Speeds{}) {
		speeds = DefaultSpeeds
	}
	if err := speeds.Check(); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	type job struct {
		i      int
		s      *Recording
		window int
		name   string
	}
	var jobs []job
	for _, w := range opt.Windows {
		for _, s := range opt.Recordings {
			for _, n := range names {
				if n != "ours" && s.HasSubagents() {
					continue // the peers have no subagents
				}
				jobs = append(jobs, job{len(jobs), s, w, n})
			}
		}
	}
	par := opt.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	results := make([]Result, len(jobs))
	errs := make([]error, len(jobs))
	ch := make(chan job)
	var wg sync.WaitGroup
	for range min(par, len(jobs)) {
		wg.Go(func() {
			for j := range ch {
				results[j.i], errs[j.i] = ReplayOn(ctx, opt.Engine, j.s, j.window, j.name)
			}
		})
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i := range results {
		results[i].Row.price(speeds)
	}
	return results, nil
}

// Replay replays one session in one window with one strategy against a
// simulated llama.cpp engine (one slot, n_ctx = window, a dense model)
// started for it: ReplayOn with the zero Engine.
func Replay(ctx context.Context, s *Recording, window int, name string) (Result, error) {
	return ReplayOn(ctx, Engine{}, s, window, name)
}

// ReplayOn replays one session in one window with one strategy against
// the simulated engine e (one slot, n_ctx = window) started for it.
//
// The model's actions are the recording's: before each turn the engine is
// scripted with the recorded reply, so what it generates — and keeps in its
// cache, as llama.cpp does — is that reply; the history takes the recorded
// message itself (its call ids, which the template does not render, are
// the recording's). Side calls (tool_choice "none") find no script turn
// and get the engine's own note, which the strategy uses.
func ReplayOn(ctx context.Context, e Engine, s *Recording, window int, name string) (Result, error) {
	info, err := strategy(name)
	if err != nil {
		return Result{}, err
	}
	s = e.recording(s)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv, err := sim.New(e.config(window))
	if err != nil {
		return Result{}, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Result{}, fmt.Errorf("replay: listen on loopback: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-served }()

	base := "http://" + ln.Addr().String() + "/v1"
	m := &meter{client: engine.NewClient(engine.Options{BaseURL: base, Flavor: e.clientFlavor()}), srv: srv, loss: newLosses(s)}
	told := Engine{Flavor: e.Flavor, Cache: srv.Config().Cache, Reasoning: e.Reasoning}.told()
	setup := Setup{Window: window, Reserve: Reserve}
	stalled, skipped := 0, 0
	if name == "ours" {
		if stalled, err = replayOurs(ctx, s, base, m, told); err != nil {
			return Result{}, fmt.Errorf("replay %s, %s, window %d: %w", s.Name, name, window, err)
		}
	} else {
		if setup.Prefix, err = oursPrefix(ctx, s, base, told); err != nil {
			return Result{}, fmt.Errorf("replay %s, %s, window %d: the prefix: %w", s.Name, name, window, err)
		}
		if skipped, err = replayPeer(ctx, s, info.New(setup), m); err != nil {
			return Result{}, fmt.Errorf("replay %s, %s, window %d: %w", s.Name, name, window, err)
		}
	}

	row := Row{Strategy: name, Window: window, Session: s.Name, Stalled: stalled, Skipped: skipped}
	usable := float64(setup.Usable())
	live, turns := 0.0, 0
	for _, q := range m.requests {
		if q.Refused {
			row.Overflows++
			continue
		}
		row.Requests++
		row.Prefilled += q.PromptN
		if q.Sub {
			row.SubPrefilled += q.PromptN
		}
		row.Growth += q.Growth
		row.PrefillSeconds += q.PromptMS / 1000
		row.Decoded += q.Decoded
		row.PeakRatio = max(row.PeakRatio, float64(q.PromptTokens)/float64(window))
		if !q.Side {
			if !q.Extends {
				row.Events++
			}
			live += float64(q.PromptTokens) / usable
			turns++
		}
	}
	if row.Growth > 0 {
		row.Ratio = round(float64(row.Prefilled)/float64(row.Growth), 3)
	}
	if turns > 0 {
		row.LiveMean = round(live/float64(turns), 3)
	}
	row.PeakRatio = round(row.PeakRatio, 3)
	row.PrefillSeconds = round(row.PrefillSeconds, 1)
	row.price(DefaultSpeeds)
	row.FactsKept = round(FactsVisible(s.Facts, m.last), 3)
	row.Losses = m.loss.result(m.last)
	if row.Events > 0 {
		row.ReReadsPerEvent = round(float64(row.ReReads)/float64(row.Events), 2)
	}
	res := Result{Row: row, Requests: m.requests, Last: m.last, Problems: m.problems}
	return res, nil
}

// price sets the row's engine time at sp.
func (r *Row) price(sp Speeds) {
	r.EngineSeconds = round(sp.Seconds(r.Prefilled, r.Decoded), 1)
}

// replayPeer replays s through a peer strategy, round by round, and
// returns how many turns the strategy gave up.
func replayPeer(ctx context.Context, s *Recording, st Strategy, m *meter) (skipped int, err error) {
	var fresh []contextwin.Message
	for i, r := range s.Rounds {
		if r.User != "" {
			u := contextwin.Message{Role: contextwin.User, Content: r.User}
			st.Append(u)
			fresh = append(fresh, u)
		}
		m.begin(i+1, scriptTurn(r.Assistant), fresh)
		if err := st.Turn(ctx, m); err != nil {
			if !errors.Is(err, ErrSkipped) {
				return 0, fmt.Errorf("round %d: %w", i+1, err)
			}
			m.Problem(err.Error())
			skipped++
		}
		results := cutAll(r.Results)
		st.Append(r.Assistant)
		st.Append(results...)
		fresh = results
	}
	return skipped, nil
}

// The cut rule: a recorded tool result reaches every strategy through Cut,
// Codex's cap: 10 KiB or 256 lines, head and tail kept.
const (
	capBytes = 10 << 10
	capLines = 256
)

// capOutput keeps the head and the tail of a long result, half the lines
// and half the bytes each, with a line between them that says what went.
func capOutput(s string) string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(s) <= capBytes && len(lines) <= capLines {
		return s
	}
	var head, tail []string
	hb, tb := 0, 0
	for _, l := range lines {
		if len(head) == capLines/2 || hb+len(l) > capBytes/2 {
			break
		}
		head = append(head, l)
		hb += len(l)
	}
	for i := len(lines) - 1; i >= len(head); i-- {
		l := lines[i]
		if len(tail) == capLines/2 || tb+len(l) > capBytes/2 {
			break
		}
		tail = append(tail, l)
		tb += len(l)
	}
	for i, j := 0, len(tail)-1; i < j; i, j = i+1, j-1 {
		tail[i], tail[j] = tail[j], tail[i]
	}
	cut := len(lines) - len(head) - len(tail)
	h := strings.Join(head, "")
	if !strings.HasSuffix(h, "\n") {
		h += "\n"
	}
	return h + fmt.Sprintf("[… %d of %d lines truncated …]\n", cut, len(lines)) + strings.Join(tail, "")
}

// Cut is the one rule by which a recorded tool result reaches every
// strategy, ours included: the same bytes for all, so that what they
// prefill compares in absolute tokens. It applies capOutput.
func Cut(m contextwin.Message) contextwin.Message {
	if m.Role == contextwin.Tool {
		m.Content = capOutput(m.Content)
	}
	return m
}

func cutAll(msgs []contextwin.Message) []contextwin.Message {
	out := make([]contextwin.Message, len(msgs))
	for i, m := range msgs {
		out[i] = Cut(m)
	}
	return out
}

func round(x float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(x*p) / p
}

// FactsVisible is the share of facts whose value appears in req's messages
// (their text or their tool calls' arguments). A fact whose key a later
// fact plants again (the user corrected it) is not wanted: only the newest
// value of a key counts.
func FactsVisible(facts []Fact, req engine.Request) float64 {
	wanted := len(Wanted(facts))
	if wanted == 0 {
		return 1
	}
	return float64(wanted-len(FactsLost(facts, req))) / float64(wanted)
}

// Wanted are the facts a request should still carry: each key's newest
// value, in their order.
func Wanted(facts []Fact) []Fact {
	var out []Fact
	for i, f := range facts {
		newest := true
		for _, g := range facts[i+1:] {
			if g.Key == f.Key && g.Round >= f.Round {
				newest = false
			}
		}
		if newest {
			out = append(out, f)
		}
	}
	return out
}

// FactsLost are the wanted facts (Wanted) whose value does not appear in
// req's messages, in their order: those FactsVisible does not count.
func FactsLost(facts []Fact, req engine.Request) []Fact {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
		for _, c := range m.ToolCalls {
			b.WriteString(c.Arguments)
			b.WriteByte('\n')
		}
	}
	text := b.String()
	var lost []Fact
	for _, f := range Wanted(facts) {
		if !strings.Contains(text, f.Value) {
			lost = append(lost, f)
		}
	}
	return lost
}

// scriptTurn is a recorded reply as the engine's script: it generates the
// same text and calls.
func scriptTurn(m contextwin.Message) sim.Turn {
	t := sim.Turn{Content: m.Content, Reasoning: m.Reasoning}
	for _, c := range m.ToolCalls {
		args, _ := json.Marshal(c.Arguments) // a JSON string: the text is generated as it is
		t.ToolCalls = append(t.ToolCalls, sim.ScriptCall{Name: c.Name, Arguments: args})
	}
	return t
}

// meter is the Model the strategies call: the real engine client, and the
// engine's figures for every request.
type meter struct {
	client *engine.Client
	srv    scripted

	round    int
	turn     sim.Turn
	scripted bool // the engine's script holds a turn not yet generated
	// fresh are the conversation's messages new in this round (the
	// previous round's results, the user's message); counted is the
	// growth already counted for each (by index), glued whether the
	// round's markers were.
	fresh   []contextwin.Message
	counted map[int]int
	glued   bool

	prev     [][]byte // the previous turn request's messages, as JSON
	prevTool []byte
	started  bool // a turn request was answered
	requests []Request
	last     engine.Request
	problems []string
	loss     *losses
}

// scripted is the engine a meter scripts: one simulator, or one
// session's script on a router's replicas (routed.go).
type scripted interface {
	AppendScript(turns ...sim.Turn)
	LastRequest() (sim.RequestRecord, bool)
	Config() sim.Config
}

// begin starts round n (1-based): its recorded reply, which the next turn
// request gets, and the messages new in it.
func (m *meter) begin(n int, turn sim.Turn, fresh []contextwin.Message) {
	m.round, m.turn, m.fresh = n, turn, fresh
	m.counted = map[int]int{}
	m.glued = false
}

func (m *meter) Problem(text string) {
	m.problems = append(m.problems, fmt.Sprintf("round %d: %s", m.round, text))
}

func (m *meter) Chat(ctx context.Context, req engine.Request, c Call) (*engine.Response, error) {
	if !c.Side && !m.scripted {
		m.srv.AppendScript(m.turn)
		m.scripted = true
	}
	resp, err := m.client.Chat(ctx, req, nil)
	q := Request{Round: m.round, Side: c.Side || c.Sub, Sub: c.Sub, Event: c.Event}
	if err != nil {
		if _, ok := overflowed(err); ok {
			q.Refused = true
			m.requests = append(m.requests, q)
		}
		return resp, err
	}
	if !c.Side {
		m.scripted = false
	}
	msgs := make([][]byte, len(req.Messages))
	for i, msg := range req.Messages {
		msgs[i] = messageJSON(msg)
	}
	tools, _ := json.Marshal(req.Tools)
	q.Extends = !m.started || extends(m.prev, m.prevTool, msgs, tools)
	if rec, ok := m.srv.LastRequest(); ok {
		q.Common = rec.Common
	}
	q.PromptTokens = resp.Usage.PromptTokens
	q.Decoded = resp.Usage.CompletionTokens
	if t := resp.Timings; t != nil {
		q.CacheN, q.PromptN, q.PromptMS = t.CacheN, t.PromptN, t.PromptMS
	} else if c := resp.Usage.CachedTokens; c >= 0 {
		// vLLM reports only cached_tokens, and no time: the time is the
		// simulator's cost model, as llama.cpp's timings are.
		q.CacheN, q.PromptN = c, q.PromptTokens-c
		q.PromptMS = float64(q.PromptN) * m.srv.Config().PrefillMSPerToken
	}
	switch {
	case !m.started && c.Side:
		// A checkpoint request before the first turn (a primer) carries
		// nothing of the conversation: the first turn request's prompt
		// is all growth still.
	case !m.started:
		q.Growth = q.PromptTokens
		m.fresh = m.fresh[:0]
		m.started = true
	default:
		q.Growth = m.growth(req)
	}
	if !c.Side {
		m.prev, m.prevTool = msgs, tools
		m.last = req
	}
	if m.loss != nil {
		switch {
		case !c.Side:
			m.loss.turn(m.round, req, q.Extends)
		case req.MaxTokens != 1 && resp.Content != "" && !c.Sub:
			m.loss.note(m.round, resp.Content)
		}
	}
	m.requests = append(m.requests, q)
	return resp, nil
}

// growth counts what req carries of the round's new messages beyond what
// earlier requests of the round carried of them: a message sent whole (or
// whole inside a larger one: a notice, a recap around it) counts as
// recorded; one sent cut, capped or summarized counts as sent, and if a
// later request of the round carries more of it, the difference counts
// then. What no request carries is not growth.
func (m *meter) growth(req engine.Request) int {
	n := 0
	for i, raw := range m.fresh {
		// The message that carries it whole, else (a result cut to fit)
		// the one answering its call: a recording's call ids repeat over
		// hundreds of rounds, so an older result may answer the same id.
		t := 0
		for _, sent := range req.Messages {
			rides := raw.Role == contextwin.User && sent.Role == string(contextwin.Tool) // a user message sent inside a result
			if (sent.Role != string(raw.Role) && !rides) || (raw.Role == contextwin.Tool && sent.ToolCallID != raw.ToolCallID) {
				continue
			}
			if strings.Contains(sent.Content, raw.Content) {
				t = blockTokens(toEngine(raw))
				break
			}
			if raw.Role == contextwin.Tool {
				t = blockTokens(sent) // the last one answering it: the newest
			}
		}
		if t > m.counted[i] {
			n += t - m.counted[i]
			m.counted[i] = t
		}
	}
	if n > 0 && !m.glued {
		n += endTokens + genPrompt
		m.glued = true
	}
	return n
}

// messageJSON is a message's bytes for comparing requests.
func messageJSON(m engine.Message) []byte {
	b, _ := json.Marshal(m)
	return b
}

// extends reports whether msgs starts with prev, message for message, byte
// for byte, with the same tools.
func extends(prev [][]byte, prevTools []byte, msgs [][]byte, tools []byte) bool {
	if len(msgs) < len(prev) || string(tools) != string(prevTools) {
		return false
	}
	for i := range prev {
		if string(prev[i]) != string(msgs[i]) {
			return false
		}
	}
	return true
}
