package contextwin

import "testing"

func TestChip(t *testing.T) {
	b := NewBudget(24000, 2048) // shed point 19.8k
	for _, tc := range []struct {
		size int
		b    Budget
		want string
		warn bool
	}{
		{16000, b, "ctx 16k/24k (81% of 20k)", true},
		{8200, b, "ctx 8.2k/24k (42% of 20k)", false},
		{950, b, "ctx 950/24k (5% of 20k)", false},
		{15800, b, "ctx 16k/24k (80% of 20k)", true},
		{15700, b, "ctx 16k/24k (79% of 20k)", false},
		{1234567, NewBudget(2000000, 2048), "ctx 1.2M/2M (69% of 1.8M)", false},
		{16000, Budget{}, "ctx 16k", false},
	} {
		c := NewChip(tc.size, tc.b)
		if got := c.String(); got != tc.want || c.Warn != tc.warn {
			t.Errorf("NewChip(%d, W=%d) = %q warn %v, want %q warn %v", tc.size, tc.b.Window, got, c.Warn, tc.want, tc.warn)
		}
	}
}
