package engine_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
)

func TestChooseSlot(t *testing.T) {
	fresh := []engine.Slot{{ID: 0}, {ID: 1}}
	oneUsed := []engine.Slot{{ID: 0, Used: true, PromptTokens: 900}, {ID: 1}}
	allUsed := []engine.Slot{{ID: 0, Used: true}, {ID: 1, Used: true, Processing: true}, {ID: 2, Used: true}}
	lru := []engine.Slot{{ID: 0, Used: true, Task: 40}, {ID: 1, Used: true, Task: 12, Processing: true}, {ID: 2, Used: true, Task: 17}, {ID: 3, Used: true, Task: 31}}
	withPrompts := []engine.Slot{{ID: 0, Used: true, Prompt: "system A, user B"}, {ID: 1, Used: true, Prompt: "system C"}, {ID: 2}}
	tests := []struct {
		name   string
		slots  []engine.Slot
		prefer int
		prompt string
		want   []int // any of these
	}{
		{"the slot used before wins", oneUsed, 0, "", []int{0}},
		{"a slot never used", oneUsed, -1, "", []int{1}},
		{"an idle slot when all were used", allUsed, -1, "", []int{0, 2}},
		{"a fresh engine: either", fresh, -1, "", []int{0, 1}},
		{"every slot holds a session: the least recently used idle one", lru, -1, "", []int{2}},
		{"the longest shared prefix, when prompts show", withPrompts, -1, "system A, user B and more", []int{0}},
		{"no shared prefix: a slot never used", withPrompts, -1, "unrelated", []int{2}},
		{"a preferred slot that is gone", oneUsed, 5, "", []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := engine.ChooseSlot(tt.slots, "session-key", tt.prefer, tt.prompt)
			ok := false
			for _, w := range tt.want {
				ok = ok || got == w
			}
			if !ok || why == "" {
				t.Errorf("ChooseSlot = %d (%s), want one of %v", got, why, tt.want)
			}
			if again, _ := engine.ChooseSlot(tt.slots, "session-key", tt.prefer, tt.prompt); again != got {
				t.Errorf("ChooseSlot is not stable: %d then %d", got, again)
			}
		})
	}
}

// TestSlotCalls reads /slots, probes for --slot-save-path and saves and
// restores a slot on the simulator.
func TestSlotCalls(t *testing.T) {
	ctx := context.Background()
	for _, saving := range []bool{false, true} {
		cfg := sim.Config{Slots: 2}
		if saving {
			cfg.SlotSavePath = t.TempDir()
		}
		srv, err := sim.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		opts := engine.Options{BaseURL: hs.URL + "/v1", Flavor: engine.LlamaCpp}
		slot := 1
		c := engine.NewClient(opts)
		if _, err := c.Chat(ctx, engine.Request{Messages: []engine.Message{{Role: "user", Content: "hello there"}}, Slot: &slot}, nil); err != nil {
			t.Fatal(err)
		}
		slots, err := engine.Slots(ctx, opts)
		if err != nil || len(slots) != 2 || slots[0].Used || !slots[1].Used || slots[1].PromptTokens == 0 {
			t.Fatalf("Slots = %+v, %v; want slot 1 used, slot 0 not", slots, err)
		}
		on, err := engine.SlotSaving(ctx, opts)
		if err != nil || on != saving {
			t.Errorf("SlotSaving = %v, %v; want %v", on, err, saving)
		}
		res, err := engine.SlotAction(ctx, opts, 1, engine.SlotSave, "s.bin")
		if !saving {
			var ee *engine.Error
			if !errors.As(err, &ee) || ee.Status != 501 {
				t.Errorf("save without --slot-save-path: %v, want HTTP 501", err)
			}
			continue
		}
		if err != nil || res.Tokens <= slots[1].PromptTokens || res.Bytes == 0 {
			t.Errorf("save = %+v, %v; want the prompt and the reply's tokens", res, err)
		}
		back, err := engine.SlotAction(ctx, opts, 0, engine.SlotRestore, "s.bin")
		if err != nil || back.Tokens != res.Tokens {
			t.Errorf("restore = %+v, %v; want %d tokens", back, err, res.Tokens)
		}
		if _, err := engine.SlotAction(ctx, opts, 0, engine.SlotRestore, "missing.bin"); !errors.Is(err, engine.BadRequest) {
			t.Errorf("restore of a missing file: %v, want a BadRequest", err)
		}
	}
}
