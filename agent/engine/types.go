package engine

import (
	"encoding/json"
	"time"
)

// Message is one entry of a chat. Roles are "system", "user", "assistant"
// and "tool".
type Message struct {
	Role    string
	Content string
	// Reasoning is an assistant message's reasoning text, sent back as
	// reasoning_content when it is not empty. Which messages carry it is
	// the caller's choice (the agent's: the turn's own, as they were sent).
	Reasoning string
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall
	// ToolCallID ties a "tool" message to the call it answers.
	ToolCallID string
	// Images go with a user message's text as image_url content parts
	// (data URLs), for an engine that takes them.
	Images []Image `json:",omitempty"`
}

// Image is a picture: its MIME type and its bytes in base64.
type Image struct {
	MIME, Data string
}

// ToolCall is one function call made by the model.
type ToolCall struct {
	// ID ties the call to its result. When the engine gave none, the
	// client names it "call_N", N being its position in the reply.
	ID   string
	Name string
	// Arguments is JSON text, as the model wrote it; "{}" when the model
	// gave none.
	Arguments string
}

// Tool is a function the model may call. Parameters is its JSON schema,
// sent byte for byte as given.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Request is one chat-completion request.
type Request struct {
	// Model, when set, names the model in place of the client's own
	// (Options.Model): a session the user switched to another model the
	// engine serves.
	Model    string
	Messages []Message
	Tools    []Tool
	// ToolChoice is "", "auto", "none" or "required". Empty sends nothing,
	// except that a request with tools and no choice sends nothing too: the
	// engine's default ("auto") applies.
	ToolChoice string
	// MaxTokens caps the reply; 0 leaves it to the engine.
	MaxTokens int
	// Temperature, when non-nil, is sent even when it is 0.
	Temperature *float64
	// FirstByte bounds the wait for the first byte of a streamed answer —
	// the prefill, scaled by the caller to the prompt and the engine's
	// speed; 0 takes Timeouts.Idle.
	FirstByte time.Duration
	// Slot, when set, pins the request to that llama.cpp slot (id_slot),
	// whose prompt cache it then reuses; other engines are sent nothing.
	// Nil lets llama.cpp choose (the idle slot sharing the longest prefix).
	Slot *int
	// Session names the conversation the request belongs to, the same for
	// all of a session's requests (its folds, a resume, a restart);
	// ParentSession is the session of a subagent's parent. A router in
	// front of several engines keeps a conversation on the replica that
	// holds its prefix only when the client names it: they are sent as
	// the headers SessionHeaders lists. Empty sends none.
	Session, ParentSession string
	// Extra fields are merged into the request body, after the profile's
	// own extras (a key here wins). Neither replaces a field the client
	// sets itself: messages, tools, tool_choice, stream, stream_options,
	// and model, max_tokens and temperature when they are set.
	Extra map[string]any
}

// Response is a finished chat completion. Chat also returns it beside
// some errors, holding what arrived (see [Client.Chat]).
type Response struct {
	Model        string
	Content      string
	Reasoning    string
	ToolCalls    []ToolCall
	FinishReason string // "stop", "tool_calls", "length", or what the engine said
	Usage        Usage
	// Timings are llama.cpp's own figures; nil from other engines.
	Timings *Timings
	// Overran is set when the engine generated well past max_tokens and
	// the client stopped reading: FinishReason is then "length", and
	// Usage is what came before (usually nothing).
	Overran bool
}

// Usage is the engine's token accounting for one request.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	// CachedTokens are prompt tokens the engine reused from its prefix
	// cache (usage.prompt_tokens_details.cached_tokens, else llama.cpp's
	// timings.cache_n); -1 when the engine did not say.
	CachedTokens int
}

// Timings are llama.cpp's per-request figures.
type Timings struct {
	CacheN      int     `json:"cache_n"`      // prompt tokens reused from the cache
	PromptN     int     `json:"prompt_n"`     // prompt tokens processed anew
	PromptMS    float64 `json:"prompt_ms"`    // time spent on them
	PredictedN  int     `json:"predicted_n"`  // tokens generated
	PredictedMS float64 `json:"predicted_ms"` // time spent generating
}

// Delta is one streamed increment, passed to the caller's callback as it
// arrives.
type Delta struct {
	Content   string
	Reasoning string
	// ToolCall is set when the increment belongs to a tool call: its index
	// in the reply, and the parts that arrived (name once, arguments in
	// pieces).
	ToolCall *ToolCallDelta
}

// ToolCallDelta is a piece of a streamed tool call.
type ToolCallDelta struct {
	// Index is the call's position in Response.ToolCalls (not always the
	// engine's own index: some engines reuse index 0 for every call).
	Index     int
	ID        string
	Name      string
	Arguments string
}
