package replay

import (
	"context"
	"errors"
	"fmt"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/contextwin"
)

// Strategy manages what the requests of one replayed conversation carry.
// The runner appends the recording's messages as they happen and asks for
// the model's turn before each reply; the strategy decides what the
// request holds, makes any side calls it needs first, and handles the
// engine's refusals as it would in real life.
type Strategy interface {
	// Append adds the conversation's next messages, in order: a user
	// message, the model's reply, the results of its tool calls.
	Append(msgs ...contextwin.Message)
	// Turn obtains the model's next turn through m. It returns an error
	// wrapping ErrSkipped when it gave the turn up (the replay goes on
	// with the recording's next round).
	Turn(ctx context.Context, m Model) error
}

// Model is the engine as a strategy sees it: the runner's client, which
// keeps the engine's figures for every request.
type Model interface {
	Chat(ctx context.Context, req engine.Request, c Call) (*engine.Response, error)
	// Problem records what the strategy would have told the user (a
	// window too small, a retry given up): the replay reports it.
	Problem(text string)
}

// Call says what a request is for.
type Call struct {
	// Side marks a request beside the conversation, made with tool_choice
	// "none" before the turn: a note, a summary, a checkpoint. The model's
	// turn is still to come.
	Side bool
	// Event names what the strategy did to get this request: "append"
	// when it only appended, else its own word ("shed", "fold", "drop",
	// "summary", "mask", …). The metrics do not trust it: they compare
	// the requests themselves.
	Event string
	// Sub marks a request of a subagent's (Round.Sub): beside the
	// conversation, as a side call is, and counted apart
	// (Row.SubPrefilled).
	Sub bool
}

// ErrSkipped reports a turn a strategy gave up on.
var ErrSkipped = errors.New("turn skipped")

// Setup is what a strategy starts from.
type Setup struct {
	// Window is W, the engine's window in tokens.
	Window int
	// Reserve is the room every strategy holds back for the reply.
	Reserve int
	// Prefix is the fixed start of every request (system prompt with the
	// repo map, tool definitions), built with agent.NewPrefix.
	Prefix *agent.Prefix
}

// Usable is W minus the reserve.
func (s Setup) Usable() int { return s.Window - s.Reserve }

// Factory starts a strategy for one replay.
type Factory func(Setup) Strategy

// StrategyInfo names a strategy.
type StrategyInfo struct {
	Name string
	// New starts the strategy; nil for ours, which is the agent itself
	// (replayOurs), not a Strategy.
	New Factory
	// Doc says in a line what it does.
	Doc string
}

// Strategies are the strategies a replay compares, in table order.
var Strategies = []StrategyInfo{
	{"ours", nil, "Reika itself: an agent session from agent.Start, the repo map in its prefix as the server has it"},
	{"sliding", newSliding, "drop the oldest whole rounds to fit W − reserve; system prompt and first user message kept"},
	{"summarize", newSummarize, "at 90% of usable, one summary call, then restart from [system, first user message, summary]"},
	{"mask", newMask, "results older than the last 5 rounds become their contextwin summaries every round; drop-oldest fallback"},
	{"layered", newLayered, "the second seed's layered budget: active-turn checkpoints, a history layer, an emergency fold"},
}

// strategy finds a strategy by name.
func strategy(name string) (StrategyInfo, error) {
	for _, s := range Strategies {
		if s.Name == name {
			return s, nil
		}
	}
	return StrategyInfo{}, fmt.Errorf("unknown strategy %q: want %s", name, strategyNames())
}

func strategyNames() string {
	s := ""
	for i, x := range Strategies {
		if i > 0 {
			s += ", "
		}
		s += x.Name
	}
	return s
}

// toEngine converts a message of the conversation to the engine's type, as
// agent.Prefix.Request does.
func toEngine(m contextwin.Message) engine.Message {
	e := engine.Message{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID}
	for _, c := range m.ToolCalls {
		e.ToolCalls = append(e.ToolCalls, engine.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return e
}

// overflowed reports the engine's refusal of a request as too long.
func overflowed(err error) (*engine.Error, bool) {
	var e *engine.Error
	if errors.As(err, &e) && errors.Is(err, engine.Overflow) {
		return e, true
	}
	return nil, false
}
