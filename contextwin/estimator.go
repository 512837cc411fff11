package contextwin

import (
	"math"
	"slices"
)

// Token pricing without a tokenizer.
const (
	// charsPerToken is the baseline: 4 bytes of text a token.
	charsPerToken = 4.0
	// newCharsPerToken prices bytes no earlier request carried: nothing has
	// measured them yet, and code, JSON and CJK text run dense.
	newCharsPerToken = 1.6
	// blindCharsPerToken prices the bytes an earlier request carried while
	// the engine has given no count at all (usage absent or zero): code and
	// JSON run 2.5–3.5 bytes a token in the common vocabularies, prose 4–5,
	// so at 2.5 the estimate errs high for all but CJK text and byte-level
	// vocabularies, whose overflow the engine's refusal still catches.
	blindCharsPerToken = 2.5
	// truncatedBelow flags a reported prompt under this share of what was
	// expected: the engine dropped part of the prompt (Ollama does, and
	// still answers).
	truncatedBelow = 0.5
	// minTruncationCheck is the smallest prompt, in bytes, the truncation
	// check judges; short prompts are dominated by template overhead.
	minTruncationCheck = 4000
	// maxTokensPerByte and templateSlack bound any count a tokenizer can
	// give: no vocabulary spends more than a token on a byte (byte-level
	// and byte-fallback ones spend exactly one), and what the planner does
	// not count — the chat template's markers around each message, the
	// tools' framing — adds less than as much again and a fixed part. A
	// count above it is misreported, whatever the history.
	maxTokensPerByte = 2.0
	templateSlack    = 1024
	// outlierBand is how far from the learned ratio a count may fall and
	// still be learned: a request shares most of its bytes with the one
	// before, so its ratio moves little from one to the next.
	outlierBand = 2.0
	// ratioSamples is how many recent counts the ratio is the median of.
	ratioSamples = 5
)

// Figure is what the estimator made of one reported count.
type Figure int

const (
	// Learned: the count was taken into the ratio.
	Learned Figure = iota
	// Missing: the engine gave no count (usage absent or zero).
	Missing
	// Truncated: the count is far below what the request must have cost:
	// the engine silently dropped part of it.
	Truncated
	// Outlier: the count is far from anything the history supports (or
	// above what any tokenizer can give): not learned.
	Outlier
)

// Estimator prices text in tokens. It starts at 4 bytes a token and learns
// the ratio of the engine's reported prompt tokens to that baseline: the
// median of the last five counts it believed, or the newest when that is
// higher. A count is checked, not trusted: one above two tokens a byte
// (and a template's share) is misreported; one more than twice or less
// than half the median is an outlier, not learned, unless the next count
// agrees with it (the engine's figures changed, or the history was the
// outlier). Only the median (two counts that agree) can make the window
// too small. Shed and fold
// decisions never price text sparser than the baseline (ratio floor 1.0),
// and bytes no earlier request carried are priced at 1.6 bytes a token or
// denser. While the engine gives no count at all, carried bytes are priced
// at 2.5 bytes a token.
//
// The zero value is ready to use.
type Estimator struct {
	// Ratio is the learned reported ÷ baseline decisions price at: the
	// median of Samples, or the newest when it is higher (text grew
	// denser, and the median lags); 0 means not learned.
	Ratio float64 `json:"ratio,omitempty"`
	// Samples are the ratios of the last counts learned, oldest first.
	Samples []float64 `json:"samples,omitempty"`
	// Doubt is the ratio of the last count judged an outlier within what a
	// tokenizer can give, 0 none: a next count that agrees with it
	// replaces the history.
	Doubt float64 `json:"doubt,omitempty"`
	// Blind is set when the engine answered without a count and none has
	// been learned.
	Blind bool `json:"blind,omitempty"`
	// Refusal is set when the ratio is the count of a request the engine
	// refused as too long: its own count, on which it acted.
	Refusal bool `json:"refusal,omitempty"`
}

// ratio is the learned ratio for decisions: never below 1, and while the
// engine gives no count, 2.5 bytes a token.
func (e Estimator) ratio() float64 {
	if e.Blind && e.Ratio == 0 {
		return charsPerToken / blindCharsPerToken
	}
	return max(e.Ratio, 1)
}

// firm is the ratio a verdict may rest on that stops a run or calls a
// count truncated: the learned one once two counts (or the engine's
// refusal) support it, or when one count gave it within outlierBand of
// the baseline (2 to 8 bytes a token, where code and prose fall); else
// the baseline — one count alone that says the text is denser, which may
// be the one misreported, never makes the window too small.
func (e Estimator) firm() float64 {
	switch {
	case e.Refusal:
		return e.ratio()
	case len(e.Samples) >= 2:
		return max(e.center(), 1)
	case e.Ratio > 0 && e.Ratio <= outlierBand:
		return e.ratio()
	}
	return 1
}

// center is the median of the recent counts, which a count is judged
// against; 0 with none.
func (e Estimator) center() float64 {
	if len(e.Samples) == 0 {
		return e.Ratio
	}
	return median(e.Samples)
}

// Known prices bytes an earlier request carried.
func (e Estimator) Known(chars int) int {
	return ceilTokens(float64(chars) / charsPerToken * e.ratio())
}

// knownFirm prices carried bytes at the firm ratio.
func (e Estimator) knownFirm(chars int) int {
	return ceilTokens(float64(chars) / charsPerToken * e.firm())
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
// (everything sent: the fixed prefix, the messages, the tool definitions)
// and says what it made of it: learned; missing (no count: the estimate
// stays cautious); truncated (far below what the request must have cost:
// an engine that silently dropped part of it); or an outlier (far from
// what the history supports, or above what any tokenizer gives). Only a
// learned count changes the ratio.
func (e *Estimator) Learn(chars, reported int) Figure {
	if chars <= 0 {
		return Missing
	}
	if reported <= 0 {
		if e.Ratio == 0 {
			e.Blind = true
		}
		return Missing
	}
	base := float64(chars) / charsPerToken
	r := float64(reported) / base
	if chars >= minTruncationCheck && r < truncatedBelow*e.firm() {
		return Truncated
	}
	if float64(reported) > maxTokensPerByte*float64(chars)+templateSlack {
		return Outlier
	}
	if c := e.center(); c > 0 && (r > c*outlierBand || r < c/outlierBand) {
		if d := e.Doubt; d == 0 || r > d*outlierBand || r < d/outlierBand {
			e.Doubt = r
			return Outlier
		}
		// Two counts in a row agree against the history: it is the
		// history that no longer holds.
		e.Samples = []float64{e.Doubt}
	}
	e.Doubt, e.Blind = 0, false
	e.Samples = append(e.Samples, r)
	if len(e.Samples) > ratioSamples {
		e.Samples = slices.Delete(e.Samples, 0, len(e.Samples)-ratioSamples)
	}
	e.Ratio = max(median(e.Samples), r)
	return Learned
}

// Refused takes the count of a request the engine refused as too long: its
// own count, on which it acted. It replaces the history.
func (e *Estimator) Refused(chars, reported int) {
	if chars <= 0 || reported <= 0 || float64(reported) > maxTokensPerByte*float64(chars)+templateSlack {
		return
	}
	r := float64(reported) / (float64(chars) / charsPerToken)
	e.Samples = []float64{r}
	e.Ratio, e.Doubt, e.Blind, e.Refusal = r, 0, false, true
}

// median is the middle of xs, the upper of the two middles for an even
// count: between two counts, the cautious one.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
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
