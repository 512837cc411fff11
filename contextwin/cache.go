package contextwin

import (
	"fmt"
	"strings"
)

// How an engine reuses its prompt cache when a request changes at token
// c of the one before. A dense model on llama.cpp (and Ollama) keeps any
// common prefix: it restarts at c. vLLM and SGLang keep whole blocks of
// the prefix: they restart at c rounded down to a block. A model whose
// state cannot be rolled back to an arbitrary token — sliding-window
// attention (Gemma 3, gpt-oss) or recurrent layers (Mamba, the gated
// DeltaNet hybrids) — restarts on llama.cpp from the newest context
// checkpoint at or before c, or from token 0.
//
// llama.cpp (build 11669) makes its checkpoints while it processes a
// prompt of n tokens, at n−4−n_ubatch and at n−4 (each only if the
// request processed that position), keeps at most --ctx-checkpoints of
// them per slot (the oldest go first), and drops those after the
// restart point of a request that changed. A checkpoint taken at p holds
// the recurrent state at p, or the sliding window's cells up to p: it
// serves a change at c ≥ p. With no checkpoint, an SWA model still keeps
// its cache for a change within its window of the previous prompt's end.

// CacheClass names how an engine reuses its prompt cache.
type CacheClass string

const (
	// CacheUnknown is an engine not yet known: priced as dense until its
	// figures say otherwise.
	CacheUnknown CacheClass = "unknown"
	// CacheDense keeps any common prefix.
	CacheDense CacheClass = "dense"
	// CacheCheckpointed restarts at the newest checkpoint at or before
	// the change.
	CacheCheckpointed CacheClass = "checkpointed"
	// CacheBlocks keeps whole blocks of the common prefix.
	CacheBlocks CacheClass = "blocks"
)

// ParseCacheClass accepts a class's name; "" is CacheUnknown.
func ParseCacheClass(s string) (CacheClass, error) {
	switch c := CacheClass(strings.ToLower(strings.TrimSpace(s))); c {
	case "":
		return CacheUnknown, nil
	case CacheUnknown, CacheDense, CacheCheckpointed, CacheBlocks:
		return c, nil
	}
	return "", fmt.Errorf("unknown cache class %q: want dense, checkpointed, blocks or unknown", s)
}

// Defaults of llama.cpp and vLLM where a CacheModel field is 0.
const (
	DefaultCheckpoints = 32  // llama.cpp --ctx-checkpoints
	DefaultUbatch      = 512 // llama.cpp --ubatch-size
	DefaultBlock       = 16  // vLLM --block-size
	// checkpointBack is how far before a prompt's end llama.cpp takes its
	// last checkpoint.
	checkpointBack = 4
)

// CacheModel is how one engine, serving one model, reuses its cache.
type CacheModel struct {
	Class CacheClass
	// SWA is a checkpointed model's sliding window in tokens; 0 for a
	// recurrent or hybrid one.
	SWA int
	// Checkpoints is the most checkpoints a slot keeps; 0 means
	// DefaultCheckpoints.
	Checkpoints int
	// Ubatch is the engine's micro-batch in tokens; 0 means DefaultUbatch.
	Ubatch int
	// Block is a block's size in tokens; 0 means DefaultBlock.
	Block int
}

func (m CacheModel) withDefaults() CacheModel {
	if m.Class == "" {
		m.Class = CacheUnknown
	}
	if m.Checkpoints <= 0 {
		m.Checkpoints = DefaultCheckpoints
	}
	if m.Ubatch <= 0 {
		m.Ubatch = DefaultUbatch
	}
	if m.Block <= 0 {
		m.Block = DefaultBlock
	}
	return m
}

// String names the model as check and the status line do.
func (m CacheModel) String() string {
	switch {
	case m.Class == CacheCheckpointed && m.SWA > 0:
		return fmt.Sprintf("checkpointed (sliding window %d)", m.SWA)
	case m.Class == CacheCheckpointed:
		return "checkpointed (recurrent or hybrid)"
	case m.Class == CacheBlocks && m.Block > 0:
		return fmt.Sprintf("blocks of %d", m.Block)
	case m.Class == "":
		return string(CacheUnknown)
	}
	return string(m.Class)
}

// checkpoint is one context checkpoint of the engine's slot: the state
// at token at.
type checkpoint struct {
	at int
}

// engineCache mirrors what the engine holds for the session: the last
// prompt it processed, in tokens, and its checkpoints, oldest first.
type engineCache struct {
	n      int
	points []checkpoint
}

// restart is where the engine starts prefilling a prompt that shares
// its first common tokens with the last one it processed.
func (m CacheModel) restart(c engineCache, common int) int {
	common = max(min(common, c.n), 0)
	switch m.Class {
	case CacheBlocks:
		return common / m.Block * m.Block
	case CacheCheckpointed:
		if common >= c.n || m.SWA > 0 && c.n-common <= m.SWA {
			return common
		}
		for i := len(c.points) - 1; i >= 0; i-- {
			if p := c.points[i].at; p <= common {
				return p
			}
		}
		return 0
	}
	return common
}

// processed records a prompt of n tokens the engine prefilled from
// token from: checkpoints after from are gone, and new ones are taken at
// n−4−ubatch and n−4.
func (m CacheModel) processed(c engineCache, from, n int) engineCache {
	keep := c.points[:0:0]
	for _, p := range c.points {
		if p.at <= from {
			keep = append(keep, p)
		}
	}
	if m.Class == CacheCheckpointed {
		for _, at := range []int{n - checkpointBack - m.Ubatch, n - checkpointBack} {
			if at >= from && at > 0 && (len(keep) == 0 || keep[len(keep)-1].at < at) {
				keep = append(keep, checkpoint{at: at})
			}
		}
		if over := len(keep) - m.Checkpoints; over > 0 {
			keep = keep[over:]
		}
	}
	return engineCache{n: n, points: keep}
}
