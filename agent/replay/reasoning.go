package replay

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// Thinking gives every reply of s that has no reasoning the reasoning a
// thinking model would have written before it, drawn from seed: the same
// recording and seed give the same text. It returns s itself when a reply
// already reasons (a recording of a thinking model), else a copy.
//
// A thinking model writes more before its reply than in it: a few hundred
// to a few thousand characters a round, about what the last results showed
// (the files, the lines, the commands) and what it will do next (the calls
// it makes), and a longer stretch before its final answer. The text is
// plain prose; no fact of the recording is repeated in it, so what a
// strategy keeps of the facts is what it keeps of the conversation.
func Thinking(s *Recording, seed uint64) *Recording {
	for _, r := range s.Rounds {
		if r.Assistant.Reasoning != "" {
			return s
		}
	}
	out := *s
	out.Rounds = make([]Round, len(s.Rounds))
	h := fnv.New64a()
	h.Write([]byte(s.Name))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	var read []contextwin.Message // the results the reply comes after
	var facts []string
	for _, f := range s.Facts {
		facts = append(facts, f.Value, "that value")
	}
	unfact := strings.NewReplacer(facts...)
	for i, r := range s.Rounds {
		r.Assistant.Reasoning = unfact.Replace(reasoningFor(rng, r, read, i == len(s.Rounds)-1))
		out.Rounds[i] = r
		read = r.Results
	}
	return &out
}

// reasoningFor is one reply's reasoning: what the user asked (when they
// did), what each result before it showed, then why the calls it makes.
func reasoningFor(rng *rand.Rand, r Round, read []contextwin.Message, last bool) string {
	var b strings.Builder
	if u := withoutFacts(r.User); u != "" {
		fmt.Fprintf(&b, "The user asks: %q. ", clipWords(u, 30))
		b.WriteString(pickOne(rng, thinkOpeners))
	}
	for _, m := range read {
		b.WriteString(aboutResult(rng, m))
	}
	for _, c := range r.Assistant.ToolCalls {
		fmt.Fprintf(&b, "%s%s with %s. ", pickOne(rng, thinkNext), c.Name, clipWords(c.Arguments, 12))
	}
	// The thinking a model does beyond what it read: a few sentences of
	// weighing, more before an answer.
	n := 2 + rng.IntN(7)
	if last || len(r.Assistant.ToolCalls) == 0 {
		n += 6 + rng.IntN(10)
	}
	for range n {
		b.WriteString(pickOne(rng, thinkWeighing))
	}
	return strings.TrimSpace(b.String())
}

// aboutResult is what the model thinks of one result: its kind and place,
// and a line of it, quoted.
func aboutResult(rng *rand.Rand, m contextwin.Message) string {
	p := m.Payload
	var b strings.Builder
	switch p.Kind {
	case contextwin.Read:
		fmt.Fprintf(&b, "The read of %s shows lines %d to %d of %d. ", p.Path, p.From, p.To, p.Total)
	case contextwin.Search:
		fmt.Fprintf(&b, "The search for %s found %d lines. ", p.Path, strings.Count(m.Content, "\n"))
	case contextwin.Command:
		fmt.Fprintf(&b, "The command %s printed %d lines. ", clipWords(p.Path, 10), strings.Count(m.Content, "\n"))
	case contextwin.Diff:
		fmt.Fprintf(&b, "The edit of %s went in. ", p.Path)
	default:
		fmt.Fprintf(&b, "The result holds %d bytes. ", len(m.Content))
	}
	if line := quotable(rng, m.Content); line != "" {
		fmt.Fprintf(&b, "One line stands out: %q. ", line)
	}
	b.WriteString(pickOne(rng, thinkRead))
	return b.String()
}

// quotable is a line of text to quote: not a planted fact, at most 120
// bytes, picked at random among a few tries; "" when none is found.
func quotable(rng *rand.Rand, text string) string {
	lines := strings.Split(text, "\n")
	for range 4 {
		l := strings.TrimSpace(lines[rng.IntN(len(lines))])
		if _, after, ok := strings.Cut(l, "\t"); ok {
			l = strings.TrimSpace(after) // a numbered line's text
		}
		if len(l) >= 12 && len(l) <= 120 && !strings.Contains(l, "FACT") {
			return l
		}
	}
	return ""
}

// withoutFacts is text without its planted facts' lines.
func withoutFacts(text string) string {
	var keep []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.Contains(l, "FACT") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// clipWords is s cut to its first n words.
func clipWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		return strings.Join(f[:n], " ") + " …"
	}
	return strings.Join(f, " ")
}

func pickOne(rng *rand.Rand, from []string) string { return from[rng.IntN(len(from))] + " " }

var thinkOpeners = []string{
	"Before touching anything I should find where this lives and what depends on it.",
	"I need to understand the current behaviour first, then change as little as possible.",
	"Let me start from the entry point and follow the calls down.",
	"This is probably a small change, but the callers may rely on the old behaviour, so check them first.",
}

var thinkRead = []string{
	"That matches what I expected from the names.",
	"So the logic I care about is here, not in the caller.",
	"Nothing there contradicts the plan, but the error path is not obvious yet.",
	"This is more code than I need; the part that matters is the loop near the end.",
	"Hmm, that is not quite what I assumed: the state is kept on the struct, not passed in.",
	"Good, the tests cover this path, so a change here will be checked.",
	"It confirms the previous step; I can stop looking in this direction.",
}

var thinkNext = []string{
	"Next I will call",
	"The quickest way to confirm it is",
	"To see the rest I should use",
	"So now:",
}

var thinkWeighing = []string{
	"Wait, I should double-check whether the value is copied or shared before I rely on it.",
	"There are two ways to do this: change the caller, or change the function itself; the second keeps the change in one place.",
	"I must not forget the error case: when the input is empty the function returns early, and the new code must too.",
	"The names in this package are consistent, so the new function should follow them.",
	"Let me reconsider the order of the steps: reading before editing avoids a wrong guess about the surrounding code.",
	"If the tests fail after this, the first suspect is the boundary condition at the end of the range.",
	"I have enough context for this step; more reading would only fill the window.",
	"The user asked for a focused change, so I will leave the unrelated code alone even though it could be tidier.",
	"Actually, the comment above the function says what it must guarantee; the change has to keep that guarantee.",
	"Let me summarise what I know so far: where the code is, what calls it, and what the tests expect.",
}
