package sim

import (
	"fmt"
	"strings"
)

// How a llama.cpp slot serves a prompt that changed at token c of what it
// holds. A dense model keeps any common prefix and restarts at c. A model
// whose state cannot be rolled back to any token restarts from a context
// checkpoint: a sliding-window model (Gemma 3, gpt-oss) whose cache no
// longer holds the window before c, or a recurrent or hybrid one (Mamba,
// the gated DeltaNet hybrids), whose state is only the one after the last
// token. The rules, as llama.cpp build 11669 applies them:
//
//   - A pure append (the prompt starts with everything the slot holds,
//     the reply it generated included) is reused to the token, whatever
//     the model.
//   - A recurrent model restarts at the newest checkpoint at or before c,
//     else at 0.
//   - A sliding-window model of window w restarts at c when c is at most
//     w tokens before the end of the slot's previous prompt; otherwise
//     as a recurrent model does. (llama-server's --swa-full makes it
//     dense: pick CacheDense.)
//   - While it processes a prompt of n tokens from token r, the slot
//     takes checkpoints at r (when it is not 0), n−4−ubatch and n−4, each
//     only when it is at or after r; a request that restarts at r drops
//     those after r first. It keeps at most Checkpoints of them: a full
//     slot drops the oldest that stands within MinStep of the one before
//     it, else the oldest, so the first ones outlive a run of small
//     appends. A sliding-window model resumes one token before the
//     checkpoint it restores.
//
// contextwin's planner (contextwin/cache.go) models the same rules from
// the client's side; the two are kept alike by hand, since the simulator
// imports nothing of ours.

// CacheKind is the model behind a llama.cpp slot, as its cache sees it.
type CacheKind string

const (
	// CacheDense keeps any common prefix (full attention).
	CacheDense CacheKind = "dense"
	// CacheSWA is a sliding-window model: dense within its window of the
	// previous prompt's end, checkpointed before it.
	CacheSWA CacheKind = "swa"
	// CacheRecurrent is a recurrent or hybrid model: only checkpoints. On
	// the vLLM flavour (a hybrid model, Qwen3.5's gated DeltaNet, under
	// --mamba-cache-mode align), the recurrent state is kept only at the
	// last block boundary of each prompt: a pure append re-prefills up to
	// a block, a change restarts at the last such boundary before it.
	CacheRecurrent CacheKind = "recurrent"
)

// ParseCacheKind accepts a kind's name; "" is CacheDense.
func ParseCacheKind(s string) (CacheKind, error) {
	switch k := CacheKind(strings.ToLower(strings.TrimSpace(s))); k {
	case "":
		return CacheDense, nil
	case CacheDense, CacheSWA, CacheRecurrent:
		return k, nil
	}
	return "", fmt.Errorf("unknown cache %q: want dense, swa or recurrent", s)
}

// Defaults used where a CacheModel field is left zero.
const (
	// DefaultSWAWindow is Gemma 3's sliding window (gpt-oss's is 128).
	DefaultSWAWindow   = 1024
	DefaultCheckpoints = 32   // llama-server --ctx-checkpoints
	DefaultMinStep     = 8192 // llama-server --checkpoint-min-step
	DefaultUbatch      = 512  // llama-server --ubatch-size
	DefaultBlock       = 16   // vLLM --block-size
	// DefaultHybridBlock is the block vLLM takes for a hybrid model: it
	// grows the block until a block's attention pages match the recurrent
	// state's page (528 to 2048 tokens by model; this is a middle one).
	DefaultHybridBlock = 1024
)

// checkpointBack is how far before a prompt's end llama.cpp takes its
// last checkpoint.
const checkpointBack = 4

// CacheModel is how the engine's prompt cache reuses a changed prompt.
// Kind, Window, Checkpoints and Ubatch are llama.cpp's (Ollama's slots
// stay dense); Block is vLLM's.
type CacheModel struct {
	// Kind is the model's kind; empty means CacheDense.
	Kind CacheKind
	// Window is a CacheSWA model's sliding window in tokens; 0 means
	// DefaultSWAWindow.
	Window int
	// Checkpoints is the most context checkpoints a slot keeps; 0 means
	// DefaultCheckpoints.
	Checkpoints int
	// MinStep is how close two checkpoints may stand before a full slot
	// drops the newer (--checkpoint-min-step); 0 means DefaultMinStep.
	MinStep int
	// Ubatch is the micro-batch in tokens, which places the earlier of a
	// prompt's two checkpoints; 0 means DefaultUbatch.
	Ubatch int
	// Block is the size of vLLM's cache blocks in tokens; 0 means
	// DefaultBlock.
	Block int
	// KVTokens is the size of vLLM's KV cache in tokens (what
	// --gpu-memory-utilization leaves it: vLLM logs it as "GPU KV cache
	// size"); the least recently used sequences are evicted beyond it. 0
	// bounds it only by the sequences kept.
	KVTokens int
}

