package sim

import (
	"context"
	"sync"
)

// hold is the prompt cache held by one request: a llama.cpp slot, or a
// place in vLLM's shared block cache.
type hold struct {
	slot   int // slot id; -1 for the shared cache
	cacheN int // prompt tokens reused from the cache
	// common is how many of the prompt's tokens the cache held before the
	// first that differs (at most all but one); restart says whether the
	// prefill started before it, and how far back.
	common  int
	restart Restart
	// done records what the request left in the cache: its prompt plus the
	// tokens it generated. It must be called exactly once.
	done func(tokens []string, decoded int)
}

// cacheFor reuses what it can of prompt's prefix. wantSlot is the
// request's id_slot, or -1; reuse false (cache_prompt:false) reports no
// reuse but still leaves the prompt in the cache.
type promptCache interface {
	acquire(ctx context.Context, prompt []string, wantSlot int, reuse bool) (hold, error)
}

// slot is one llama.cpp slot: what its cache holds, and the figures of
// its last task for /slots.
type slot struct {
	id int
	slotCache
	busy     bool
	lastUsed uint64
	used     bool
	task     int
	nPrompt  int
	nCache   int
	nDecoded int
}

// slotPool is llama.cpp's set of slots. A request goes to the slot its
// id_slot names, else to the idle slot whose remembered tokens share the
// longest prefix with its prompt (if that prefix is at least a tenth of
// the prompt), else to the least recently used idle slot; when none is
// idle it waits. The reused part is that prefix but at most n-1
// tokens (llama.cpp always evaluates at least one token), or less where
// the model's cache cannot roll back to it (model, cache.go).
type slotPool struct {
	model CacheModel
	mu    sync.Mutex
	slots []*slot
	freed chan struct{} // closed and replaced whenever a slot frees up
	clock uint64
	tasks int
}

func newSlotPool(n int, m CacheModel) *slotPool {
	p := &slotPool{model: m, freed: make(chan struct{})}
	for i := range n {
		p.slots = append(p.slots, &slot{id: i})
	}
	return p
}

func (p *slotPool) acquire(ctx context.Context, prompt []string, wantSlot int, reuse bool) (hold, error) {
	for {
		p.mu.Lock()
		s := p.pick(prompt, wantSlot)
		if s != nil {
			common := 0
			if reuse {
				common = max(min(commonPrefix(s.tokens, prompt), len(prompt)-1), 0)
			}
			cacheN, restart := p.model.restart(s.slotCache, common)
			p.tasks++
			s.busy, s.used = true, true
			s.task = p.tasks
			s.points = p.model.processed(s.points, cacheN, len(prompt))
			s.tokens, s.promptEnd = prompt, len(prompt)
			s.nPrompt, s.nCache, s.nDecoded = len(prompt), cacheN, 0
			p.mu.Unlock()
			return hold{slot: s.id, cacheN: cacheN, common: common, restart: restart, done: func(tokens []string, decoded int) {
				p.release(s, tokens, decoded)
			}}, nil
		}
		freed := p.freed
		p.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return hold{}, ctx.Err()
		}
	}
}

// minSimilarity is llama.cpp's slot_prompt_similarity: a slot is chosen
// for its cache only when the shared prefix is at least this fraction of
// the prompt; otherwise the least recently used idle slot is taken.
const minSimilarity = 0.1

// pick chooses an idle slot for prompt, or nil. p.mu is held.
func (p *slotPool) pick(prompt []string, wantSlot int) *slot {
	if wantSlot >= 0 && wantSlot < len(p.slots) {
		if s := p.slots[wantSlot]; !s.busy {
			return s
		}
		return nil
	}
	var best, lru *slot
	bestLCP := 0
	for _, s := range p.slots {
		if s.busy {
			continue
		}
		if lru == nil || s.lastUsed < lru.lastUsed {
			lru = s
		}
		lcp := commonPrefix(s.tokens, prompt)
		if float64(lcp) >= minSimilarity*float64(len(prompt)) && lcp > bestLCP {
			best, bestLCP = s, lcp
		}
	}
	if best != nil {
		return best
	}
	return lru
}

