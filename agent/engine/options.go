package engine

import (
	"net/http"
	"time"
)

// Flavor names the kind of engine behind an endpoint. It decides which
// request fields are worth sending and where the window is read from.
type Flavor string

const (
	FlavorUnknown Flavor = ""
	LlamaCpp      Flavor = "llamacpp"
	VLLM          Flavor = "vllm"
	SGLang        Flavor = "sglang"
	Ollama        Flavor = "ollama"
	LMStudio      Flavor = "lmstudio"
	// Hosted is an OpenAI-compatible service on a public host.
	Hosted Flavor = "hosted"
	// Generic is an OpenAI-compatible endpoint that said nothing more about
	// itself.
	Generic Flavor = "openai-compatible"
)

// Name is the engine's name as its users write it.
func (f Flavor) Name() string {
	switch f {
	case LlamaCpp:
		return "llama.cpp"
	case VLLM:
		return "vLLM"
	case SGLang:
		return "SGLang"
	case Ollama:
		return "Ollama"
	case LMStudio:
		return "LM Studio"
	case Hosted:
		return "hosted service"
	case Generic:
		return "OpenAI-compatible server"
	}
	return "unknown engine"
}

// Options configure a Client and Discover.
type Options struct {
	// BaseURL is the OpenAI-compatible root, usually ending in /v1.
	BaseURL string
	// Model is sent with every request; empty lets discovery pick the
	// engine's first model.
	Model string
	// APIKey, when set, is sent as a bearer token to BaseURL's host only.
	APIKey string
	// Flavor, when known, adds the fields that engine wants (cache_prompt
	// for llama.cpp).
	Flavor Flavor
	// Extra fields are merged into every chat request body (the profile's
	// extras).
	Extra map[string]any
	// Router is set behind llama.cpp's router mode (Discovery.Router):
	// /slots and /tokenize then name the model, which the router needs to
	// find its child.
	Router bool
	// Identity says which headers and body fields name a request's
	// session (Request.Session); the zero value sends SessionHeaders and
	// ParentSessionHeaders, no field.
	Identity Identity
	// HTTPClient, when set, sends every request (tests record through it).
	// Its own Timeout is left alone; the timeouts below still apply.
	HTTPClient *http.Client
	Timeouts   Timeouts
}

// Timeouts bound every call to the engine. Zero values take the defaults.
type Timeouts struct {
	// Probe bounds a small metadata call (GET /v1/models, /props, …).
	// Default 5s.
	Probe time.Duration
	// Idle is the longest silence allowed while waiting for, or reading, a
	// streamed answer. It includes prefill before the first byte, which on
	// a CPU can take minutes for a long prompt. Default 5m.
	Idle time.Duration
	// Response bounds a whole non-streamed chat call. Default 10m.
	Response time.Duration
	// Chunk is the longest silence between two chunks once a streamed
	// answer has begun: decoding never pauses that long. Default 60s, or
	// Idle when that is shorter.
	Chunk time.Duration
}

// DefaultTimeouts are used where Options.Timeouts leaves a field zero.
var DefaultTimeouts = Timeouts{
	Probe:    5 * time.Second,
	Idle:     5 * time.Minute,
	Response: 10 * time.Minute,
	Chunk:    time.Minute,
}

func (t Timeouts) withDefaults() Timeouts {
	if t.Probe <= 0 {
		t.Probe = DefaultTimeouts.Probe
	}
	if t.Idle <= 0 {
		t.Idle = DefaultTimeouts.Idle
	}
	if t.Response <= 0 {
		t.Response = DefaultTimeouts.Response
	}
	if t.Chunk <= 0 {
		t.Chunk = min(DefaultTimeouts.Chunk, t.Idle)
	}
	return t
}
