package contextwin

// Role is who speaks a message.
type Role string

const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	Tool      Role = "tool"
)

// Message is one entry of a session as contextwin sees it. The agent
// converts to and from the engine's types; contextwin never sees them.
type Message struct {
	Role    Role
	Content string
	// Reasoning is an assistant message's reasoning. It counts toward the
	// prompt only where the agent sends it back; contextwin sheds it first.
	Reasoning string
	ToolCalls []ToolCall // an assistant message's calls
	// ToolCallID ties a tool result to its call.
	ToolCallID string
	// Payload describes a tool result, for its summary and its priority.
	Payload Payload
	// Rides, set by the planner on a user message of the view, says the
	// request sends it at the end of the tool result before it, where a
	// turn template does not take it for a new query (RidesResult).
	Rides bool
	// Continuation marks a reply cut by the length limit, or the prompt
	// that asked the model to go on: once a later message exists, it is
	// spent, and the first thing a shed drops.
	Continuation bool
	// Images are pictures the user attached to a user message, for an
	// engine that takes them; each counts as ImageBytes.
	Images []Image
}

// Image is a picture in a message: its MIME type and its bytes in
// base64, as a data URL carries them.
type Image struct {
	MIME string `json:"mime"`
	Data string `json:"data"`
}

// ImageBytes is what the planner counts for an image, in bytes at the
// baseline: about a thousand tokens, between the few hundred a small
// vision encoder takes and the thousands of a large picture on a
// tiling one. The engine's counts correct the estimate as for text.
const ImageBytes = 4096

// ToolCall is one call an assistant message made.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON, as the model wrote it
}

// Kind is what a tool result holds, which decides its summary.
type Kind int

const (
	// Other results keep their opening when shed.
	Other Kind = iota
	// Read is a file's lines, numbered "N\t…" (cat -n style) or plain
	// from Payload.From. Its summary: "Read PATH lines A-B of N" and an
	// outline of its top-level declarations with their line numbers.
	Read
	// Diff is an edit's outcome or a unified diff; its summary keeps the
	// file and the hunk headers.
	Diff
	// Search is grep or glob output.
	Search
	// Command is a shell command's output.
	Command
	// Fetch is a fetched page.
	Fetch
	// Report is a subagent's report; its summary keeps the opening.
	Report
)

var kindNames = [...]string{Other: "other", Read: "read", Diff: "diff", Search: "search", Command: "command", Fetch: "fetch", Report: "report"}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "other"
	}
	return kindNames[k]
}

// Payload is what the agent knows about a tool result.
type Payload struct {
	Kind Kind `json:"kind,omitempty"`
	// Path is the file a Read or Diff is about, the URL of a Fetch, the
	// pattern of a Search, the command line of a Command.
	Path string `json:"path,omitempty"`
	// From and To are the 1-based lines a Read shows, Total the file's
	// length in lines.
	From  int `json:"from,omitempty"`
	To    int `json:"to,omitempty"`
	Total int `json:"total,omitempty"`
	// Spill, when set, is a file holding the whole output, which the model
	// can page through with its read tool.
	Spill string `json:"spill,omitempty"`
	// Task marks the payload that defines the task (the spec a review
	// fetched first): it is never shed, and a fold carries it verbatim.
	Task bool `json:"task,omitempty"`
}
