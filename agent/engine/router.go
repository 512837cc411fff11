package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// llama.cpp's router mode (`llama-server` started without a model, or
// `llama serve`, with --models-dir or a preset file) runs one child
// llama-server per model it loads and proxies each request to the
// model's child by the request's "model". Its GET /v1/models lists every
// model it knows with a status; a running child's facts (its n_ctx) ride
// beside it, and GET /props?model=<id> is that child's /props. A child
// put to sleep (--sleep-idle-seconds) or unloaded (--models-max, or by
// hand) drops its KV cache: the next request prefills the whole prompt.

// The statuses of a model behind llama.cpp's router.
const (
	ModelLoaded   = "loaded"
	ModelLoading  = "loading"
	ModelSleeping = "sleeping"
	ModelUnloaded = "unloaded"
)

// CacheGone reports whether a model of this status holds no prompt cache:
// asleep or unloaded, its next request prefills everything.
func CacheGone(status string) bool { return status == ModelSleeping || status == ModelUnloaded }

// routerStatus is the entry's status under llama.cpp's router
// ({"value": "loaded", …}, or a bare string), "" for an entry without one
// (a single llama-server, any other engine) or for a nil entry.
func (m *modelEntry) routerStatus() string {
	if m == nil || len(m.Status) == 0 {
		return ""
	}
	var st struct {
		Value string `json:"value"`
	}
	if json.Unmarshal(m.Status, &st) == nil && st.Value != "" {
		return st.Value
	}
	var s string
	if json.Unmarshal(m.Status, &s) == nil {
		return s
	}
	return ""
}

// routerProps is the URL of the per-model /props of the router at base.
func routerProps(base, model string) string {
	return routerURL(rootOf(base)+"/props", model)
}

// routerURL is a GET endpoint of llama.cpp's router for model's child.
func routerURL(endpoint, model string) string {
	return endpoint + "?model=" + url.QueryEscape(model)
}

// ModelStatus reads the status llama.cpp's router gives opts.Model in
// GET /v1/models: ModelLoaded, ModelSleeping, …; "" when the engine lists
// the model without one (it is no router) or does not list it.
func ModelStatus(ctx context.Context, opts Options) (string, error) {
	d := newDiscoverer(opts)
	base := strings.TrimRight(opts.BaseURL, "/")
	var ml modelList
	if err := d.getJSON(ctx, base+"/models", "GET /models", &ml); err != nil {
		return "", err
	}
	for i := range ml.Data {
		if ml.Data[i].ID == opts.Model {
			return ml.Data[i].routerStatus(), nil
		}
	}
	return "", nil
}

// RouterNote says what a router model's status means for its cache, for
// check and the start's notices.
func RouterNote(model, status string) string {
	switch {
	case CacheGone(status):
		return fmt.Sprintf("llama.cpp router: model %s is %s: its prompt cache is gone, the first request loads it and prefills the whole prompt", model, status)
	case status == ModelLoading:
		return fmt.Sprintf("llama.cpp router: model %s is loading", model)
	}
	return fmt.Sprintf("llama.cpp router: model %s is %s", model, status)
}
