package sim

import (
	"fmt"
	"net/http"
)

// llama.cpp's router mode (Config.Router): one server in front of the
// models it loads, each in a child llama-server of its own. GET /v1/models
// lists every model with its status ({"value": "loaded", "args": […]}) and
// a running child's facts beside it; GET /props wants ?model=<id> and
// answers with that child's /props. A model put to sleep or unloaded
// drops its KV cache; the next chat request wakes it, and prefills the
// whole prompt.

// Statuses of a model behind the router.
const (
	ModelLoaded   = "loaded"
	ModelSleeping = "sleeping"
	ModelUnloaded = "unloaded"
)

// routerOther is a second model the simulated router lists, never loaded.
const routerOther = "reika-sim-other-q8_0"

// SetModelStatus puts the router's model to sleep (ModelSleeping),
// unloads it (ModelUnloaded) or loads it (ModelLoaded). Asleep or unloaded
// its slots lose their caches. Only a router (Config.Router) has one.
func (s *Server) SetModelStatus(status string) error {
	if !s.cfg.Router {
		return fmt.Errorf("the simulator is not a llama.cpp router")
	}
	switch status {
	case ModelLoaded, ModelSleeping, ModelUnloaded:
	default:
		return fmt.Errorf("model status %q: want loaded, sleeping or unloaded", status)
	}
	s.mu.Lock()
	s.modelStatus = status
	s.mu.Unlock()
	if status != ModelLoaded && s.slots != nil {
		s.slots.forget()
	}
	return nil
}

// ModelStatus is the router's model's status, ModelLoaded when the
// simulator is no router.
func (s *Server) ModelStatus() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.modelStatus == "" {
		return ModelLoaded
	}
	return s.modelStatus
}

// wake loads a sleeping or unloaded model for a chat request.
func (s *Server) wake() {
	if !s.cfg.Router {
		return
	}
	s.mu.Lock()
	s.modelStatus = ModelLoaded
	s.mu.Unlock()
}

// routerModels is the router's GET /v1/models: the model, with its
// status and, while its child runs (loaded or asleep), the child's
// n_ctx; and another model, unloaded.
func (s *Server) routerModels(w http.ResponseWriter, r *http.Request) {
	m, status := s.cfg.Model, s.ModelStatus()
	entry := obj{
		{"id", m}, {"aliases", []string{}}, {"tags", []string{}}, {"object", "model"}, {"owned_by", "llamacpp"},
		{"created", s.created}, {"status", obj{{"value", status}, {"args", []string{"llama-server", "--ctx-size", fmt.Sprint(s.cfg.Ctx)}}}},
		{"source", "models_dir"},
	}
	if status != ModelUnloaded {
		entry = append(entry, kv{"n_ctx", s.cfg.Ctx}, kv{"n_ctx_train", s.trainedCtx()})
	}
	other := obj{
		{"id", routerOther}, {"aliases", []string{}}, {"tags", []string{}}, {"object", "model"}, {"owned_by", "llamacpp"},
		{"created", s.created}, {"status", obj{{"value", ModelUnloaded}, {"args", []string{}}}}, {"source", "models_dir"},
	}
	s.writeJSON(w, http.StatusOK, obj{{"data", []any{entry, other}}, {"object", "list"}})
}

// routerProps is the router's GET /props?model=<id>: the model's child's
// /props; without a model, or for one it does not know, an error.
func (s *Server) routerProps(w http.ResponseWriter, r *http.Request) {
	s.forModel(s.llamaProps)(w, r)
}

// forModel is a GET endpoint of the router's model's child: it wants
// ?model=<id>.
func (s *Server) forModel(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.modelOnly(h, w, r)
	}
}

func (s *Server) modelOnly(h http.HandlerFunc, w http.ResponseWriter, r *http.Request) {
	switch name := r.URL.Query().Get("model"); name {
	case s.cfg.Model:
		h(w, r)
	case "":
		s.writeError(w, http.StatusBadRequest, "model name is missing from the request")
	default:
		s.writeError(w, http.StatusBadRequest, fmt.Sprintf("model '%s' not found", name))
	}
}

// forget drops every slot's cache, as a child put to sleep does.
func (p *slotPool) forget() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slots {
		s.slotCache = slotCache{}
	}
}
