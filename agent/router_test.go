package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/sim"
)

// Behind llama.cpp's router, a model put to sleep between two runs lost
// the session's cache: the next run tells so before its first request,
// which the engine prefills whole; a run after one that found the model
// awake tells nothing. The session's headers name the settings' header.
func TestRouterModelAsleep(t *testing.T) {
	srv, url := simURL(t, sim.Config{Router: true, Ctx: 16384, Slots: 2, Script: []sim.Turn{{Content: "One."}, {Content: "Two."}, {Content: "Three."}}})
	s, err := Start(context.Background(), Setup{
		Getenv:     func(k string) string { return map[string]string{"REIKA_SESSION_HEADERS": "X-Team-Session"}[k] },
		ConfigFile: NoConfigFile,
		Override: func(st *config.Settings) {
			st.Endpoint = config.Value[string]{Value: url, Source: config.Source{Layer: config.Flag, Detail: "test"}}
		},
		Folders:  []string{t.TempDir()},
		StateDir: NoTranscript,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d := s.Info().Connection.Discovery; !d.Router || d.ModelStatus != "loaded" {
		t.Fatalf("discovery: router %v, status %q; want the router's loaded model", d.Router, d.ModelStatus)
	}
	if sl := s.Slot(); !sl.Pinned {
		t.Errorf("slot %+v: want one of the router's model's two, pinned (its /slots wants ?model=)", sl)
	}
	asleep := func(events []Event) bool {
		for _, e := range events {
			if e.Kind == Activity && strings.Contains(e.Text, "is sleeping: its prompt cache is gone") {
				return true
			}
		}
		return false
	}
	run := func(task string) []Event {
		var events []Event
		if _, err := s.Run(context.Background(), task, func(e Event) { events = append(events, e) }); err != nil {
			t.Fatal(err)
		}
		return events
	}
	if asleep(run("First.")) {
		t.Error("the first run told a lost cache")
	}
	recorded(t, srv, 1) // the slot keeps the request's tokens when its handler returns
	if err := srv.SetModelStatus(sim.ModelSleeping); err != nil {
		t.Fatal(err)
	}
	if !asleep(run("Second.")) {
		t.Error("the run after the model slept did not tell its cache was lost")
	}
	if asleep(run("Third.")) {
		t.Error("the run after the model woke told a lost cache")
	}
	var n int
	for _, rec := range recorded(t, srv, 3) {
		if rec.Headers.Get("X-Team-Session") == "" || rec.Headers.Get("x-session-id") != "" {
			t.Errorf("request %d: X-Team-Session %q, x-session-id %q; want the setting's header alone", rec.Seq, rec.Headers.Get("X-Team-Session"), rec.Headers.Get("x-session-id"))
		}
		if rec.CacheN == 0 {
			n++
		}
	}
	if n < 2 {
		t.Errorf("%d requests reused nothing, want the first and the one after the sleep", n)
	}
}
