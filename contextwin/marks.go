package contextwin

import "slices"

// Where a request changes, counted in the engine's own tokens: marks at
// the ends of the prompts it processed, and the bytes a request shares
// with the last one planned.

// tokenMark is a place in the prompt the engine processed: so many bytes
// (the fixed prefix and the messages as sizeOf counts them) are so many
// of its tokens.
type tokenMark struct{ bytes, tokens int }

// promptTail is what a chat template adds after a request's last message,
// in tokens: the assistant's header the engine generates after.
const promptTail = 2

// marksKept is how many marks the mirror keeps: a long run of appends
// leaves one a request.
const marksKept = 512

// tokensAt is the engine's token position of byte position at (the fixed
// prefix included) of a prompt that starts with the same bytes as the
// one it processed last: counted between the marks around it, at their
// density, or from the last mark at the estimate's.
func (s *Planner) tokensAt(at int) int {
	marks := s.cache.marks
	i, _ := slices.BinarySearchFunc(marks, at+1, func(m tokenMark, at int) int { return m.bytes - at })
	lo := tokenMark{}
	if i > 0 {
		lo = marks[i-1]
	}
	switch {
	case i < len(marks):
		hi := marks[i]
		return lo.tokens + int(int64(at-lo.bytes)*int64(hi.tokens-lo.tokens)/int64(hi.bytes-lo.bytes))
	case i == 0:
		return s.est.Known(at)
	}
	return lo.tokens + s.est.Known(at-lo.bytes)
}

// tokensIn is tokensAt for a byte position of msgs: counted by the marks
// up to where msgs stop being the prompt the engine processed last, and
// at the estimate's density after it.
func (s *Planner) tokensIn(msgs []Message, at int) int {
	shared, _ := s.commonBytes(msgs)
	if at <= shared {
		return s.tokensAt(at)
	}
	return s.tokensAt(shared) + s.est.Known(at-shared)
}

// mark records the prompt the engine just processed, of n tokens: the
// marks its messages share with the prompt before stay, and its end is
// one more.
func (s *Planner) mark(n int) {
	t := &s.cache
	shared, all := s.commonBytesWith(t.observed, t.observedWarm, t.sent)
	if all {
		shared = s.sentBytes(t.observed)
	}
	keep := t.marks[:0]
	for _, m := range t.marks {
		if m.bytes <= shared {
			keep = append(keep, m)
		}
	}
	end := tokenMark{bytes: s.sentBytes(t.sent), tokens: n - promptTail}
	if len(keep) == 0 || keep[len(keep)-1].bytes < end.bytes && keep[len(keep)-1].tokens < end.tokens {
		keep = append(keep, end)
	}
	if over := len(keep) - marksKept; over > 0 {
		keep = slices.Delete(keep, 1, 1+over) // the prefix's stays
	}
	t.marks = keep
}

// sentBytes is the size of the fixed prefix and msgs.
func (s *Planner) sentBytes(msgs []Message) int {
	return s.cfg.PrefixChars + s.cache.sizes.of(msgs)
}

// sizeMemo remembers the size of the last two message lists it was asked
// about, the requests the mirror compares (the one sent and the one
// observed), so that a list that extends one of them — the view lends
// its array, and a request is the last one's array with messages after —
// is summed from where that one ended: a plan costs what it added.
type sizeMemo [2]struct {
	first *Message
	n     int
	bytes int
}

// of is the sum of sizeOf over msgs.
func (m *sizeMemo) of(msgs []Message) int {
	if len(msgs) == 0 {
		return 0
	}
	k, from, n := 1, 0, 0
	for j := range m {
		if e := m[j]; e.first == &msgs[0] && e.n <= len(msgs) && e.n >= from {
			k, from, n = j, e.n, e.bytes
		}
	}
	for _, msg := range msgs[from:] {
		n += sizeOf(msg)
	}
	m[1-k] = m[k]
	m[k] = struct {
		first *Message
		n     int
		bytes int
	}{&msgs[0], len(msgs), n}
	return n
}

// commonBytes is how many bytes msgs, the fixed prefix included, share
// with the request last planned; all is set when msgs start with the
// whole of it.
func (s *Planner) commonBytes(msgs []Message) (bytes int, all bool) {
	return s.commonBytesWith(s.cache.sent, s.cache.warm, msgs)
}

// commonBytesWith is how many bytes msgs share with the request of sent
// (the warm-up's when warm).
func (s *Planner) commonBytesWith(sent []Message, warm bool, msgs []Message) (bytes int, all bool) {
	bytes = s.cfg.PrefixChars
	if warm {
		return bytes, false
	}
	if len(sent) > 0 && len(sent) <= len(msgs) && &sent[0] == &msgs[0] {
		// The same array the view lent: the same messages (View.msgs).
		return s.sentBytes(sent), true
	}
	for i, m := range sent {
		if i >= len(msgs) || !sameMessage(m, msgs[i]) {
			if i < len(msgs) && m.Role == msgs[i].Role {
				bytes += commonPrefix(m.Content, msgs[i].Content)
			}
			return bytes, false
		}
		bytes += sizeOf(m)
	}
	return bytes, true
}

// CacheModel is how the planner believes the engine reuses its cache,
// and, when the engine's figures taught it, why.
func (s *Planner) CacheModel() (m CacheModel, why string) {
	return s.cache.model, s.cache.why
}

// commonTokens is how many tokens msgs, after the fixed prefix, share
// with the request the engine processed last, as far as the planner can
// tell: the bytes before the first message that differs, in tokens.
func (s *Planner) commonTokens(msgs []Message) int {
	t := &s.cache
	if t.engine.n == 0 {
		return 0
	}
	if t.warm {
		return min(s.prefixCount(), t.engine.n)
	}
	bytes, all := s.commonBytes(msgs)
	if all {
		return t.engine.n // an append of the last request
	}
	return min(s.tokensAt(bytes), t.engine.n)
}

// sameMessage reports whether two messages render the same.
func sameMessage(a, b Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.Reasoning == b.Reasoning &&
		a.ToolCallID == b.ToolCallID && slices.Equal(a.ToolCalls, b.ToolCalls)
}

// commonPrefix is the length in bytes of the longest common prefix of a
// and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
