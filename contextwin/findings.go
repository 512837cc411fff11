package contextwin

import "strings"

// Findings: what the notes said beyond their exact facts. A note is shown
// as the recap's note until a newer note replaces it; then its lines that
// the newer note does not state again become findings, carried from fold
// to fold, newest note first, until a later note states them again. Two
// lines are one finding when they have the same label before their colon
// ("files read (4): …", "files read (3): …"), or, unlabelled, the same
// words with their numbers aside ("Progress note after 17 tool rounds."
// and "… 23 …"): the newest wins, as a fact's newest value does, so a
// count that moved on is carried once, at its newest. A fact's line is
// not a finding (the ledger carries it), nor is a heading or a line the
// note's own scaffolding, nor a line that says one of its lists is empty
// ("no edits made"): the model writes that from what its request shows,
// and after a fold it may show less than an earlier note saw.
const (
	maxFinding     = 320 // bytes of one finding; a longer line is cut
	findingCompact = 100 // bytes of a finding shown compacted
	findingsHead   = "From earlier notes:"
)

// noteFindings are the lines of note that are findings, in order.
func noteFindings(note string) []string {
	var out []string
	fence := false
	for line := range strings.Lines(note) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			fence = !fence
			continue
		}
		if line == "" || fence || heading(line) || line == ellipsis || emptyList(line) {
			continue
		}
		if _, ok := factOf(line); ok {
			continue
		}
		for _, m := range []string{"- ", "* ", "+ ", "• "} {
			line = strings.TrimPrefix(line, m)
		}
		if l := oneLine(line, maxFinding); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// emptyList reports whether line says one of the note's own lists is
// empty: "no edits made", "- No files read yet."
func emptyList(line string) bool {
	l, ok := strings.CutPrefix(normalFinding(line), "no ")
	return ok && scaffolding[strings.TrimSuffix(l, " yet")]
}

// heading reports whether line only heads what follows: a Markdown
// heading, or a short label ending in a colon ("Findings:", "**Next**:").
func heading(line string) bool {
	if strings.HasPrefix(line, "#") {
		return true
	}
	l := strings.Trim(line, "*_` ")
	return strings.HasSuffix(l, ":") && strings.Count(l, " ") < 4 || scaffolding[strings.ToLower(strings.TrimSuffix(l, ":"))]
}

// mergeFindings is the findings of a recap built with note over prev:
// the previous note's findings when note replaces it, then the previous
// findings, each once, without those note states again, while their
// compacted lines (compactFinding) fit in room bytes: the text shows as
// many as it can whole, the rest compacted. With no new note, prev's
// findings stand.
func mergeFindings(note string, prev Recap, room int) []string {
	if note == "" {
		return prev.Findings
	}
	var older []string
	if p := tidy(prev.Note); p != "" && p != note {
		older = noteFindings(p)
	}
	said := normalFinding(note)
	seen := make(map[string]bool) // the keys of the new note's lines and of those taken
	for _, l := range noteFindings(note) {
		seen[findingKey(l)] = true
	}
	var out []string
	used := 0
	for _, f := range append(older, prev.Findings...) {
		n, k := normalFinding(f), findingKey(f)
		if n == "" || seen[k] || strings.Contains(said, n) {
			continue
		}
		seen[k] = true
		c := len(compactFinding(f)) + 3
		if used+c > room {
			break
		}
		used += c
		out = append(out, f)
	}
	return out
}

// findingKey is what makes two findings one: the label of a labelled one,
// else its words (normalFinding) with each number that stands alone as
// "#".
func findingKey(f string) string {
	if k := findingLabel(f); k != "" {
		return k
	}
	w := strings.Fields(normalFinding(f))
	for i, x := range w {
		if isCount(strings.Trim(x, ".,;:()%")) {
			w[i] = "#"
		}
	}
	return strings.Join(w, " ")
}

// normalFinding is s as findings are compared: lower case, single spaces,
// without the marks of emphasis or a list.
func normalFinding(s string) string {
	s = strings.ToLower(strings.NewReplacer("*", "", "`", "", "_", " ").Replace(s))
	s = strings.Join(strings.Fields(s), " ")
	return strings.Trim(s, " .-•")
}

// findingLabel is the label of a finding that starts with one ("files
// read (4): a, b" has "files read"), "" for one that does not: the
// text before its first colon when that is a fact's key or one of the
// note's own labels (scaffolding).
func findingLabel(f string) string {
	k, v, ok := strings.Cut(f, ": ")
	k = strings.TrimSpace(k)
	if !ok || strings.TrimSpace(v) == "" || !scaffolding[factID(k)] && !validFact(Fact{Key: k, Value: "x"}) {
		return ""
	}
	return factID(k)
}

// compactFinding is a finding shown compacted: its first sentence, cut to
// findingCompact bytes.
func compactFinding(f string) string {
	return shorten(firstSentence(f), findingCompact)
}

// findings adds the findings section: each finding whole while it fits,
// else compacted to its first sentence, cut to findingCompact bytes,
// where that fits; one that fits neither way gives way to those after
// it.
func (t *recapText) findings(items []string) {
	headed := false
	for _, it := range items {
		for _, line := range []string{"- " + it, "- " + compactFinding(it)} {
			need := len(line) + 1
			if !headed {
				need += len(findingsHead) + 1
			}
			if !t.fits(need) {
				continue
			}
			if !headed {
				t.add(findingsHead)
				headed = true
			}
			t.add(line)
			break
		}
	}
}

// partNote is what a part a fold appends to a recap carries of the notes:
// the fold's new note whole (it is cut to the part's room like any note),
// unless the request shows it already, then the ledger's facts that
// neither it nor shown states. Without it the note reached the request
// only at the next rewrite, and a newer note replaced it before.
func (s *Planner) partNote(ledger []Fact, shown string) string {
	note := tidy(s.note.text)
	if note == "" || strings.Contains(shown, note) {
		return factsText(unshown(ledger, shown))
	}
	return note + "\n" + factsText(unshown(ledger, shown+"\n"+note))
}
