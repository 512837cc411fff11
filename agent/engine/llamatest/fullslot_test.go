package llamatest

import "testing"

// TestCheckpointsOfAFullSlot pins which checkpoints a full slot keeps
// (32 by default) on the recurrent model: after a prompt of 3053 tokens
// and 40 appends of 142, each making two, the first prompt's at 2537
// is still there (a full slot drops the oldest of those standing within
// --checkpoint-min-step, 8192, of the one before, so the first outlives
// a run of small appends), and the newest ones from 6887 on; none
// between. contextwin's TestCheckpointsOfAMeasuredSlot holds its mirror
// to these figures.
func TestCheckpointsOfAFullSlot(t *testing.T) {
	a := letters(3000, 1)
	for probe, want := range map[int]int{3550: 2537, 6950: 6887} {
		s := Start(t, Options{Ctx: 16384, Model: TinyRecurrentModel})
		msgs := []string{a}
		lens := []int{chatRaw(t, s.URL, msgs...).PromptTokens}
		for i := 0; i < 40; i++ {
			msgs = append(msgs, "x", letters(80, uint64(10+i)))
			lens = append(lens, chatRaw(t, s.URL, msgs...).PromptTokens)
		}
		if lens[0] != 3053 || lens[40] != 3053+40*142 {
			t.Fatalf("the prompts are %v, want 3053 and 40 appends of 142", lens)
		}
		// Change the letter at token probe: in the letters of the request
		// whose prompt first passes it (80 letters and 5 tokens of template
		// before its end).
		ch := append([]string(nil), msgs...)
		for i := 1; i < len(lens); i++ {
			if lens[i] > probe {
				ch[2*i] = changed(msgs[2*i], probe-(lens[i]-85))
				break
			}
		}
		if x := chatRaw(t, s.URL, ch...); x.CacheN != want {
			t.Errorf("a change at %d after 40 appends restarted at %d, want %d", probe, x.CacheN, want)
		}
	}
}
