package agent

import (
	"fmt"
	"slices"

	"github.com/reika-lsp/reika/agent/transcript"
)

// The model a session's requests name is the one the settings chose (or
// the engine's first) until the user switches to another the engine
// lists in /v1/models. A switch is a cache event: the engine holds
// nothing of the conversation for the new model, so the next request
// prefills all of it, and the planner, told, takes a fold due soon at
// that request rather than pay a second prefill later. The switch is in
// the transcript: a resume keeps the model, while the engine serves it.

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
// It returns what the user should be told of the switch: what it costs.
// It refuses while a run is under way (ErrBusy), and a model the engine
// does not list.
func (s *Session) SetModel(model string) (string, error) {
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
	s.mu.Lock()
	defer s.mu.Unlock()
	s.model = model
	s.note(transcript.KindModel, model)
	if s.prefix == nil {
		return fmt.Sprintf("the model is now %s", model), nil
	}
	// The planner was told only once a request was planned: a replay
	// drives it only from the first prefix on (resume.go).
	folds := s.cw.ModelChanged()
	size := s.cw.Chip().Size
	if folds {
		return fmt.Sprintf("the model is now %s: the engine holds nothing of this conversation for it, so the next request prefills it all again (about %d tokens); it folds the conversation first, as that is paid anyway", model, size), nil
	}
	return fmt.Sprintf("the model is now %s: the engine holds nothing of this conversation for it, so the next request prefills it all again (about %d tokens)", model, size), nil
}

// modelName is the model the session's requests name, "" for the
// client's own.
func (s *Session) modelName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// keepServedModel drops a resumed session's model when the engine no
// longer serves it, and says so.
func (s *Session) keepServedModel(served []string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.model == "" || slices.Contains(served, s.model) {
		return ""
	}
	was := s.model
	s.model = ""
	return fmt.Sprintf("the session last used the model %s, which the engine no longer serves: it goes on with the configured one", was)
}

// TakesImages reports whether the session's model takes pictures, as the
// engine told at the start (engine.Discovery.Images); when it does not,
// why says so in words for the user.
func (s *Session) TakesImages() (ok bool, why string) {
	if s.info == nil || s.info.Connection == nil || s.info.Connection.Discovery == nil {
		return false, "the engine did not say whether the model takes images"
	}
	d := s.info.Connection.Discovery
	switch {
	case s.modelName() != "" && s.modelName() != s.info.Connection.Options.Model:
		return false, "the engine told whether the model the session started with takes images, not the one it switched to"
	case d.ImagesSource == "":
		return false, "the engine does not say whether the model takes images (llama.cpp and Ollama do)"
	case !d.Images:
		return false, fmt.Sprintf("the model does not take images (%s; llama.cpp takes them with the model's --mmproj)", d.ImagesSource)
	}
	return true, ""
}
