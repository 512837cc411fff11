package engine

import (
	"context"
	"fmt"
	"maps"

	"github.com/reika-lsp/reika/contextwin"
)

// Target is the endpoint the settings name, in plain values: what Connect
// needs to find a working engine.
type Target struct {
	// Endpoint is the base URL; "" probes the usual local ports.
	// EndpointSource says where it came from.
	Endpoint       string
	EndpointSource Source
	// Model is the configured model; "" takes the engine's first.
	Model string
	// APIKey is the key itself, read from the environment variable the
	// settings name (APIKeyEnv), which must then be set.
	APIKey, APIKeyEnv string
	// Extra holds body fields added to every request.
	Extra map[string]any
	// Configured is the configured context window, if any.
	Configured Configured
}

// Connection is an endpoint chosen from the settings, and what discovery
// learnt about it.
type Connection struct {
	// Options are ready for NewClient: endpoint, model, key, flavour.
	Options Options
	// EndpointSource says where the endpoint came from: a setting, or the
	// probe of the usual local ports.
	EndpointSource Source
	Discovery      *Discovery
	// Configured is what the settings said of the window and the cache:
	// a model switch (Rediscover) takes them as Connect did.
	Configured Configured
}

// Connect resolves t to a working endpoint: the configured one, or the
// first local engine that answers on the usual ports. It then runs
// Discover with the configured window. base supplies the HTTP client and
// timeouts; its endpoint, model and key are taken from t.
func Connect(ctx context.Context, t Target, base Options) (*Connection, error) {
	opts := base
	opts.BaseURL, opts.Model, opts.APIKey, opts.Extra = t.Endpoint, t.Model, t.APIKey, t.Extra
	source := t.EndpointSource
	if opts.BaseURL == "" {
		found, err := FindLocal(ctx, opts)
		if err != nil {
			return nil, err
		}
		opts.BaseURL = found
		source = SourceProbe
	}
	if t.APIKeyEnv != "" && opts.APIKey == "" {
		return nil, fmt.Errorf("the profile names %s for the API key, but it is not set in the environment: export it, or remove api_key_env",
			t.APIKeyEnv)
	}
	d, err := Discover(ctx, opts, t.Configured)
	if err != nil {
		return nil, err
	}
	opts.Flavor, opts.Router = d.Flavor, d.Router
	if kw := withKwargs(opts.Extra, d.ReasoningKwargs); kw != nil {
		// The template keeps every message's reasoning when asked.
		opts.Extra = kw
		d.Reasoning = contextwin.ReasoningAll
	}
	if opts.Model == "" {
		opts.Model = d.Model
	}
	return &Connection{Options: opts, EndpointSource: source, Discovery: d, Configured: t.Configured}, nil
}

// Rediscover asks the endpoint about model, as Connect asked about the
// first: its window (llama.cpp's /v1/models meta.n_ctx or its router's
// /props?model=, vLLM's max_model_len, Ollama's /api/show, the catalog's
// limits), its output limit and how the engine reuses its cache for it;
// the settings' window and cache still win. A session that switches
// models plans the rest of its requests with what it finds.
func (c *Connection) Rediscover(ctx context.Context, model string) (*Discovery, error) {
	opts := c.Options
	opts.Model = model
	return Discover(ctx, opts, c.Configured)
}

// withKwargs is extra with the chat_template_kwargs add merged in, the
// keys extra sets itself winning; nil when add is empty, or when extra's
// kwargs are not an object or already set every key of add.
func withKwargs(extra, add map[string]any) map[string]any {
	if len(add) == 0 {
		return nil
	}
	kw := map[string]any{}
	if cur, ok := extra["chat_template_kwargs"]; ok {
		m, isMap := cur.(map[string]any)
		if !isMap {
			return nil
		}
		maps.Copy(kw, m)
	}
	added := false
	for k, v := range add {
		if _, set := kw[k]; !set {
			kw[k], added = v, true
		}
	}
	if !added {
		return nil
	}
	out := maps.Clone(extra)
	if out == nil {
		out = map[string]any{}
	}
	out["chat_template_kwargs"] = kw
	return out
}
