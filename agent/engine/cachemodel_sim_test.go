package engine_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/engine/llamatest"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/contextwin"
)

// TestDiscoverCacheOnTheSimulator discovers each simulated flavour's
// cache model; the simulated llama.cpp serves a model file of
// llamatest's, whose header discovery reads.
func TestDiscoverCacheOnTheSimulator(t *testing.T) {
	model := filepath.Join(t.TempDir(), "tiny.gguf")
	f, err := os.Create(model)
	if err != nil {
		t.Fatal(err)
	}
	if err := llamatest.WriteModel(f, llamatest.TinyModel); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, tc := range []struct {
		cfg    sim.Config
		want   contextwin.CacheModel
		source string
	}{
		{sim.Config{Flavor: sim.LlamaCpp, Model: model}, contextwin.CacheModel{Class: contextwin.CacheDense}, "llamacpp-gguf-header"},
		{sim.Config{Flavor: sim.LlamaCpp}, contextwin.CacheModel{Class: contextwin.CacheUnknown}, "cache-unknown"},
		{sim.Config{Flavor: sim.VLLM}, contextwin.CacheModel{Class: contextwin.CacheBlocks, Block: 16}, "vllm-default-block-size"},
		{sim.Config{Flavor: sim.Ollama}, contextwin.CacheModel{Class: contextwin.CacheDense}, "ollama-show-model-info"},
	} {
		t.Run(string(tc.cfg.Flavor)+" "+tc.source, func(t *testing.T) {
			srv, err := sim.New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv.Handler())
			defer hs.Close()
			d, err := engine.Discover(context.Background(), engine.Options{BaseURL: hs.URL + "/v1"}, engine.Configured{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Cache != tc.want || d.CacheSource.ID != tc.source {
				t.Errorf("Discover cache = %+v (%+v), want %+v from %s", d.Cache, d.CacheSource, tc.want, tc.source)
			}
		})
	}
}
