package replay

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/contextwin"
)

// layered is the second seed's layered budget, as its description reads
// (testdata/sessions/README.md lists where the description leaves a choice
// and what was chosen). Before every call it divides the window:
//
//	limit     = 82% of W − reserve (the estimator's margin)
//	room      = limit − fixed prefix − resident state (the turn's user message, its checkpoint)
//	planning  = max(room/6, 16000)   room kept for the results of the next steps
//	remaining = room − planning
//	history   = 40% of remaining     completed turns
//	trigger   = 60% of remaining, plus what the history layer leaves idle
//	tail      = 45% of trigger       kept verbatim at a checkpoint
//	summary   = 2% of trigger, within 1200…6000
//
// Three layers act on it. The active layer: when the current turn's
// unfolded step groups pass the trigger, one call with tools forbidden
// writes a rolling checkpoint of the older groups (it replaces the previous
// checkpoint's text; the "key: value" facts of every checkpoint are merged
// into a ledger that stays); the newest groups within the tail stay
// verbatim. The history layer: completed turns keep at most the last 5,
// within min(30000, 20% of the room at the turn's start); older ones are
// archived to a one-line placeholder. The emergency layer: when the
// estimate passes the limit, or the engine refuses the request, every step
// group of the turn but the newest is folded without a model call, every
// completed turn is archived, and a gap notice says what went; then one
// retry. When remaining leaves no room for a checkpoint to shrink anything
// (55% of the trigger no larger than the summary), the window is too small
// for the layers and only the emergency layer acts.
type layered struct {
	setup  Setup
	prefix int

	history []hturn
	task    *item
	// The current turn's checkpoint text, the ledger of facts of every
	// checkpoint so far, the gap notice of its emergency folds.
	summary string
	ledger  []ledgerFact
	folded  int
	groups  []group // the current turn's step groups, verbatim
	histCap int     // the history layer's cap, set at the turn's start
}

// hturn is a completed turn in the history layer.
type hturn struct {
	items    []item
	tokens   int
	archived bool
}

type ledgerFact struct{ key, value string }

// The seed's constants.
const (
	layeredLimit        = 0.82
	layeredPlanShare    = 6 // planning reserve: room / 6 …
	layeredPlanFloor    = 16000
	layeredActive       = 0.60
	layeredHistory      = 0.40
	layeredTail         = 0.45
	layeredSummary      = 0.02
	layeredSummaryMin   = 1200
	layeredSummaryMax   = 6000
	layeredHistTurns    = 5
	layeredHistMax      = 30000
	layeredHistShare    = 0.20
	archivedPlaceholder = "[An earlier turn was archived: its steps were folded into the checkpoint. Re-read the sources when you need exact bytes.]"
)

// CheckpointInstruction asks for the active layer's checkpoint.
const CheckpointInstruction = "Write a checkpoint of the steps above for the rest of this turn: what was done, what was found, " +
	"what remains. Put exact facts one per line as `key: value`. Do not call tools."

func newLayered(setup Setup) Strategy {
	return &layered{setup: setup, prefix: prefixTokens(setup.Prefix)}
}

type layeredBudget struct {
	limit, room, remaining, history, trigger, tail, summary int
	tooSmall                                                bool
}

func (l *layered) budget() layeredBudget {
	var b layeredBudget
	b.limit = int(layeredLimit * float64(l.setup.Usable()))
	b.room = b.limit - l.prefix - genPrompt - l.residentTokens()
	b.remaining = b.room - max(b.room/layeredPlanShare, layeredPlanFloor)
	b.history = max(0, int(layeredHistory*float64(b.remaining)))
	borrow := max(0, b.history-l.historyTokens())
	b.trigger = max(0, int(layeredActive*float64(b.remaining))) + borrow
	b.tail = int(layeredTail * float64(b.trigger))
	b.summary = min(max(int(layeredSummary*float64(b.trigger)), layeredSummaryMin), layeredSummaryMax)
	b.tooSmall = b.remaining <= 0 || float64(b.trigger)*(1-layeredTail) <= float64(b.summary)
	return b
}

func (l *layered) residentTokens() int {
	n := 0
	for _, it := range l.resident() {
		n += it.tokens
	}
	return n
}

func (l *layered) historyTokens() int {
	n := 0
	for _, h := range l.history {
		n += h.tokens
	}
	return n
}

// resident is the turn's user message, its checkpoint and its gap notice.
func (l *layered) resident() []item {
	var out []item
	if l.task != nil {
		out = append(out, *l.task)
	}
	if text := l.checkpointText(); text != "" {
		out = append(out, newItem(contextwin.Message{Role: contextwin.User}, text))
	}
	if l.folded > 0 {
		out = append(out, newItem(contextwin.Message{Role: contextwin.User}, fmt.Sprintf(
			"[Context gap: %d earlier groups of tool calls and results of this turn were folded without a summary to fit the window. "+
				"Read files and run commands again for anything you need.]", l.folded)))
	}
	return out
}

func (l *layered) checkpointText() string {
	if l.summary == "" && len(l.ledger) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("[Current turn checkpoint]\n")
	b.WriteString(l.summary)
	var rest []string
	for _, f := range l.ledger {
		if !strings.Contains(l.summary, f.key+": "+f.value) {
			rest = append(rest, "- "+f.key+": "+f.value)
		}
	}
	if len(rest) > 0 {
		b.WriteString("\n\nFacts:\n" + strings.Join(rest, "\n"))
	}
	return b.String()
}

