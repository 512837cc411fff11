package contextwin

import (
	"fmt"
	"math"
)

// chipWarn is the share of the shed point at which the chip turns to a
// warning: a shed is near.
const chipWarn = 80

// Chip is the status line's view of the context: `ctx 16k/24k (81% of 20k)`
// — the request's size, the window, and how far along it is to the shed
// point (not to the window). With no window, the size alone.
type Chip struct {
	Size      int  `json:"size"`       // tokens in the last request
	Window    int  `json:"window"`     // 0: unknown
	ShedPoint int  `json:"shed_point"` // 0: unknown
	Percent   int  `json:"percent"`    // of the shed point
	Warn      bool `json:"warn"`       // Percent ≥ 80
}

// NewChip reads the chip for a request of size tokens under budget b (a
// zero budget: no known window).
func NewChip(size int, b Budget) Chip {
	c := Chip{Size: size, Window: b.Window, ShedPoint: b.ShedPoint}
	if b.Window > 0 && b.ShedPoint > 0 {
		c.Percent = int(math.Round(100 * float64(size) / float64(b.ShedPoint)))
		c.Warn = c.Percent >= chipWarn
	}
	return c
}

func (c Chip) String() string {
	if c.Window <= 0 {
		return "ctx " + kTokens(c.Size)
	}
	return fmt.Sprintf("ctx %s/%s (%d%% of %s)", kTokens(c.Size), kTokens(c.Window), c.Percent, kTokens(c.ShedPoint))
}

// kTokens writes a token count the way the chip shows it: 950, 8.2k, 16k,
// 1.2M.
func kTokens(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 9950:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1000)) + "k"
	case n < 999500:
		return fmt.Sprintf("%.0fk", float64(n)/1000)
	}
	return trimZero(fmt.Sprintf("%.1f", float64(n)/1e6)) + "M"
}

func trimZero(s string) string {
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
