package contextwin

import "fmt"

// The boundary class (CacheBoundary): vLLM serving a hybrid model keeps
// the recurrent state of a prompt it processed only at the prompt's last
// block boundary, ⌊n/block⌋·block, while its attention layers keep every
// full block. A request restarts at the newest such boundary of an
// earlier prompt at or before its first changed token: a pure append at
// the last prompt's boundary, up to a block before its end; a change at
// the boundary of the prompt before, at or before it, else at 0. The
// mirror holds those boundaries as its points.

// pointAtOrBefore is the newest of the mirror's points at or before
// token at, 0 when none is.
func (c engineCache) pointAtOrBefore(at int) int {
	for i := len(c.points) - 1; i >= 0; i-- {
		if p := c.points[i].at; p <= at {
			return p
		}
	}
	return 0
}

// processedAtBoundary records a prompt of n tokens a boundary engine
// prefilled from token from: the boundaries after from belong to prompts
// this one left, and its own last boundary is kept. Like a llama.cpp slot,
// the engine keeps so many (Checkpoints, a stand-in for the states its KV
// pool holds); the oldest go first.
func (m CacheModel) processedAtBoundary(c engineCache, from, n int) engineCache {
	keep := c.points[:0:0]
	for _, p := range c.points {
		if p.at < from {
			keep = append(keep, p)
		}
	}
	// The engine restarted at from: it keeps a state there, which the
	// mirror may not have known of (a prompt's before it learnt the class).
	if from > 0 {
		keep = append(keep, checkpoint{at: from})
	}
	if at := n / m.Block * m.Block; at > 0 && (len(keep) == 0 || keep[len(keep)-1].at < at) {
		keep = append(keep, checkpoint{at: at})
	}
	if over := len(keep) - m.Checkpoints; over > 0 {
		keep = keep[over:]
	}
	return engineCache{n: n, points: keep}
}

// boundaryLeast is the smallest block the boundary class is learnt
// with: a hybrid model's is hundreds of tokens (528 and up), so a
// restart a few blocks of 16 short of an append's end (a blocks engine,
// a cache another client thinned) teaches nothing.
const boundaryLeast = 128

// learnBoundary compares where the engine restarted an append with the
// last prompt's end, and reports whether that taught the model something.
// An engine that keeps every block, or any prefix, restarts an append
// within a block of 16 of the end; a boundary engine at a multiple of its
// block, up to a block before it. Two such restarts teach the class, and
// the greatest common divisor of all of them the block (a wrong block,
// told or learnt, is corrected so). One restart at the end where the
// model said a boundary teaches that the engine keeps any prefix after
// all.
func (s *Planner) learnBoundary(from, predicted int) bool {
	t := &s.cache
	n := t.engine.n
	if n == 0 || t.common < n || t.warm {
		return false // the first request, or a change: learnCache's
	}
	if t.model.Class == CacheBoundary && from+16 > n && predicted+boundaryLeast/2 <= n {
		// Within a block of 16 of the end: whole blocks, or any prefix.
		t.model.Class, t.model.Block = CacheDense, DefaultBlock
		if from%16 == 0 && from < n {
			t.model.Class = CacheBlocks
		}
		t.why = fmt.Sprintf("the engine reused an append's prompt to token %d of %d, where only its last block boundary was expected", from, n)
		return true
	}
	if from <= 0 || from+boundaryLeast/2 > n || from%16 != 0 || from == predicted {
		return false
	}
	switch t.model.Class {
	case CacheUnknown, CacheDense, CacheBlocks, CacheBoundary:
	default:
		return false
	}
	if from == t.boundary.last {
		return false // the same boundary again says nothing of the block
	}
	t.boundary.last = from
	t.boundary.g, t.boundary.seen = gcd(t.boundary.g, from), t.boundary.seen+1
	g := t.boundary.g
	if t.boundary.seen < 2 || g < boundaryLeast || from <= n-g || g == t.model.Block && t.model.Class == CacheBoundary {
		if g < boundaryLeast {
			t.boundary.g, t.boundary.seen = from, 1 // start over from this one
		}
		return false
	}
	was := t.model.Class
	t.model.Class, t.model.Block = CacheBoundary, g
	t.why = fmt.Sprintf("the engine restarted an append at token %d of %d, and earlier ones likewise short of their ends: it keeps only the last boundary of blocks of %d", from, n, g)
	if was != CacheBoundary {
		t.why = fmt.Sprintf("the engine restarted appends short of their ends, the last at token %d of %d: it keeps only the last boundary of blocks of %d", from, n, g)
	}
	// The mirror's points were another class's or block's: those on the
	// block's grid stand (the engine's restarts among them: a state it
	// keeps), and the boundary of the prompt the engine processed last is
	// where the next append restarts.
	keep := t.engine.points[:0:0]
	for _, p := range t.engine.points {
		if p.at < from && p.at%g == 0 {
			keep = append(keep, p)
		}
	}
	t.engine.points = append(keep, checkpoint{at: from})
	return true
}

// gcd is the greatest common divisor of a and b, both at least 0.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
