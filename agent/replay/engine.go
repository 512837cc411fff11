package replay

import (
	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/contextwin"
)

// Engine is the simulated engine a replay runs against: llama.cpp
// serving a dense, sliding-window or recurrent model, or vLLM with its
// block cache. The zero value is llama.cpp with a dense model, the
// engine of the README's table.
type Engine struct {
	Flavor sim.Flavor
	// Cache is the simulator's cache model: the kind of a llama.cpp
	// slot, its checkpoints; vLLM's block size.
	Cache sim.CacheModel
	// Reasoning, when set, is what the engine's chat template renders of
	// the reasoning sent back (sim.ReasoningTemplate): the engine serves
	// a thinking model, every recording without reasoning is given some
	// (Thinking), and ours is told the class as discovery finds it.
	// Empty, the recordings are replayed as they are on the simulator's
	// default template.
	Reasoning sim.ReasoningTemplate
	// Slots is llama.cpp's --parallel: 0 or 1, one slot, which a
	// subagent shares with the session; 2 and more, one of its own.
	Slots int
}

// ParseEngine reads an engine by the names of sim.ParseEngine: dense,
// swa, recurrent or vllm, with the simulator's defaults.
func ParseEngine(name string) (Engine, error) {
	f, k, err := sim.ParseEngine(name)
	if err != nil {
		return Engine{}, err
	}
	return Engine{Flavor: f, Cache: sim.CacheModel{Kind: k}}, nil
}

// String is the engine's name as ParseEngine reads it.
func (e Engine) String() string {
	if e.Flavor == sim.VLLM && e.Cache.Kind == sim.CacheRecurrent {
		return sim.VLLMHybrid
	}
	if e.Flavor == sim.VLLM {
		return string(sim.VLLM)
	}
	if e.Cache.Kind == "" {
		return string(sim.CacheDense)
	}
	return string(e.Cache.Kind)
}

// config is the simulator's configuration for a replay in window.
func (e Engine) config(window int) sim.Config {
	return sim.Config{Ctx: window, Slots: max(e.Slots, 1), Flavor: e.Flavor, Cache: e.Cache, ReasoningTemplate: e.Reasoning}
}

// clientFlavor is the flavour the meter's client speaks to the engine.
func (e Engine) clientFlavor() engine.Flavor {
	if e.Flavor == sim.VLLM {
		return engine.VLLM
	}
	return engine.LlamaCpp
}

// thinkingSeed draws the reasoning a replay gives a recording without any.
const thinkingSeed = 31

// recording is s as e replays it: with reasoning when e serves a
// thinking model.
func (e Engine) recording(s *Recording) *Recording {
	if e.Reasoning == "" {
		return s
	}
	return Thinking(s, thinkingSeed)
}

// discovered sets what the agent's discovery reads of a llama.cpp model
// from its GGUF header on the user's machine — a sliding window, or
// recurrent layers — for the simulated slot's model c; nil for a dense
// one, which the agent learns from the engine's figures.
func discovered(c sim.CacheModel) func(*config.Settings) {
	src := config.Source{Layer: config.Flag, Detail: "replay: what the model's GGUF header says"}
	switch c.Kind {
	case sim.CacheSWA:
		return func(st *config.Settings) {
			st.CacheClass = config.Value[string]{Value: string(contextwin.CacheCheckpointed), Source: src}
			st.SWAWindow = config.Value[int]{Value: c.Window, Source: src}
			minStep(st, c)
		}
	case sim.CacheRecurrent:
		return func(st *config.Settings) {
			st.CacheClass = config.Value[string]{Value: string(contextwin.CacheCheckpointed), Source: src}
			minStep(st, c)
		}
	}
	return nil
}

// told is what the agent is told of the engine beyond what it discovers:
// the model's class (discovered), and on vLLM, which does not show its
// chat template, what the template renders of the reasoning, as a user of
// a thinking model there sets reasoning_template. llama.cpp's /props tells
// it (chat_template_caps and the template's text).
func (e Engine) told() func(*config.Settings) {
	cache := discovered(e.Cache)
	if e.Flavor == sim.VLLM {
		// vLLM's discovery reads its block cache and cannot see a hybrid
		// model: nothing is told, and the planner learns the boundary
		// class from cached_tokens, as it does for a user who sets
		// nothing.
		cache = nil
	}
	if e.Reasoning == "" || e.Flavor != sim.VLLM {
		return cache
	}
	return func(st *config.Settings) {
		if cache != nil {
			cache(st)
		}
		st.ReasoningTemplate = config.Value[string]{Value: string(e.Reasoning),
			Source: config.Source{Layer: config.Flag, Detail: "replay --reasoning (vLLM does not show its template)"}}
	}
}

// minStep tells the agent the slot's --checkpoint-min-step when the
// replay starts the simulated llama-server with one, as check advises a
// user who does to (checkpoint_min_step).
func minStep(st *config.Settings, c sim.CacheModel) {
	if c.MinStep > 0 {
		st.CheckpointMinStep = config.Value[int]{Value: c.MinStep, Source: config.Source{Layer: config.Flag, Detail: "replay --checkpoint-min-step"}}
	}
}
