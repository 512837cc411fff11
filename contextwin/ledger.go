package contextwin

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The ledger.

// parseFacts returns the "key: value" lines of note in order; a key given
// twice keeps its first place and takes its last value.
func parseFacts(note string) []Fact {
	var facts []Fact
	var at map[string]int
	fence := ""
	for line := range strings.Lines(note) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			switch f := line[:3]; {
			case fence == "":
				fence = f
			case fence == f:
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		f, ok := factOf(line)
		if !ok {
			continue
		}
		k := factID(f.Key)
		if i, ok := at[k]; ok {
			facts[i] = f
			continue
		}
		if at == nil {
			at = make(map[string]int)
		}
		at[k] = len(facts)
		facts = append(facts, f)
	}
	return facts
}

// factOf reads a line of a note as a fact: "key: value", after an optional
// list marker, with the key in bold or code marks allowed.
func factOf(line string) (Fact, bool) {
	for _, m := range []string{"- ", "* ", "+ ", "• "} {
		if strings.HasPrefix(line, m) {
			line = strings.TrimLeft(line[len(m):], " ")
			break
		}
	}
	if i := strings.IndexAny(line, ".)"); i > 0 && i <= 3 && strings.Trim(line[:i], "0123456789") == "" && strings.HasPrefix(line[i+1:], " ") {
		line = strings.TrimLeft(line[i+1:], " ")
	}
	// "**key:** value" puts the colon inside the marks.
	for _, m := range []string{"**", "`"} {
		if i := strings.Index(line, ":"+m+" "); i > 0 && strings.HasPrefix(line, m) {
			line = line[:i] + m + ":" + line[i+1+len(m):]
			break
		}
	}
	key, value, ok := strings.Cut(line, ": ")
	if k, v, ok2 := strings.Cut(line, "："); ok2 && (!ok || len(k) < len(key)) {
		key, value, ok = k, v, true
	}
	if !ok {
		return Fact{}, false
	}
	key = strings.TrimSpace(strings.Trim(strings.TrimSpace(key), "*`"))
	f := Fact{Key: key, Value: strings.TrimSpace(value)}
	return f, validFact(f)
}

// validFact reports whether f can stand in the ledger: a key that is a
// label (at most four words and maxFactKey bytes, starting with a letter,
// no sentence punctuation) and a one-line value, together at most maxFact
// bytes.
func validFact(f Fact) bool {
	k, v := f.Key, f.Value
	if k == "" || v == "" || len(k) > maxFactKey || len(k)+2+len(v) > maxFact {
		return false
	}
	if !utf8.ValidString(k) || !utf8.ValidString(v) || strings.TrimSpace(v) != v || strings.ContainsAny(v, "\n\r") {
		return false
	}
	words := 1
	for i, r := range k {
		switch {
		case i == 0 && !unicode.IsLetter(r):
			return false
		case r == ' ':
			if k[i-1] == ' ' {
				return false
			}
			words++
		case unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_/.()'&+#", r):
		default:
			return false
		}
	}
	return words <= 4 && k[len(k)-1] != ' ' && !scaffolding[factID(k)]
}

// scaffolding are the labels of a note's own structure — what it is about,
// what was read, what comes next — which the recap's other sections carry;
// the ledger keeps exact facts only.
var scaffolding = map[string]bool{
	"task": true, "the task": true, "goal": true, "plan": true, "next": true, "next step": true, "next steps": true,
	"status": true, "progress": true, "note": true, "summary": true, "established so far": true,
	"files read": true, "files edited": true, "edits made": true, "edits": true, "searches": true,
	"searched": true, "searches run": true, "commands run": true, "findings": true, "done": true, "todo": true,
	"listings": true, "names": true, "names that matter": true, "files": true, "files touched": true, "files changed": true,
}

// factID is what makes two keys the same fact: case aside, and a count
// in parentheses aside — "Edits made (13)" and "edits made (14)" are one
// fact, whose newest value wins.
func factID(key string) string {
	k := strings.ToLower(strings.TrimSpace(key))
	if i := strings.LastIndexByte(k, '('); i > 0 && strings.HasSuffix(k, ")") && isCount(k[i+1:len(k)-1]) {
		k = strings.TrimSpace(k[:i])
	}
	return k
}

func isCount(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// withReportFacts adds to the note's facts those the subagents' reports
// among folded state ("key: value" lines), newest report first, where the
// note does not state their key: a report's facts enter the ledger when
// it is folded, as a note's do.
func withReportFacts(facts []Fact, folded []Message) []Fact {
	seen := make(map[string]bool, len(facts))
	for _, f := range facts {
		seen[factID(f.Key)] = true
	}
	for i := len(folded) - 1; i >= 0; i-- {
		m := folded[i]
		if m.Role != Tool || m.Payload.Kind != Report {
			continue
		}
		for _, f := range parseFacts(m.Content) {
			if !seen[factID(f.Key)] {
				seen[factID(f.Key)] = true
				facts = append(facts, f)
			}
		}
	}
	return facts
}

// mergeLedger puts the note's facts first, then the previous facts whose
// keys the note does not state: the first maxFacts of them, and more while
// their lines fit in room bytes (the recap's budget).
func mergeLedger(facts, prev []Fact, room int) []Fact {
	out := slices.Clone(facts)
	seen := make(map[string]bool, len(out)+len(prev))
	used := 0
	for _, f := range out {
		seen[factID(f.Key)] = true
		used += len(f.Key) + len(f.Value) + 5
	}
	for _, f := range prev {
		n := len(f.Key) + len(f.Value) + 5
		if len(out) >= maxFacts && used+n > room {
			break
		}
		if id := factID(f.Key); validFact(f) && !seen[id] {
			seen[id] = true
			used += n
			out = append(out, f)
		}
	}
	return out
}
