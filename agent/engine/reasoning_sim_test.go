package engine_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/contextwin"
)

// Discovery reads the template's class from the simulator's /props as
// from llama.cpp's.
func TestDiscoverReasoningTemplate(t *testing.T) {
	for tmpl, want := range map[sim.ReasoningTemplate]contextwin.ReasoningTemplate{
		sim.DropReasoning: contextwin.ReasoningDrop,
		sim.TurnReasoning: contextwin.ReasoningTurn,
		sim.AllReasoning:  contextwin.ReasoningAll,
	} {
		t.Run(string(tmpl), func(t *testing.T) {
			srv, err := sim.New(sim.Config{Flavor: sim.LlamaCpp, ReasoningTemplate: tmpl})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv.Handler())
			defer hs.Close()
			d, err := engine.Discover(context.Background(), engine.Options{BaseURL: hs.URL + "/v1"}, engine.Configured{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Reasoning != want {
				t.Errorf("Discover reasoning = %q, want %q", d.Reasoning, want)
			}
		})
	}
}
