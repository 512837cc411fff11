package sim

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Flavor is the engine the simulator pretends to be.
type Flavor string

const (
	// LlamaCpp is llama.cpp's llama-server: window in /v1/models meta and
	// /props, per-slot prompt cache with timings, overlong prompts refused.
	LlamaCpp Flavor = "llamacpp"
	// VLLM is vLLM's OpenAI server: window as max_model_len, block prefix
	// cache reported as cached_tokens, no timings, overflow refused.
	VLLM Flavor = "vllm"
	// Ollama is Ollama's OpenAI compatibility layer: no window in
	// /v1/models (it is in /api/show and /api/ps), overlong chats silently
	// truncated.
	Ollama Flavor = "ollama"
)

// ParseFlavor accepts the flavour names of the CLI ("llamacpp", "vllm",
// "ollama", and "llama.cpp" or "llama-server" for the first).
func ParseFlavor(s string) (Flavor, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "llamacpp", "llama.cpp", "llama-server", "llama":
		return LlamaCpp, nil
	case "vllm":
		return VLLM, nil
	case "ollama":
		return Ollama, nil
	}
	return "", fmt.Errorf("unknown flavour %q: want llamacpp, vllm or ollama", s)
}

// Defaults used where a Config field is left zero.
const (
	DefaultCtx               = 8192
	DefaultPolicyRounds      = 40
	DefaultPrefillMSPerToken = 0.5  // 2000 prompt tokens per second
	DefaultDecodeMSPerToken  = 20.0 // 50 generated tokens per second
)

// Config describes one simulated engine. The zero value is a llama.cpp
// server with one slot, an 8192-token window and no policy.
type Config struct {
	// Flavor is the engine to imitate; empty means LlamaCpp.
	Flavor Flavor
	// Ctx is the per-slot context window in tokens (llama.cpp meta.n_ctx,
	// vLLM max_model_len, Ollama num_ctx); 0 means DefaultCtx.
	Ctx int
	// Model is the model id the engine reports; empty picks one per flavour.
	Model string
	// Models are more model ids the engine lists after Model in
	// /v1/models (llama.cpp and vLLM), as a vLLM serving LoRA adapters or
	// a router in front of several llama-servers does. The simulator
	// answers to any model a request names.
	Models []string
	// ModelCtx gives a model of Models a window of its own, in place of
	// Ctx: /v1/models lists it (llama.cpp's meta.n_ctx, vLLM's
	// max_model_len) and a request naming the model is fitted to it, as
	// a router's children or servers of their own behind one endpoint
	// would.
	ModelCtx map[string]int
	// Vision makes /props tell that the model takes images
	// (modalities.vision), as llama-server does with an --mmproj.
	Vision bool
	// Slots is the number of parallel slots, each with its own prompt
	// cache (llama.cpp total_slots); 0 means 1. Requests beyond it queue.
	Slots int
	// Cache is how the prompt cache reuses a prompt that changed: on
	// llama.cpp, whether the model is dense, sliding-window or recurrent,
	// with its checkpoints (cache.go); on vLLM, its block size. The zero
	// value is a dense model and vLLM's 16-token blocks. Ollama's slots
	// are always dense.
	Cache CacheModel
	// SlotSavePath is llama.cpp's --slot-save-path: the directory where
	// POST /slots/{id}?action=save writes a slot's cached prompt and
	// action=restore reads it back. Empty refuses those actions (HTTP 501),
	// as llama-server does without the flag. Other flavours ignore it.
	SlotSavePath string
	// Router makes a llama.cpp server its router mode (router.go): the
	// model listed with a status, /props per model, a model that sleeps
	// (SetModelStatus) and loses its cache. Other flavours refuse it.
	Router bool
	// Script holds replies, consumed one per chat request in order.
	Script []Turn
	// Root is the directory the built-in policy explores once the script
	// is used up; empty means no policy (a short final answer instead).
	Root string
	// PolicyRounds is how many tool rounds the policy runs before its final
	// answer; 0 means DefaultPolicyRounds. A "rounds=N" in the first user
	// message overrides it.
	PolicyRounds int
	// LoadTime is how long after New a llama.cpp server answers 503
	// "Loading model" (see also SetLoading). Other flavours ignore it.
	LoadTime time.Duration
	// PrefillMSPerToken and DecodeMSPerToken are the cost model behind the
	// reported timings; 0 means the defaults.
	PrefillMSPerToken float64
	DecodeMSPerToken  float64
	// Realtime makes the server take the modelled time: it sleeps for the
	// prefill before the first byte and for each token it streams.
	Realtime bool
	// ReasoningTemplate is what the chat template renders of the reasoning
	// assistant messages carry back; empty means DropReasoning. /props
	// reports AllReasoning as supports_preserve_reasoning.
	ReasoningTemplate ReasoningTemplate
	// NoPrefill refuses a request whose last message is the assistant's,
	// as llama.cpp does for a template that thinks (400 "Assistant
	// response prefill is incompatible with enable_thinking."); without
	// it a llama.cpp flavour goes on with that message, unclosed.
	NoPrefill bool
	// Faults are standing faults applied to chat requests by schedule.
	Faults []FaultRule
	// Log, when set, receives one line per chat request.
	Log io.Writer
	// Bodies, when set, receives each chat request's body as one line of
	// JSON when the request is recorded: what a test in another process
	// reads of the requests (reika-lsp sim --bodies).
	Bodies io.Writer
}

