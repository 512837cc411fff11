package llamatest

import "testing"

// chatFresh is chatRaw with cache_prompt false: the request the planner
// sends to start a slot over (contextwin's Plan.Fresh).
func chatFresh(t *testing.T, url string, msgs ...string) Exchange {
	t.Helper()
	return chatWith(t, url, map[string]any{"cache_prompt": false}, msgs...)
}

// TestFreshRequestStartsTheSlotOver pins what a middle recap's reset
// relies on: a request with cache_prompt false is prefilled from token 0
// and leaves none of the slot's checkpoints; the checkpoint it takes a
// micro-batch before its end is then the slot's first, which a full slot
// keeps (here after 40 appends of 142 tokens), so a later change after
// it restarts there (a sliding-window model a token before), and one
// before it from 0.
func TestFreshRequestStartsTheSlotOver(t *testing.T) {
	for _, c := range classes[1:] {
		t.Run(c.name, func(t *testing.T) {
			s := Start(t, Options{Ctx: 16384, Model: c.model})
			head := letters(1000, 1)
			msgs := []string{head + letters(1500, 3)}
			chatRaw(t, s.URL, msgs...)
			for i := 0; i < 20; i++ {
				msgs = append(msgs, "x", letters(300, uint64(10+i)))
				chatRaw(t, s.URL, msgs...)
			}
			// The anchor: the end of the first five messages. The fresh
			// request goes on with an assistant's "x" and 483 letters, so
			// that with the template's 33 tokens it ends 516 (a
			// micro-batch and 4) after the anchor's letters start.
			keep := append([]string(nil), msgs[:5]...)
			plant := chatFresh(t, s.URL, append(keep, "x", letters(483, 97))...)
			if plant.Status != 200 || plant.CacheN != 0 {
				t.Fatalf("the fresh request: status %d, cache_n %d; want 200 and 0", plant.Status, plant.CacheN)
			}
			anchor := plant.PromptTokens - promptTail - 483
			if c.model == TinySWAModel {
				anchor-- // a sliding window's cells are restored up to the token before
			}
			next := append(keep, "x", letters(700, 99))
			if x := chatRaw(t, s.URL, next...); x.CacheN != anchor {
				t.Errorf("a change at the anchor restarted at %d, want %d", x.CacheN, anchor)
			}
			for i := 0; i < 40; i++ {
				next = append(next, "x", letters(80, uint64(200+i)))
				chatRaw(t, s.URL, next...)
			}
			after := append([]string(nil), next...)
			after[6] = changed(after[6], 10)
			if x := chatRaw(t, s.URL, after...); x.CacheN != anchor {
				t.Errorf("after 40 appends a change just after the anchor restarted at %d, want %d", x.CacheN, anchor)
			}
			before := append([]string(nil), next...)
			before[2] = changed(before[2], 10)
			if x := chatRaw(t, s.URL, before...); x.CacheN != 0 {
				t.Errorf("a change before the anchor restarted at %d, want 0: the fresh request left an older checkpoint", x.CacheN)
			}
		})
	}
}
