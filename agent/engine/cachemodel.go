package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// The cache model (contextwin.CacheModel) is how the engine reuses its
// prompt cache for the model it serves. What each engine tells of it is
// in doc.go; the planner corrects it from the engine's cache_n figures,
// so a wrong guess here costs a few requests, not the session.

// recurrentArchs are the architectures (general.architecture) whose
// layers keep a recurrent state, alone or beside attention: llama.cpp
// cannot roll their state back to an arbitrary token. A model is also
// taken as recurrent when its metadata has {arch}.ssm.*, {arch}.wkv.* or
// {arch}.shortconv.* keys, so a new hybrid is found without this list.
var recurrentArchs = map[string]bool{
	"mamba": true, "mamba2": true, "rwkv6": true, "rwkv6qwen2": true, "rwkv7": true, "arwkv7": true,
	"jamba": true, "falcon-h1": true, "nemotron_h": true, "nemotron_h_moe": true, "granitehybrid": true,
	"lfm2": true, "lfm2moe": true, "qwen3next": true, "qwen35": true, "qwen35moe": true, "plamo2": true,
	"kimi-linear": true,
}

// recurrentKeys are the key infixes of recurrent layers' figures.
var recurrentKeys = []string{".ssm.", ".wkv.", ".shortconv."}

// swaPeriods are llama.cpp's sliding-window layer patterns for the
// architectures it runs with a sliding window, where the GGUF does not
// give {arch}.attention.sliding_window_pattern: in each run of p layers
// the first p−1 slide and the last attends to everything.
var swaPeriods = map[string]int{"gemma2": 2, "gemma3": 6, "gemma3n": 5, "cohere2": 4, "gpt-oss": 2}

// swaIgnored are architectures whose GGUF may carry a sliding window that
// llama.cpp does not use (it runs Phi-3 with full attention).
var swaIgnored = map[string]bool{"phi3": true}

// modelClass is what a model's metadata says of its cache.
type modelClass struct {
	arch  string
	model contextwin.CacheModel
	// what names the evidence: "sliding window 1024", "ssm keys", "no
	// sliding window or recurrent layers".
	what string
}

// classify reads a model's class from its metadata; ok is false when the
// metadata has no architecture.
func classify(m modelMeta) (modelClass, bool) {
	arch := m.str("general.architecture")
	if arch == "" {
		return modelClass{}, false
	}
	c := modelClass{arch: arch}
	for key := range m {
		for _, infix := range recurrentKeys {
			if strings.HasPrefix(key, arch+infix) {
				c.model = contextwin.CacheModel{Class: contextwin.CacheCheckpointed}
				c.what = "recurrent layers (" + arch + infix + "*)"
				return c, true
			}
		}
	}
	if recurrentArchs[arch] {
		c.model = contextwin.CacheModel{Class: contextwin.CacheCheckpointed}
		c.what = "recurrent layers (architecture " + arch + ")"
		return c, true
	}
	if w, ok := m.num(arch + ".attention.sliding_window"); ok && w > 0 && !swaIgnored[arch] {
		c.model = contextwin.CacheModel{Class: contextwin.CacheCheckpointed, SWA: int(min(w, contextwin.MaxWindow))}
		c.what = fmt.Sprintf("sliding window %d", w)
		return c, true
	}
	c.model = contextwin.CacheModel{Class: contextwin.CacheDense}
	c.what = "no sliding window or recurrent layers"
	return c, true
}