func (m CacheModel) withDefaults() (CacheModel, error) {
	var err error
	if m.Kind, err = ParseCacheKind(string(m.Kind)); err != nil {
		return m, err
	}
	if m.Window < 0 || m.Checkpoints < 0 || m.Ubatch < 0 || m.Block < 0 || m.KVTokens < 0 {
		return m, fmt.Errorf("cache window, checkpoints, ubatch and block must not be negative")
	}
	if m.Kind == CacheSWA && m.Window == 0 {
		m.Window = DefaultSWAWindow
	}
	if m.Checkpoints == 0 {
		m.Checkpoints = DefaultCheckpoints
	}
	if m.MinStep <= 0 {
		m.MinStep = DefaultMinStep
	}
	if m.Ubatch == 0 {
		m.Ubatch = DefaultUbatch
	}
	if m.Block == 0 {
		m.Block = DefaultBlock
	}
	return m, nil
}

// String names the model as the simulator's banner does.
func (m CacheModel) String() string {
	switch m.Kind {
	case CacheSWA:
		return fmt.Sprintf("swa (window %d, %d checkpoints, ubatch %d)", m.Window, m.Checkpoints, m.Ubatch)
	case CacheRecurrent:
		return fmt.Sprintf("recurrent (%d checkpoints, ubatch %d)", m.Checkpoints, m.Ubatch)
	}
	return string(CacheDense)
}

// Restart says where a request's prefill started against the first token
// its prompt changed at.
type Restart string

const (
	// RestartAtChange is a prefill from the first changed token: a dense
	// cache, an append, a change within a sliding window, or a checkpoint
	// right at the change.
	RestartAtChange Restart = ""
	// RestartCheckpoint is a prefill from a checkpoint before the change.
	RestartCheckpoint Restart = "ckpt"
	// RestartZero is a prefill from token 0 although the prompt shared
	// tokens with the cache: no checkpoint served the change.
	RestartZero Restart = "0"
)

// slotCache is what a llama.cpp slot holds: the tokens in its cache (its
// last prompt and what it generated after it), where that prompt ended,
// and its checkpoints' positions, oldest first.
type slotCache struct {
	tokens    []string
	promptEnd int
	points    []int
}

// restart is where the slot starts prefilling a prompt whose first common
// tokens match what c holds (common is already at most all but one of
// the prompt's tokens), and how that point was reached.
func (m CacheModel) restart(c slotCache, common int) (int, Restart) {
	if m.Kind == CacheDense || common >= len(c.tokens) {
		return common, RestartAtChange
	}
	if m.Kind == CacheSWA && c.promptEnd-common <= m.Window {
		return common, RestartAtChange
	}
	for i := len(c.points) - 1; i >= 0; i-- {
		if p := c.points[i]; p <= common {
			if m.Kind == CacheSWA && p > 0 {
				p-- // the window's cells are restored up to the token before
			}
			if p == common {
				return p, RestartAtChange
			}
			return p, RestartCheckpoint
		}
	}
	if common == 0 {
		return 0, RestartAtChange
	}
	return 0, RestartZero
}

// processed is c's checkpoints after the slot prefilled a prompt of n
// tokens from token from: those after from are gone, and the prompt's own
// are taken (for a model that needs them), the oldest dropped past the
// limit.
func (m CacheModel) processed(points []int, from, n int) []int {
	keep := make([]int, 0, len(points)+2)
	for _, p := range points {
		if p <= from {
			keep = append(keep, p)
		}
	}
	if m.Kind == CacheDense {
		return nil
	}
	for _, at := range []int{from, n - checkpointBack - m.Ubatch, n - checkpointBack} {
		if at >= from && at > 0 && at < n && (len(keep) == 0 || keep[len(keep)-1] < at) {
			keep = append(keep, at)
		}
	}
	for len(keep) > m.Checkpoints {
		i := 1
		for i < len(keep) && keep[i]-keep[i-1] >= m.MinStep {
			i++
		}
		if i == len(keep) {
			i = 0 // none stands too close: the oldest goes
		}
		keep = append(keep[:i], keep[i+1:]...)
	}
	return keep
}

// Engines are the names ParseEngine accepts, as the commands' --engine
// lists them.
const Engines = "dense, swa, recurrent, vllm or vllm-hybrid"

// VLLMHybrid is the --engine name of vLLM serving a hybrid model
// (CacheRecurrent on the vLLM flavour).
const VLLMHybrid = "vllm-hybrid"

// ParseEngine reads an engine as the commands name it: "dense", "swa" or
// "recurrent" is llama.cpp serving a model of that kind, "vllm" is vLLM
// with its block cache, "vllm-hybrid" vLLM serving a hybrid model (its
// recurrent state cached at the last block boundary of each prompt); ""
// is dense.
func ParseEngine(s string) (Flavor, CacheKind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case string(VLLM):
		return VLLM, CacheDense, nil
	case VLLMHybrid:
		return VLLM, CacheRecurrent, nil
	}
	k, err := ParseCacheKind(s)
	if err != nil {
		return "", "", fmt.Errorf("unknown engine %q: want %s", s, Engines)
	}
	return LlamaCpp, k, nil
}
