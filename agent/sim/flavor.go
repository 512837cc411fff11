package sim

import "net/http"

// flavor is the dialect of one imitated engine: its endpoints, the shapes
// of its JSON, how it treats a prompt against the window, and what it
// reports. New picks the implementation once (flavorFor); everything else
// asks it, so that only flavorFor looks at Config.Flavor. The
// implementations hold no state (the Server holds that) and live one per
// engine: llamaCpp in llamacpp.go, vllm in vllm.go, ollama in ollama.go.
type flavor interface {
	// defaultModel is the model id reported when Config.Model is empty.
	defaultModel() string
	// defaultListen is the address the real engine listens on by default.
	defaultListen() string
	// routes mounts the engine's endpoints, chat completions included.
	routes(s *Server, mux *http.ServeMux)
	// newCache is the engine's prompt cache for a server of n slots
	// reusing prompts as m says, and the slot pool behind it, or nil when
	// the engine has no slots.
	newCache(n int, m CacheModel) (promptCache, *slotPool)
	// loads reports whether the engine answers 503 "Loading model" while
	// its model loads (Config.LoadTime, Server.SetLoading); a simulated
	// 503 fault then takes that shape too.
	loads() bool

	// serverHeader is the Server header of every answer.
	serverHeader() string
	// jsonContentType is the Content-Type of a JSON answer.
	jsonContentType() string
	// errorBody is the engine's JSON error envelope.
	errorBody(status int, msg string) obj

	// fit applies the window to a prompt of toks: what the engine
	// evaluates and may generate, or its refusal.
	fit(c *chat, toks []string, window int) (fitting, *refusal)
	// completionID is the id of chat completion number seq, the same for
	// the same seq.
	completionID(seq int) string
	// completionBody is a non-streamed chat completion whose message is
	// msg.
	completionBody(a answer, msg obj) obj
	// reasoningKey is the message field that carries the reasoning.
	reasoningKey() string
	// toolCallObj is one tool call of a reply's message, fn its function.
	toolCallObj(tc toolCall, fn obj) obj
	// usageObj is the usage object of a completion.
	usageObj(f figures) obj
	// timingsObj is the engine's timings object, or nil when it reports
	// none.
	timingsObj(f figures) obj

	// roleDelta is the first delta of a stream.
	roleDelta() obj
	// chunkObj is one streamed chunk around choices.
	chunkObj(a answer, choices []any) obj
	// choiceObj is one streamed choice; finish is nil until the last.
	choiceObj(delta obj, finish any) obj
}

// flavorFor is the one place that maps a Flavor to its implementation; f
// has been through ParseFlavor.
// DefaultListen is the address the real engine of flavour f listens on
// by default (llama-server's 8080, vLLM's 8000, Ollama's 11434), where
// `reika-lsp sim` stands in for it.
func (f Flavor) DefaultListen() string { return flavorFor(f).defaultListen() }

func flavorFor(f Flavor) flavor {
	switch f {
	case VLLM:
		return vllm{}
	case Ollama:
		return ollama{}
	}
	return llamaCpp{}
}

// fitting is a prompt the window takes.
type fitting struct {
	tokens  []string // the prompt tokens the engine evaluates
	dropped int      // messages the engine dropped to make it fit
	limit   int      // the most tokens it may generate; -1 for no limit
}

// refusal is an engine's answer to a request it will not serve.
type refusal struct {
	status int
	msg    string
	body   obj // the JSON sent; nil means the flavour's errorBody
}