// swaFullBytes estimates how much more memory llama-server's --swa-full
// takes for a sliding-window model than its default, for slots slots of
// nCtx tokens each and an f16 cache. Without --swa-full a sliding layer
// keeps min(nCtx, window + ubatch) cells per slot; with it, nCtx. Each
// cell of a layer il holds a key and a value per KV head:
//
//	extra = slots × (nCtx − min(nCtx, window + ubatch))
//	        × Σ over sliding layers il of head_count_kv(il) × (key_length + value_length) × 2 bytes
//
// key_length and value_length default to embedding_length / head_count
// (the _swa variants win when given). 0 when the metadata lacks a figure
// or the layer pattern is not known. llama.cpp pads the cell counts; the
// estimate does not.
func swaFullBytes(m modelMeta, arch string, window, nCtx, slots int) int64 {
	if window <= 0 || nCtx <= 0 {
		return 0
	}
	extra := int64(nCtx - min(nCtx, window+contextwin.DefaultUbatch))
	if extra == 0 {
		return 0
	}
	blocks, ok := m.num(arch + ".block_count")
	if !ok || blocks <= 0 || blocks > 4096 {
		return 0
	}
	n := int(blocks)
	sliding := slidingLayers(m, arch, n)
	if sliding == nil {
		return 0
	}
	kv, ok := m.perLayer(arch+".attention.head_count_kv", n)
	if !ok {
		// llama.cpp's default: as many KV heads as heads.
		kv, ok = m.perLayer(arch+".attention.head_count", n)
	}
	if !ok {
		return 0
	}
	length := func(name string) int64 {
		for _, key := range []string{arch + ".attention." + name + "_swa", arch + ".attention." + name} {
			if v, ok := m.num(key); ok && v > 0 {
				return v
			}
		}
		embd, ok1 := m.num(arch + ".embedding_length")
		heads, ok2 := m.num(arch + ".attention.head_count")
		if ok1 && ok2 && heads > 0 {
			return embd / heads
		}
		return 0
	}
	k, v := length("key_length"), length("value_length")
	if k == 0 || v == 0 {
		return 0
	}
	var perCell int64
	for il, swa := range sliding {
		if swa {
			perCell += kv[il] * (k + v) * 2
		}
	}
	return int64(max(slots, 1)) * extra * perCell
}

// slidingLayers says which of n layers slide: from
// {arch}.attention.sliding_window_pattern (a period, or one flag per
// layer), else from the architecture's known period; nil when unknown.
func slidingLayers(m modelMeta, arch string, n int) []bool {
	out := make([]bool, n)
	period := int64(swaPeriods[arch])
	switch v := m[arch+".attention.sliding_window_pattern"].(type) {
	case bool: // one flag for every layer
		for il := range out {
			out[il] = v
		}
		return out
	case int64:
		period = v
	case []int64:
		if len(v) == 0 {
			return nil
		}
		for il := range out {
			out[il] = v[il%len(v)] != 0
		}
		return out
	default:
		if period == 0 {
			return nil
		}
	}
	for il := range out {
		// llama.cpp's set_swa_pattern: period 0 slides every layer.
		out[il] = period == 0 || int64(il)%period < period-1
	}
	return out
}

// The sources of a cache model.
var (
	sourceCacheUnknown  = Source{"cache-unknown", "the engine tells nothing of its model's class"}
	sourceVLLMDefault   = Source{"vllm-default-block-size", "vLLM's default block size (its /metrics did not give block_size)"}
	sourceVLLMMetrics   = Source{"vllm-metrics-block-size", "vLLM /metrics cache_config_info block_size"}
	sourceSGLangDefault = Source{"sglang-default-page-size", "SGLang's default page size, 1 (its /get_server_info did not give page_size)"}
	sourceSGLangInfo    = Source{"sglang-server-info-page-size", "SGLang /get_server_info page_size"}
)

// ggufSource names the GGUF header a class was read from.
func ggufSource(path string, c modelClass) Source {
	return Source{"llamacpp-gguf-header", fmt.Sprintf("the GGUF header of llama.cpp /props model_path %s (%s: %s)", filepath.Base(path), c.arch, c.what)}
}

func ollamaSource(c modelClass) Source {
	return Source{"ollama-show-model-info", fmt.Sprintf("Ollama /api/show model_info (%s: %s)", c.arch, c.what)}
}

// llamaCache reads the class of the model llama-server serves from the
// GGUF header of /props model_path, when that is an absolute path to a
// readable file on this machine (the same machine, or a shared mount). A
// relative path is the server's own working directory's, which Reika does
// not know. The header does not tell whether the server runs with
// --swa-full, nor does /props (build 11669): an SWA model is taken as
// checkpointed, and the cache_n figures correct that.
func llamaCache(path string, window, slots int, out *Discovery) {
	switch {
	case path == "":
		out.EngineCacheSource = Source{sourceCacheUnknown.ID, "llama.cpp /props gives no model_path"}
		return
	case !filepath.IsAbs(path):
		out.EngineCacheSource = Source{sourceCacheUnknown.ID, fmt.Sprintf("llama.cpp /props model_path %q is relative to the server's directory", path)}
		return
	}
	meta, err := readGGUFFile(path)
	if err != nil {
		out.EngineCacheSource = Source{sourceCacheUnknown.ID, fmt.Sprintf("the model's GGUF header could not be read (%v)", err)}
		return
	}
	c, ok := classify(meta)
	if !ok {
		out.EngineCacheSource = Source{sourceCacheUnknown.ID, fmt.Sprintf("the GGUF header of %s names no architecture", filepath.Base(path))}
		return
	}
	out.Architecture = c.arch
	out.EngineCache, out.EngineCacheSource = c.model, ggufSource(path, c)
	if c.model.SWA > 0 {
		out.SWAFullMiB = int((swaFullBytes(meta, c.arch, c.model.SWA, window, slots) + 1<<20 - 1) >> 20)
	}
}