func (p *slotPool) release(s *slot, tokens []string, decoded int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clock++
	s.tokens = tokens
	s.busy = false
	s.lastUsed = p.clock
	s.nDecoded = decoded
	close(p.freed)
	p.freed = make(chan struct{})
}

// slotState is a snapshot of one slot for /slots.
type slotState struct {
	id, task, nPrompt, nCache, nDecoded int
	busy, used                          bool
}

func (p *slotPool) snapshot() []slotState {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]slotState, len(p.slots))
	for i, s := range p.slots {
		out[i] = slotState{id: s.id, task: s.task, nPrompt: s.nPrompt, nCache: s.nCache,
			nDecoded: s.nDecoded, busy: s.busy, used: s.used}
	}
	return out
}

// maxSharedSeqs is how many recent sequences the shared cache remembers.
const maxSharedSeqs = 32

// sharedCache is vLLM's prefix cache: shared by all requests, in whole
// blocks of block tokens, with no waiting (vLLM batches every request at
// once). A prompt that is entirely cached still recomputes its last
// block. A hybrid model's (hybrid) keeps its recurrent state only at the
// last block boundary of each prompt it processed: a later prompt reuses
// the longest such boundary it reaches.
type sharedCache struct {
	block int
	// budget is the KV cache's size in tokens (Config.KVTokens), 0 for
	// no bound but maxSharedSeqs: the sequences least recently used are
	// evicted until the rest fit.
	budget int
	hybrid bool
	mu     sync.Mutex
	seqs   []sharedSeq // least recently used first
}

// sharedSeq is a sequence the cache holds, and the last block boundary of
// its prompt (where a hybrid model's state is kept).
type sharedSeq struct {
	tokens   []string
	boundary int
}

func (c *sharedCache) acquire(_ context.Context, prompt []string, _ int, reuse bool) (hold, error) {
	c.mu.Lock()
	lcp, best, state := 0, -1, 0
	for i, s := range c.seqs {
		n := commonPrefix(s.tokens, prompt)
		if n > lcp {
			lcp, best = n, i
		}
		if s.boundary <= n {
			state = max(state, s.boundary)
		}
	}
	if best >= 0 {
		// Used now: the last to go.
		c.seqs = append(append(c.seqs[:best:best], c.seqs[best+1:]...), c.seqs[best])
	}
	c.mu.Unlock()
	cacheN, common := 0, 0
	if reuse {
		common = max(min(lcp, len(prompt)-1), 0)
		cacheN = common / c.block * c.block
		if c.hybrid {
			cacheN = min(state, common/c.block*c.block)
		}
	}
	boundary := len(prompt) / c.block * c.block
	return hold{slot: -1, cacheN: cacheN, common: common, done: func(tokens []string, _ int) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.keep(sharedSeq{tokens: tokens, boundary: boundary})
	}}, nil
}

// keep adds a sequence the engine processed, drops those it extends (a
// hybrid model's only where their boundary is its own: the state kept at
// another boundary stays reusable), and evicts the least recently used
// while there are more than maxSharedSeqs or they hold more than the
// budget.
func (c *sharedCache) keep(seq sharedSeq) {
	kept := c.seqs[:0]
	for _, s := range c.seqs {
		extended := len(s.tokens) <= len(seq.tokens) && commonPrefix(s.tokens, seq.tokens) == len(s.tokens)
		if !extended || c.hybrid && s.boundary != seq.boundary {
			kept = append(kept, s)
		}
	}
	c.seqs = append(kept, seq)
	for len(c.seqs) > maxSharedSeqs || c.budget > 0 && len(c.seqs) > 1 && c.held() > c.budget {
		c.seqs = c.seqs[1:]
	}
}

// held is how many tokens the kept sequences hold: each beyond what it
// shares with an earlier one (their common blocks are held once).
func (c *sharedCache) held() int {
	n := 0
	for i, s := range c.seqs {
		shared := 0
		for _, t := range c.seqs[:i] {
			shared = max(shared, commonPrefix(s.tokens, t.tokens))
		}
		n += len(s.tokens) - shared
	}
	return n
}
