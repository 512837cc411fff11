package contextwin

import (
	"slices"
	"strconv"
	"strings"
)

// The trail: what the session changed and what it ran. A rewritten recap
// names the files changed on the line after its header (changedNames),
// before the note, in what the exact facts leave of its budget, so that a
// note that fills the rest leaves them named. Then it names every file
// changed, with the lines its edits changed, and the
// newest commands run, after what happened; a file or command an entry
// shown names is not named again. When the entries shown leave a file
// changed unnamed, they give up the room its line needs (happened), so
// that a tight rewrite that drops the older entries still names the
// files they edited. A part appended to a recap names the files changed
// on its line too, and leaves the rest to its entries and to the next
// rewrite, which merges the lists. A model that
// cannot see which files it edited edits them again.

const (
	maxCommands = 20
	// trailShare is the most of a recap's budget, in percent, the files
	// changed take, the newest first; in a small recap (a middle recap's
	// part) they may take up to trailLeast bytes. The newest commands
	// take up to commandShare more, or commandLeast bytes.
	trailShare   = 30
	trailLeast   = 400
	commandShare = 15
	commandLeast = 240
	// trailCommands is how many of the newest commands the trail names.
	trailCommands = 4
)

// Headings of the trail in the recap.
const (
	changedHead      = "Files changed (lines):"
	changedNamesHead = "Files changed:"
	commandsHead     = "Commands run (output gone):"
)

// trail adds the files changed, with the lines their edits changed, and
// the newest commands run, each within its share of the budget, leaving
// reserve bytes of it. What shown (the request beside this recap, an
// older part of it, what happened as the recap tells it) names already
// is not named again: a file its entries say was edited, a command they
// say was run.
func (t *recapText) trail(r Recap, reserve int, shown string) {
	var changed, commands []string
	for _, f := range r.Files {
		if line := changedLine(f); f.Edited && !strings.Contains(shown, "- "+line+"\n") && !strings.Contains(shown, "edited "+f.Path) {
			changed = append(changed, line)
		}
	}
	for _, c := range r.Commands[:min(len(r.Commands), trailCommands)] {
		if !strings.Contains(shown, "- "+c+"\n") && !strings.Contains(shown, "ran "+c) {
			commands = append(commands, c)
		}
	}
	full := t.budget
	t.budget = min(full-reserve, t.used+max(full*trailShare/100, trailLeast))
	t.section(changedHead, changed, true)
	t.budget = min(full-reserve, t.used+max(full*commandShare/100, commandLeast))
	t.section(commandsHead, commands, false)
	t.budget = full
}

// changedNames adds the line naming the files changed that shown does
// not name, "Files changed: a.go, b.go", right after the header, in what
// the budget leaves after reserve bytes (trailReserve: the exact facts
// come first): a rewrite whose note fills the rest still names every file
// the session changed (their lines follow what happened when there is
// room). (Held to trailShare of the budget, a recorded session of 27
// files changed named 16 of them in its last request at 16k.)
func (t *recapText) changedNames(r Recap, shown string, reserve int) {
	var b strings.Builder
	limit := t.budget - reserve
	files := r.Files
	if r.named != nil {
		files = r.named
	}
	for _, f := range files {
		if !f.Edited || strings.Contains(shown, f.Path) {
			continue
		}
		sep := ", "
		if b.Len() == 0 {
			sep = changedNamesHead + " "
		}
		if t.used+b.Len()+len(sep)+len(f.Path)+1 > limit {
			continue
		}
		b.WriteString(sep + f.Path)
	}
	if b.Len() > 0 {
		t.add(b.String())
	}
}

// happened adds what happened, then the trail. When the entries shown
// leave a file changed unnamed, they are shown again in less room: the
// room that file's line needs is held from them (up to the trail's share,
// leaving reserve bytes of the budget).
func (t *recapText) happened(r Recap, head string, items []string, reserve int, shown string) {
	lines, used := len(t.lines), t.used
	t.section(head, items, false)
	said := func() string { return shown + "\n" + strings.Join(t.lines, "\n") + "\n" }
	need := recapText{budget: t.budget, used: len(recapHeader) + 1}
	need.trail(Recap{Files: r.Files}, reserve, said())
	if n := need.used - len(recapHeader) - 1; n > 0 {
		t.lines, t.used = t.lines[:lines], used
		t.budget -= n
		t.section(head, items, false)
		t.budget += n
	}
	t.trail(r, 0, said())
}