// ollamaCache reads the class from /api/show model_info, which holds the
// GGUF's keys (numbers as JSON numbers) without the vocabulary.
func ollamaCache(info map[string]any, out *Discovery) {
	meta := modelMeta{}
	for k, v := range info {
		switch v := v.(type) {
		case string, bool:
			meta[k] = v
		case float64:
			if v == float64(int64(v)) {
				meta[k] = int64(v)
			}
		case []any:
			var ints []int64
			for _, e := range v {
				switch e := e.(type) {
				case float64:
					ints = append(ints, int64(e))
				case bool:
					ints = append(ints, map[bool]int64{true: 1}[e])
				}
			}
			if len(ints) == len(v) {
				meta[k] = ints
			}
		}
	}
	c, ok := classify(meta)
	if !ok {
		out.EngineCacheSource = Source{sourceCacheUnknown.ID, "Ollama /api/show names no architecture"}
		return
	}
	out.Architecture = c.arch
	out.EngineCache, out.EngineCacheSource = c.model, ollamaSource(c)
}

// blockSizeRE finds vLLM's block size among the labels of its
// cache_config_info gauge.
var blockSizeRE = regexp.MustCompile(`(?m)^vllm:cache_config_info\{[^}]*\bblock_size="(\d+)"`)

// vllmCache takes the block size from vLLM's /metrics (served at the
// root, beside /v1), else vLLM's default.
func (d *discoverer) vllmCache(ctx context.Context, base string, out *Discovery) {
	out.EngineCache = contextwin.CacheModel{Class: contextwin.CacheBlocks, Block: contextwin.DefaultBlock}
	out.EngineCacheSource = sourceVLLMDefault
	if n := d.vllmBlockSize(ctx, rootOf(base)+"/metrics"); n > 0 {
		out.EngineCache.Block, out.EngineCacheSource = n, sourceVLLMMetrics
	}
}

// maxMetricsBody bounds what /metrics may return.
const maxMetricsBody = 4 << 20

// vllmBlockSize is the block_size label of /metrics, 0 when it is not
// there; any failure is "not there".
func (d *discoverer) vllmBlockSize(ctx context.Context, url string) int {
	ctx, cancel := context.WithTimeout(ctx, d.t.Probe)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	if d.opts.APIKey != "" && hostOf(url) == hostOf(d.opts.BaseURL) {
		req.Header.Set("Authorization", "Bearer "+d.opts.APIKey)
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxMetricsBody))
	m := blockSizeRE.FindSubmatch(data)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(string(m[1]))
	if err != nil || n <= 0 || n > 1<<16 {
		return 0
	}
	return n
}

// sglangCache takes the page size of SGLang's radix cache from
// /get_server_info: a page of 1 token (its default) keeps any common
// prefix, a larger one whole pages.
func (d *discoverer) sglangCache(ctx context.Context, base string, out *Discovery) {
	out.EngineCache, out.EngineCacheSource = contextwin.CacheModel{Class: contextwin.CacheDense}, sourceSGLangDefault
	var info struct {
		PageSize int `json:"page_size"`
	}
	if d.getJSON(ctx, rootOf(base)+"/get_server_info", "GET /get_server_info", &info) != nil || info.PageSize <= 0 || info.PageSize > 1<<16 {
		return
	}
	out.EngineCacheSource = sourceSGLangInfo
	if info.PageSize > 1 {
		out.EngineCache = contextwin.CacheModel{Class: contextwin.CacheBlocks, Block: info.PageSize}
	}
}

