package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/transcript"
)

// The model a session's requests name is the one the settings chose (or
// the engine's first) until the user switches to another the engine
// lists in /v1/models. A switch asks the engine about the new model as
// the start asked about the first — its window, output limit and cache
// (engine.Connection.Rediscover) — and the rest of the session is planned
// with them. It is a cache event: the engine holds nothing of the
// conversation for the new model, so the next request prefills all of
// it, and the planner, told, takes a fold due soon (in the new window) at
// that request rather than pay a second prefill later. The switch and
// what the planner took of the model are in the transcript: a resume
// keeps both, while the engine serves the model, and takes the window
// the engine gives it now where that changed.

// Models returns the model the session's requests name and the models
// the engine serves, in its order; both are empty for a session built
// without Start.
func (s *Session) Models() (current string, all []string) {
	if s.info == nil || s.info.Connection == nil || s.info.Connection.Discovery == nil {
		return "", nil
	}
	s.mu.Lock()
	current = s.model
	s.mu.Unlock()
	if current == "" {
		current = s.info.Connection.Options.Model
	}
	return current, slices.Clone(s.info.Connection.Discovery.Models)
}

// SetModel makes the session's requests name model, one the engine
// serves, from the next request on, and records it in the transcript.
// It asks the engine about the model first (engine.Connection.Rediscover):
// its window, output limit and cache, which the rest of the session is
// planned with. It returns what the user should be told of the switch:
// the new window, and what the switch costs. It refuses while a run is
// under way (ErrBusy), a model the engine does not list, and one the
// engine does not answer about (the model stays as it was).
func (s *Session) SetModel(ctx context.Context, model string) (string, error) {
	current, all := s.Models()
	if !slices.Contains(all, model) {
		return "", fmt.Errorf("the engine does not serve a model %q: it serves %v", model, all)
	}
	if model == current {
		return fmt.Sprintf("the model is already %s", model), nil
	}
	if !s.running.CompareAndSwap(false, true) {
		return "", ErrBusy
	}
	defer s.running.Store(false)
	d, err := s.info.Connection.Rediscover(ctx, model)
	if err != nil {
		return "", fmt.Errorf("the engine did not tell about the model %s (%v): the model stays %s", model, err, current)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	was := s.cw.Window()
	s.model, s.disc = model, d
	folds := s.switchPlanner(model, d)
	told := fmt.Sprintf("the model is now %s, %s", model, windowLine(d, was, s.cw.Window()))
	if s.prefix == nil {
		return told, nil
	}
	told += fmt.Sprintf(": the engine holds nothing of this conversation for it, so the next request prefills it all again (about %d tokens)", s.cw.Chip().Size)
	if folds {
		told += "; it folds the conversation first, as that is paid anyway"
	}
	return told, nil
}

// switchPlanner makes the planner plan for the model d describes (name
// "" for the configured one) and records it in the transcript; after the first request it
// is a cache event (contextwin's ModelChanged), whose fold it reports.
// The caller holds mu.
func (s *Session) switchPlanner(name string, d *engine.Discovery) bool {
	s.cw.SetModel(d.Window, d.OutputLimit, d.Cache)
	if s.tr != nil {
		s.tr.Append(transcript.Record{Kind: transcript.KindModel, Text: name, Model: transcript.NewModel(d.Window, d.OutputLimit, d.Cache)})
	}
	// The planner is told of the cache only once a request was planned:
	// a replay drives it only from the first prefix on (resume.go).
	return s.prefix != nil && s.cw.ModelChanged()
}

// windowLine says the window a switch plans in: the model's, where it
// came from and the cache, or that the engine gave none and the window
// planned in (was, kept as now) stays.
func windowLine(d *engine.Discovery, was, now int) string {
	if d.Window <= 0 {
		return fmt.Sprintf("for which the engine gives no window: the session keeps planning within %d tokens (set REIKA_CONTEXT_WINDOW to the model's context size if it is smaller)", now)
	}
	line := fmt.Sprintf("with a window of %d tokens (%s)", d.Window, d.WindowSource)
	if was > 0 && was != now {
		line += fmt.Sprintf(", was %d", was)
	}
	return line + ", prompt cache " + d.Cache.String()
}

// modelName is the model the session's requests name, "" for the
// client's own.
func (s *Session) modelName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// keepServedModel drops a resumed session's model when the engine no
// longer serves it, and says so: the planner goes back to the configured
// model's window and cache (d, the engine's answer at the start).
func (s *Session) keepServedModel(served []string, d *engine.Discovery) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.model == "" || slices.Contains(served, s.model) {
		return ""
	}
	was := s.model
	s.model = ""
	s.switchPlanner("", d)
	return fmt.Sprintf("the session last used the model %s, which the engine no longer serves: it goes on with the configured one", was)
}

// rediscoverResumed asks the engine about the model a resumed session
// had switched to, which it still serves, as SetModel did: its answer is
// the status line's and the images', and where its window is no longer
// the one planned in (the engine was started again with another), the
// rest of the session is planned in the new one, a cache event. It
// returns what the user should hear, "" for nothing.
func (s *Session) rediscoverResumed(ctx context.Context, conn *engine.Connection) string {
	name := s.modelName()
	if name == "" || name == conn.Options.Model {
		return ""
	}
	d, err := conn.Rediscover(ctx, name)
	if err != nil {
		return fmt.Sprintf("the engine did not tell about the model %s the session last used (%v): the session plans in the window it last had", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.disc = d
	if was := s.cw.Window(); d.Window > 0 && d.Window != was {
		s.switchPlanner(name, d)
		return fmt.Sprintf("the model %s the session last used has a window of %d tokens now (%s), was %d: the rest of the session is planned in it", name, d.Window, d.WindowSource, was)
	}
	return ""
}

// discovery is what the engine told of the model the session's requests
// name: at its start, or at the switch to it. The caller holds mu.
func (s *Session) discovery() *engine.Discovery {
	if s.disc != nil {
		return s.disc
	}
	return s.info.Connection.Discovery
}

// PromptCache is how the engine reuses its prompt cache for the model the
// session's requests name, as discovery found it or the settings forced
// it; the zero value for a session built without Start.
func (s *Session) PromptCache() PromptCache {
	if s.info == nil || s.info.Connection == nil || s.info.Connection.Discovery == nil {
		return PromptCache{}
	}
	s.mu.Lock()
	d := s.discovery()
	s.mu.Unlock()
	return promptCache(d)
}

// TakesImages reports whether the session's model takes pictures, as the
// engine told at the start (engine.Discovery.Images); when it does not,
// why says so in words for the user.
func (s *Session) TakesImages() (ok bool, why string) {
	if s.info == nil || s.info.Connection == nil || s.info.Connection.Discovery == nil {
		return false, "the engine did not say whether the model takes images"
	}
	s.mu.Lock()
	d := s.discovery()
	s.mu.Unlock()
	switch {
	case d.ImagesSource == "":
		return false, "the engine does not say whether the model takes images (llama.cpp and Ollama do)"
	case !d.Images:
		return false, fmt.Sprintf("the model does not take images (%s; llama.cpp takes them with the model's --mmproj)", d.ImagesSource)
	}
	return true, ""
}
