package engine

import (
	"context"
	"fmt"

	"github.com/reika-lsp/reika/agent/config"
)

// Connection is an endpoint chosen from the settings, and what discovery
// learnt about it.
type Connection struct {
	// Options are ready for NewClient: endpoint, model, key, flavour.
	Options Options
	// EndpointSource says where the endpoint came from: a setting, or the
	// probe of the usual local ports.
	EndpointSource string
	Discovery      *Discovery
}

// Connect resolves the settings to a working endpoint: the configured one,
// or the first local engine that answers on the usual ports. It then runs
// Discover with the configured window. base supplies the HTTP client and
// timeouts; its endpoint, model and key are taken from s.
func Connect(ctx context.Context, s *config.Settings, getenv func(string) string, base Options) (*Connection, error) {
	opts := base
	opts.BaseURL = s.Endpoint.Value
	opts.Model = s.Model.Value
	opts.APIKey = s.APIKey(getenv)
	opts.Extra = s.Extra.Value
	source := s.Endpoint.Source.String()
	if opts.BaseURL == "" {
		found, err := FindLocal(ctx, opts)
		if err != nil {
			return nil, err
		}
		opts.BaseURL = found
		source = "probe (first engine to answer on the usual local ports)"
	}
	if s.APIKeyEnv.Value != "" && opts.APIKey == "" {
		return nil, fmt.Errorf("the profile names %s for the API key, but it is not set in the environment: export it, or remove api_key_env",
			s.APIKeyEnv.Value)
	}
	var conf Configured
	if s.ContextWindow.IsSet() && s.ContextWindow.Value > 0 {
		conf = Configured{Window: s.ContextWindow.Value, WindowSource: s.ContextWindow.Source.String()}
	}
	d, err := Discover(ctx, opts, conf)
	if err != nil {
		return nil, err
	}
	opts.Flavor = d.Flavor
	if opts.Model == "" {
		opts.Model = d.Model
	}
	return &Connection{Options: opts, EndpointSource: source, Discovery: d}, nil
}