// checkpointAdvice is how to start llama-server so that its checkpoints
// stand across the whole window, a 32nd of it apart, and to tell Reika
// so; or, when the settings told the step, what it is.
func (d *Discovery) checkpointAdvice() string {
	if m := d.Cache.MinStep; m > 0 && m != contextwin.DefaultMinStep {
		return fmt.Sprintf("a full slot (--ctx-checkpoints, default %d) keeps its old checkpoints %d tokens apart (checkpoint_min_step, as llama-server's --checkpoint-min-step must be)",
			contextwin.DefaultCheckpoints, m)
	}
	step := 1024
	if d.Window > 0 {
		step = max(d.Window/contextwin.DefaultCheckpoints, 256)
	}
	return fmt.Sprintf("a full slot (--ctx-checkpoints, default %d) keeps its old checkpoints --checkpoint-min-step apart (default %d): "+
		"start llama-server with --checkpoint-min-step %d so that one stands every %d tokens of the window, and set REIKA_CHECKPOINT_MIN_STEP=%d (checkpoint_min_step) to tell Reika; or --ctx-checkpoints N for more",
		contextwin.DefaultCheckpoints, contextwin.DefaultMinStep, step, step, step)
}

// CacheAdvice says what the cache model costs a change to the prompt and
// what would make it cheaper, for check's report and the status line.
func (d *Discovery) CacheAdvice() string {
	m := d.Cache
	switch m.Class {
	case contextwin.CacheDense:
		return "any common prefix is kept: a change re-prefills from the first changed token"
	case contextwin.CacheBlocks:
		block := m.Block
		if block <= 0 {
			block = contextwin.DefaultBlock
		}
		s := fmt.Sprintf("whole blocks of %d tokens are kept: a change re-prefills from the start of its block", block)
		if d.Flavor == VLLM {
			s += "; " + hybridHint
		}
		return s
	case contextwin.CacheBoundary:
		return boundaryAdvice(m.Block)
	case contextwin.CacheCheckpointed:
		switch {
		case m.SWA > 0 && d.Flavor == LlamaCpp:
			s := fmt.Sprintf("SWA model (window %d): a change more than %d tokens before the prompt's end restarts from a context checkpoint, or from the start; "+
				"--swa-full keeps any prefix", m.SWA, m.SWA)
			if d.SWAFullMiB > 0 {
				s += fmt.Sprintf(", at about %d MiB more", d.SWAFullMiB)
			}
			return s + " (if llama-server already runs with it, set cache_class dense); else " + d.checkpointAdvice()
		case m.SWA > 0 && d.Flavor == Ollama:
			return fmt.Sprintf("SWA model (window %d): Ollama keeps its cache for a change within the last %d tokens; an earlier change re-prefills from the start", m.SWA, m.SWA)
		case m.SWA > 0:
			return fmt.Sprintf("SWA model (window %d): a change more than %d tokens before the prompt's end restarts from a checkpoint, or from the start", m.SWA, m.SWA)
		case d.Flavor == LlamaCpp:
			return "recurrent/hybrid model: each change restarts from a checkpoint, or from the start; " + d.checkpointAdvice()
		}
		return "recurrent/hybrid model: each change restarts from a checkpoint, or from the start"
	}
	return "not known: priced as dense until the engine's cache_n figures say otherwise"
}

// hybridHint is what check tells of a vLLM engine whose model it cannot
// see: a hybrid one keeps less than its blocks.
const hybridHint = "if the model is a hybrid (Qwen3.5, Nemotron-H, Granite 4 hybrid: recurrent layers beside attention), vLLM keeps its state only " +
	"at the last block boundary of each prompt: set cache_class boundary (REIKA_CACHE_CLASS) and cache_block to the attention block size vLLM logs at start " +
	"(\"Setting attention block size to N tokens\"), or let Reika learn both from cached_tokens (vLLM reports them with --enable-prompt-tokens-details)"

// boundaryAdvice is check's advice for an engine that keeps a prompt's
// state only at its last block boundary: vLLM serving a hybrid model.
func boundaryAdvice(block int) string {
	if block <= 0 {
		block = contextwin.DefaultBoundaryBlock
	}
	return fmt.Sprintf("hybrid model on vLLM (--mamba-cache-mode align): the recurrent state is kept only at the last boundary of blocks of %d tokens of each prompt, "+
		"so every request re-prefills from up to a block before the last prompt's end (about %d tokens a request) and a change from the newest kept boundary before it; "+
		"vLLM picks the block from the model's state size and logs it at start (\"Setting attention block size to N tokens\"): "+
		"set cache_block (REIKA_CACHE_BLOCK) to that N if it is not %d, or let Reika learn it from cached_tokens (--enable-prompt-tokens-details); "+
		"llama.cpp serving the same model reuses an append to the token", block, block/2, block)
}
