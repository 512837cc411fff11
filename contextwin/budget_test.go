package contextwin

import "testing"

// The budget's figures for five windows, worked out by hand from the
// formulas in budget.go, in tokens (k = 1000), before rounding to 0.1k.
func TestBudgetGolden(t *testing.T) {
	for _, tc := range []struct {
		w, g                                  int
		shedPoint, shedTarget, foldKeeps, rec float64
		mapChars                              int
	}{
		{16000, 2048, 12600, 8800, 4200, 1400, 3200},
		{24000, 2048, 19800, 13800, 6600, 2200, 4800},
		{24000, 6144, 16100, 11200, 5400, 1800, 4800},
		{32000, 2048, 27000, 18900, 9000, 3000, 6400},
		{128000, 2048, 113400, 79300, 37800, 12600, 12000},
	} {
		b := NewBudget(tc.w, tc.g)
		for _, f := range []struct {
			name      string
			got       int
			want      float64
			formulaOf float64
		}{
			{"shed point", b.ShedPoint, tc.shedPoint, 0.9},
			{"shed target", b.ShedTarget, tc.shedTarget, 0.63},
			{"fold keeps", b.FoldKeeps, tc.foldKeeps, 0.3},
			{"recap", b.Recap, tc.rec, 0.1},
		} {
			exact := f.formulaOf * float64(tc.w-tc.g)
			if d := float64(f.got) - exact; d > 1 || d < -1 {
				t.Errorf("NewBudget(%d, %d) %s = %d, want %.2f within one token", tc.w, tc.g, f.name, f.got, exact)
			}
			// The table shows tokens rounded to 0.1k.
			if r := roundK(f.got); r != f.want {
				t.Errorf("NewBudget(%d, %d) %s = %d (%.1fk), want %.1fk", tc.w, tc.g, f.name, f.got, r/1000, f.want/1000)
			}
		}
		if b.RepoMapChars != tc.mapChars {
			t.Errorf("NewBudget(%d, %d) map chars = %d, want %d", tc.w, tc.g, b.RepoMapChars, tc.mapChars)
		}
	}
}

func roundK(n int) float64 { return float64((n+50)/100) * 100 }

func TestBudgetReserveFallback(t *testing.T) {
	for _, tc := range []struct{ w, g, wantG int }{
		{8192, 8192, 4096},
		{8192, 10000, 4096},
		{8192, -1, DefaultReserve},
		{0, 2048, 0},
	} {
		if got := NewBudget(tc.w, tc.g).Reserve; got != tc.wantG {
			t.Errorf("NewBudget(%d, %d).Reserve = %d, want %d", tc.w, tc.g, got, tc.wantG)
		}
	}
}

func TestMaxTokens(t *testing.T) {
	b := NewBudget(8192, 2048)
	for _, tc := range []struct{ prompt, limit, want int }{
		{1000, 0, 8192 - 1000 - 384},
		{1000, 4096, 4096},
		{8000, 0, 1},
	} {
		if got := b.MaxTokens(tc.prompt, tc.limit); got != tc.want {
			t.Errorf("MaxTokens(%d, %d) = %d, want %d", tc.prompt, tc.limit, got, tc.want)
		}
	}
}

// FuzzBudget holds the invariants for any window and reserve: nothing
// negative, the parts never exceed the window, and the target sits below
// the shed point.
func FuzzBudget(f *testing.F) {
	f.Add(16000, 2048)
	f.Add(2000, 6144)
	f.Add(2000000, 0)
	f.Fuzz(func(t *testing.T, w, g int) {
		if w < 0 || w > 1<<40 || g > 1<<40 {
			t.Skip()
		}
		b := NewBudget(w, g)
		if b.Reserve < 0 || b.Usable < 0 || b.ShedTarget < 0 || b.Recap < 0 {
			t.Fatalf("NewBudget(%d, %d) = %+v: a negative figure", w, g, b)
		}
		if b.Reserve+b.Usable != b.Window {
			t.Fatalf("NewBudget(%d, %d): reserve %d + usable %d != window %d", w, g, b.Reserve, b.Usable, b.Window)
		}
		if b.FoldKeeps+b.Recap > b.ShedTarget+1 && b.Usable > 10 {
			t.Fatalf("NewBudget(%d, %d): fold keeps %d + recap %d exceed the shed target %d", w, g, b.FoldKeeps, b.Recap, b.ShedTarget)
		}
		if b.ShedTarget > b.ShedPoint || b.ShedPoint > b.Usable {
			t.Fatalf("NewBudget(%d, %d): target %d, shed point %d, usable %d out of order", w, g, b.ShedTarget, b.ShedPoint, b.Usable)
		}
	})
}
