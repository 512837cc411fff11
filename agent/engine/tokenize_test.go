package engine_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
)

func TestTokenize(t *testing.T) {
	for _, fl := range []sim.Flavor{sim.LlamaCpp, sim.VLLM} {
		t.Run(string(fl), func(t *testing.T) {
			srv, err := sim.New(sim.Config{Flavor: fl})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv.Handler())
			defer hs.Close()
			opts := engine.Options{BaseURL: hs.URL + "/v1"}
			const text = "This request only primes the cache. ok ok ok"
			n, err := engine.Tokenize(context.Background(), opts, text)
			var ee *engine.Error
			switch {
			case fl == sim.LlamaCpp && (err != nil || n != len(sim.Tokenize(text))):
				t.Errorf("Tokenize = %d, %v; want the engine's %d tokens", n, err, len(sim.Tokenize(text)))
			case fl != sim.LlamaCpp && (!errors.As(err, &ee) || ee.Op != "POST /tokenize"):
				t.Errorf("Tokenize on %s = %d, %v; want an *engine.Error naming POST /tokenize", fl, n, err)
			}
		})
	}
}
