package contextwin

import "math"

// Token pricing without a tokenizer.
const (
	// charsPerToken is the baseline: 4 bytes of text a token.
	charsPerToken = 4.0
	// newCharsPerToken prices bytes no earlier request carried: nothing has
	// measured them yet, and code, JSON and CJK text run dense.
	newCharsPerToken = 1.6
	// truncatedBelow flags a reported prompt under this share of what was
	// expected: the engine dropped part of the prompt (Ollama does, and
	// still answers).
	truncatedBelow = 0.5
	// minTruncationCheck is the smallest prompt, in bytes, the truncation
	// check judges; short prompts are dominated by template overhead.
	minTruncationCheck = 4000
)

// Estimator prices text in tokens. It starts at 4 bytes a token and learns
// the ratio of the engine's reported prompt tokens to that baseline after
// each call; the ratio is kept across turns. Shed and fold decisions never
// price text sparser than the baseline (ratio floor 1.0), and bytes no
// earlier request carried are priced at 1.6 bytes a token or denser.
//
// The zero value is ready to use.
type Estimator struct {
	// Ratio is the last learned reported ÷ baseline; 0 means not learned.
	Ratio float64 `json:"ratio,omitempty"`
}

// ratio is the learned ratio for decisions: never below 1.
func (e Estimator) ratio() float64 {
	return max(e.Ratio, 1)
}

// Known prices bytes an earlier request carried.
func (e Estimator) Known(chars int) int {
	return ceilTokens(float64(chars) / charsPerToken * e.ratio())
}

// New prices bytes no earlier request carried.
func (e Estimator) New(chars int) int {
	return ceilTokens(max(float64(chars)/newCharsPerToken, float64(chars)/charsPerToken*e.ratio()))
}

// NewChars is how many new bytes fit in the given tokens: the inverse of
// New, rounded down.
func (e Estimator) NewChars(tokens int) int {
	if tokens <= 0 {
		return 0
	}
	perToken := min(newCharsPerToken, charsPerToken/e.ratio())
	return int(math.Floor(float64(tokens) * perToken))
}

// Learn takes the engine's prompt token count for a request of chars bytes
// (everything sent: the fixed prefix, the messages, the tool definitions).
// It reports truncated when the count is far below what the request must
// have cost — an engine that silently dropped part of it — and then does
// not learn from it.
func (e *Estimator) Learn(chars, reported int) (truncated bool) {
	if chars <= 0 || reported <= 0 {
		return false
	}
	base := float64(chars) / charsPerToken
	expected := base * max(e.Ratio, 1)
	if chars >= minTruncationCheck && float64(reported) < truncatedBelow*expected {
		return true
	}
	e.Ratio = float64(reported) / base
	return false
}

func ceilTokens(f float64) int {
	if f <= 0 {
		return 0
	}
	if f > math.MaxInt32*1024.0 {
		return math.MaxInt32 * 1024
	}
	return int(math.Ceil(f - 1e-9))
}