func (c Config) withDefaults() (Config, error) {
	var err error
	if c.Flavor, err = ParseFlavor(string(c.Flavor)); err != nil {
		return c, err
	}
	if c.ReasoningTemplate, err = ParseReasoningTemplate(string(c.ReasoningTemplate)); err != nil {
		return c, err
	}
	if c.Ctx < 0 || c.Slots < 0 || c.PolicyRounds < 0 || c.LoadTime < 0 {
		return c, errors.New("ctx, slots, policy rounds and load time must not be negative")
	}
	if c.PrefillMSPerToken < 0 || c.DecodeMSPerToken < 0 {
		return c, errors.New("prefill and decode costs must not be negative")
	}
	if c.Ctx == 0 {
		c.Ctx = DefaultCtx
	}
	if c.Flavor == VLLM && c.Cache.Kind == CacheRecurrent && c.Cache.Block == 0 {
		c.Cache.Block = DefaultHybridBlock
	}
	if c.Cache, err = c.Cache.withDefaults(); err != nil {
		return c, err
	}
	switch {
	case c.Flavor == VLLM && c.Cache.Kind == CacheRecurrent:
	case c.Cache.Kind != CacheDense && c.Flavor != LlamaCpp:
		return c, fmt.Errorf("cache %s is a llama.cpp slot's: the %s flavour has its own", c.Cache.Kind, c.Flavor)
	}
	if c.Router && c.Flavor != LlamaCpp {
		return c, fmt.Errorf("a router is llama.cpp's: the %s flavour has none", c.Flavor)
	}
	if c.Ctx < 16 {
		return c, fmt.Errorf("ctx %d is too small: want at least 16 tokens", c.Ctx)
	}
	for m, n := range c.ModelCtx {
		if n < 16 || !slices.Contains(c.Models, m) {
			return c, fmt.Errorf("model ctx %s: %d: want a model of Models and at least 16 tokens", m, n)
		}
	}
	if c.Slots == 0 {
		c.Slots = 1
	}
	if c.Slots > 256 {
		return c, fmt.Errorf("slots %d is too many: want at most 256", c.Slots)
	}
	if c.PolicyRounds == 0 {
		c.PolicyRounds = DefaultPolicyRounds
	}
	if c.PrefillMSPerToken == 0 {
		c.PrefillMSPerToken = DefaultPrefillMSPerToken
	}
	if c.DecodeMSPerToken == 0 {
		c.DecodeMSPerToken = DefaultDecodeMSPerToken
	}
	for i, r := range c.Faults {
		if r.Every < 0 || r.First < 0 {
			return c, fmt.Errorf("fault rule %d: every and first must not be negative", i)
		}
		if err := r.Fault.validate(); err != nil {
			return c, fmt.Errorf("fault rule %d: %w", i, err)
		}
	}
	for i, t := range c.Script {
		if t.Fault != nil {
			if err := t.Fault.validate(); err != nil {
				return c, fmt.Errorf("script turn %d: %w", i+1, err)
			}
		}
	}
	return c, nil
}

// ctxOf is the window of the model a request names: its own (ModelCtx),
// else Ctx.
func (c Config) ctxOf(model string) int {
	if n, ok := c.ModelCtx[model]; ok {
		return n
	}
	return c.Ctx
}