// trailReserve is what the trail leaves of a recap's budget: the room
// the exact facts it does not show elsewhere need (as renderRecap holds
// them back from the note), and the tenth the note keeps.
func trailReserve(r Recap, budget int, shown string) int {
	n := min(sectionSize("Facts:", factLines(r.Ledger, "", shown)), budget*factPercent/100)
	if r.Note != "" {
		n += budget*noteLeast/100 + len(noteHead) + 2
	}
	return n
}

// changedLine renders a file changed: "path: 12-40, 88-90", or "path:
// changed" when no hunk said which lines. The lines read are under Files.
func changedLine(f FileTouch) string {
	var b strings.Builder
	b.WriteString(f.Path)
	b.WriteString(": ")
	if len(f.Changed) == 0 {
		b.WriteString("changed")
	}
	writeRanges(&b, f.Changed)
	return b.String()
}

func writeRanges(b *strings.Builder, rs []LineRange) {
	for i, r := range rs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(r.From))
		if r.To != r.From {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(r.To))
		}
	}
}

// recordEdit notes the files an edit changed, and the lines its hunks
// changed in each.
func (t *turns) recordEdit(c *callInfo) {
	content := ""
	if c.res != nil {
		content = c.res.Content
	}
	spans := editSpans(content)
	for _, p := range c.paths() {
		t.files.touch(p, LineRange{}, true)
		i, ok := t.files.at[oneLine(p, maxLabel)]
		if !ok {
			continue
		}
		rs := spans[p]
		if len(spans) == 1 && rs == nil {
			for _, v := range spans {
				rs = v // one file's hunks, its headers naming it otherwise
			}
		}
		f := &t.files.list[i]
		f.Changed = mergeRanges(append(f.Changed, rs...), maxRanges)
	}
}

// recordCommand notes a command run, newest first, each once.
func (t *turns) recordCommand(c *callInfo) {
	if len(t.commands) >= maxCommands {
		return
	}
	if s := oneLine(c.path, maxLabel); s != "" && !slices.Contains(t.commands, s) {
		t.commands = append(t.commands, s)
	}
}

// editSpans reads the lines a unified diff changed in the new file, by
// file ("" for hunks before any file header): a hunk "@@ -a,b +c,d @@"
// spans c to c+d-1 (c alone when d is 0).
func editSpans(content string) map[string][]LineRange {
	var out map[string][]LineRange
	path := ""
	for line := range strings.Lines(content) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "+++ "):
			path = diffPath(line[4:])
		case strings.HasPrefix(line, "@@ "):
			r, ok := hunkSpan(line)
			if !ok {
				continue
			}
			if out == nil {
				out = make(map[string][]LineRange)
			}
			out[path] = append(out[path], r)
		}
	}
	return out
}

// hunkSpan is the new file's lines of a hunk header "@@ -a,b +c,d @@".
func hunkSpan(line string) (LineRange, bool) {
	i := strings.Index(line, " +")
	if i < 0 {
		return LineRange{}, false
	}
	spec, _, _ := strings.Cut(line[i+2:], " ")
	from, n := spec, "1"
	if a, b, ok := strings.Cut(spec, ","); ok {
		from, n = a, b
	}
	c, err1 := strconv.Atoi(from)
	d, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil || c < 0 || d < 0 {
		return LineRange{}, false
	}
	c = max(c, 1)
	return LineRange{From: c, To: c + max(d, 1) - 1}, true
}

// unchanged is fs without the files changed: a part's Files section
// names the lines its turns read, its entries the files they edited.
func unchanged(fs []FileTouch) []FileTouch {
	out := slices.Clone(fs)
	for i := range out {
		out[i].Edited = false
	}
	return out
}