func (l *layered) Append(msgs ...contextwin.Message) {
	for _, m := range msgs {
		switch m.Role {
		case contextwin.User:
			l.closeTurn()
			it := newItem(m, m.Content)
			l.task = &it
			l.histCap = min(layeredHistMax, int(layeredHistShare*float64(max(0, l.budget().room))))
			l.trimHistory()
		case contextwin.Assistant:
			l.groups = append(l.groups, group{})
			fallthrough
		default:
			it := newItem(m, m.Content)
			g := &l.groups[len(l.groups)-1]
			g.items = append(g.items, it)
			g.tokens += it.tokens
		}
	}
}

// closeTurn moves the current turn into the history layer.
func (l *layered) closeTurn() {
	if l.task == nil {
		return
	}
	h := hturn{items: l.resident()}
	for _, g := range l.groups {
		h.items = append(h.items, g.items...)
	}
	for _, it := range h.items {
		h.tokens += it.tokens
	}
	l.history = append(l.history, h)
	l.task, l.summary, l.folded, l.groups = nil, "", 0, nil
}

// trimHistory archives completed turns past the last five or the cap,
// oldest first.
func (l *layered) trimHistory() {
	kept, total := 0, 0
	for i := len(l.history) - 1; i >= 0; i-- {
		h := &l.history[i]
		if h.archived {
			continue
		}
		if kept == layeredHistTurns || total+h.tokens > l.histCap {
			l.archive(i)
			continue
		}
		kept++
		total += h.tokens
	}
}

func (l *layered) archive(i int) {
	it := newItem(contextwin.Message{Role: contextwin.User}, archivedPlaceholder)
	l.history[i] = hturn{items: []item{it}, tokens: it.tokens, archived: true}
}

// messages is the request's conversation: the history, the turn's
// resident state, its first n step groups.
func (l *layered) messages(n int) []engine.Message {
	msgs := []engine.Message{{Role: "system", Content: l.setup.Prefix.System}}
	for _, h := range l.history {
		for _, it := range h.items {
			msgs = append(msgs, it.msg)
		}
	}
	for _, it := range l.resident() {
		msgs = append(msgs, it.msg)
	}
	for _, g := range l.groups[:n] {
		for _, it := range g.items {
			msgs = append(msgs, it.msg)
		}
	}
	return msgs
}

func (l *layered) estimate() int {
	n := l.prefix + genPrompt + l.historyTokens() + l.residentTokens()
	for _, g := range l.groups {
		n += g.tokens
	}
	return n
}

func (l *layered) activeTokens() int {
	n := 0
	for _, g := range l.groups {
		n += g.tokens
	}
	return n
}

func (l *layered) Turn(ctx context.Context, m Model) error {
	event := "append"
	b := l.budget()
	if !b.tooSmall && l.activeTokens() > b.trigger {
		if l.checkpoint(ctx, m, b) {
			event = "checkpoint"
		}
	}
	if l.estimate() > l.budget().limit {
		l.emergency()
		event = "emergency"
	}
	req := engine.Request{Messages: l.messages(len(l.groups)), Tools: l.setup.Prefix.Tools}
	_, err := m.Chat(ctx, req, Call{Event: event})
	if _, ok := overflowed(err); ok {
		l.emergency()
		req.Messages = l.messages(len(l.groups))
		_, err = m.Chat(ctx, req, Call{Event: "emergency"})
		if _, ok := overflowed(err); ok {
			return fmt.Errorf("%w: refused again after an emergency fold", ErrSkipped)
		}
	}
	return err
}

// checkpoint folds the older step groups of the turn into the rolling
// checkpoint, keeping the newest groups within the tail verbatim. It
// reports whether it folded anything.
func (l *layered) checkpoint(ctx context.Context, m Model, b layeredBudget) bool {
	keep, kept := 1, l.groups[len(l.groups)-1].tokens
	for i := len(l.groups) - 2; i >= 0 && kept+l.groups[i].tokens <= b.tail; i-- {
		keep++
		kept += l.groups[i].tokens
	}
	n := len(l.groups) - keep
	if n <= 0 {
		return false
	}
	msgs := append(l.messages(n), engine.Message{Role: "user", Content: CheckpointInstruction})
	resp, err := m.Chat(ctx, engine.Request{Messages: msgs, Tools: l.setup.Prefix.Tools, ToolChoice: "none", MaxTokens: b.summary},
		Call{Side: true, Event: "checkpoint"})
	if err != nil || strings.TrimSpace(resp.Content) == "" {
		return false // the groups stay; the emergency layer is the backstop
	}
	l.summary = strings.TrimSpace(resp.Content)
	l.mergeFacts(l.summary)
	l.groups = l.groups[n:]
	return true
}

// emergency folds every step group but the newest without a model call,
// archives the completed turns, and leaves a gap notice.
func (l *layered) emergency() {
	if n := len(l.groups) - 1; n > 0 {
		l.folded += n
		l.groups = l.groups[n:]
	}
	for i := range l.history {
		if !l.history[i].archived {
			l.archive(i)
		}
	}
}

// factLineRe reads a "key: value" line of a checkpoint, after an optional
// list marker: a key of at most four words.
var factLineRe = regexp.MustCompile(`^(?:[-*] )?([A-Za-z][A-Za-z0-9_.()/-]*(?: [A-Za-z0-9_.()/-]+){0,3}): (\S.*)$`)

// mergeFacts adds the facts of a checkpoint to the ledger: a key stated
// again takes the new value.
func (l *layered) mergeFacts(text string) {
	for line := range strings.Lines(text) {
		sub := factLineRe.FindStringSubmatch(strings.TrimSpace(line))
		if sub == nil {
			continue
		}
		found := false
		for i := range l.ledger {
			if strings.EqualFold(l.ledger[i].key, sub[1]) {
				l.ledger[i].value, found = sub[2], true
			}
		}
		if !found {
			l.ledger = append(l.ledger, ledgerFact{sub[1], sub[2]})
		}
	}
}
