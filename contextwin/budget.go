package contextwin

// DefaultReserve is the room held back for the model's reply before
// anything has been learned about how much it writes.
const DefaultReserve = 2048

// The bounds of a plausible window, in tokens: a setting or an engine's
// figure outside them is nonsense and ignored.
const (
	MinWindow = 256
	MaxWindow = 10_000_000
)

// Repo-map bounds, in characters.
const (
	minRepoMapChars = 3200
	maxRepoMapChars = 12000
)

// Budget divides a context window of Window tokens. All figures are tokens
// except RepoMapChars.
type Budget struct {
	Window  int `json:"window"`  // W
	Reserve int `json:"reserve"` // G: room held back for the reply
	Usable  int `json:"usable"`  // U = W − G

	ShedPoint  int `json:"shed_point"`  // 0.9 U: at this prompt size the next request sheds
	ShedTarget int `json:"shed_target"` // 0.7 × shed point (0.63 U): shedding goes down to here
	FoldKeeps  int `json:"fold_keeps"`  // 0.3 U: newest turns kept verbatim by a fold
	Recap      int `json:"recap"`       // 0.1 U: the recap of everything older

	RepoMapChars int `json:"repo_map_chars"` // 5% of W at 4 chars a token, within 3200…12000
}

// NewBudget divides window W with reserve G. A reserve that leaves no room
// (G ≥ W) falls back to half the window; a negative one to the default.
// Figures are rounded down, so they hold to within one token of the
// formulas and never add up past the window.
func NewBudget(window, reserve int) Budget {
	if window < 0 {
		window = 0
	}
	if reserve < 0 {
		reserve = DefaultReserve
	}
	if reserve >= window {
		reserve = window / 2
	}
	u := window - reserve
	b := Budget{
		Window:  window,
		Reserve: reserve,
		Usable:  u,
		// Integer arithmetic keeps the golden rows exact: 0.9 U = 9U/10,
		// 0.63 U = 63U/100.
		ShedPoint:    u * 9 / 10,
		ShedTarget:   u * 63 / 100,
		FoldKeeps:    u * 3 / 10,
		Recap:        u / 10,
		RepoMapChars: RepoMapChars(window),
	}
	return b
}

// RepoMapChars is the repo map's share of window W in characters: 5% of W
// at 4 characters a token, clamped to 3200…12000.
func RepoMapChars(window int) int {
	return min(max(window/5, minRepoMapChars), maxRepoMapChars)
}

// MaxTokens is the max_tokens to send with a prompt of the given size:
// what the window has left minus a margin of 384 tokens, held under limit
// when limit > 0 (the catalog's output limit or REIKA_MAX_TOKENS). It is at
// least 1.
func (b Budget) MaxTokens(prompt, limit int) int {
	n := b.Window - prompt - maxTokensMargin
	if limit > 0 && n > limit {
		n = limit
	}
	return max(n, 1)
}

// maxTokensMargin keeps the reply's end away from the window's edge, where
// tokenizer disagreements would otherwise turn a fitting request into an
// overflow.
const maxTokensMargin = 384
