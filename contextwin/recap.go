package contextwin

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Recap bounds. Entries and facts are bytes; lists are counts.
const (
	maxFact      = 240 // "key: value"; a longer line is prose, left to the note
	maxFactKey   = 48
	maxFacts     = 30
	maxEntry     = 240 // one line of what happened
	maxEntryPart = 120 // the text or one call's share of an entry
	maxHappened  = 200
	maxFiles     = 40
	maxRanges    = 8 // per file
	maxPages     = 20
	maxSearches  = 20
	notePercent  = 40      // of the budget, the note's share when the rest needs room
	noteLeast    = 10      // of the budget, the least the note keeps when the facts need room
	noteHead     = "Note:" // the note's heading; trailReserve and neededRoom count it
	factPercent  = 85      // of the budget, the most the facts may hold back from the note
)

// BuildRecap folds in.Folded into a recap that replaces in.Previous. Its
// Text is at most in.Budget bytes whatever the input ("" when not even its
// first line fits) and reads, each section left out when empty:
//
//	Recap of earlier turns, folded to fit the context window:
//	Files changed: a.go
//	Note:
//	…
//	Files changed (lines):
//	- a.go: 12-40
//	Commands run (output gone):
//	- go test ./...
//	Note:
//	<the note>
//	Facts:
//	- key: value
//	From earlier notes:
//	- a line of an earlier note no later one stated again
//	Happened, newest first:
//	- "First sentence of the assistant." read a.go 1-120 of 300; ran go test ./... → ok
//	Files (lines read):
//	- a.go: 1-120, 200-240
//	Pages fetched:
//	- https://example.com/spec
//	Searches run:
//	- "func Chat" in agent
//
// The trail comes first (trail.go): every file changed, with the lines
// its edits changed, and the newest commands run, each in its share of
// the budget. The exact facts come before the note's prose: the note takes what the
// other sections leave, but at least 40% of the budget — and never the
// room the facts it does not show need, up to 85% of the budget, though
// it keeps a tenth; past its room the note is cut, at a line end when one is near, and
// "…" marks the cut. The sections below it fill in their order and a
// lower one gets only what the higher ones leave; an item (a fact, an
// entry, a file) is shown whole or not at all, and a fact too long for
// what is left gives way to the shorter ones after it. Facts that the
// note shows word for word, or that in.Shown states as "key: value" (the
// user's messages the recap carries verbatim), are not repeated under
// Facts.
//
// The ledger holds exact facts: the lines of the note that read "key:
// value" (a list marker before them is allowed) and the previous ledger.
// Facts stated in this note come first, in the note's order; then the
// previous ledger's facts that it does not restate, in their order. A key
// stated again (compared without case) takes the newest value. A fact is
// never reworded or cut: a line over 240 bytes is not taken as a fact.
//
// What happened has one entry per folded group (an assistant's message
// and its tool results, or a user's message), newest first, then the
// previous recap's entries. Files, pages and searches are newest first and
// merged with the previous recap's. The structured fields hold these lists
// capped (the facts and the earlier notes' findings while they fit the
// budget, at least 30 facts; 200 entries, 40 files and every file changed
// besides, of at most 8 line ranges, 20 pages, 20 searches) even where
// Text had no room for them, so the next fold carries them on. When in.Note is empty the previous note
// is kept (findings.go says how a newer note leaves the older one's lines).
func BuildRecap(in RecapInput) Recap {
	var prev Recap
	if in.Previous != nil {
		prev = *in.Previous
	}
	note := tidy(in.Note)
	inherited := false
	if note == "" {
		note = tidy(prev.Note)
		inherited = note != ""
	}
	t := foldTurns(in.Folded)
	r := Recap{
		Note:     note,
		Ledger:   mergeLedger(withReportFacts(parseFacts(tidy(in.Note)), in.Folded), prev.Ledger, in.Budget),
		Findings: mergeFindings(tidy(in.Note), prev, in.Budget),
		Happened: mergeEntries(t.entries, prev.Happened),
		Files:    mergeFiles(t.files, prev.Files),
		Pages:    mergeUnique(t.pages, prev.Pages, maxPages),
		Searches: mergeUnique(t.searches, prev.Searches, maxSearches),
		Commands: mergeUnique(t.commands, prev.Commands, maxCommands),
	}
	r.Earlier = prev.Earlier
	if in.Part {
		r.Commands = nil // named by the entries, and again at the next rewrite
		t := r
		t.Files, t.named = unchanged(r.Files), r.Files
		r.Text = renderWithEarlier(t, inherited, in.Budget, in.Shown)
		return r
	}
	r.Text = renderWithEarlier(r, inherited, in.Budget, in.Shown)
	return r
}

// earlierHead introduces the user's edit of an earlier recap.
const earlierHead = "Before that (the recap as the user edited it):"

// renderWithEarlier renders the recap with the user's edit of an earlier
// one after it: the edit is carried whole when the budget allows (what
// this fold adds takes the rest), else cut like a note.
func renderWithEarlier(r Recap, inherited bool, budget int, shown string) string {
	if r.Earlier == "" {
		return renderRecap(r, inherited, budget, shown)
	}
	head := len(recapHeader) + 1
	earlier := r.Earlier
	if room := budget - head - len(earlierHead) - 2; len(earlier) > room {
		if room < 16 {
			return renderRecap(r, inherited, budget, shown)
		}
		earlier = cutNote(earlier, room)
	}
	tail := earlierHead + "\n" + earlier
	body := renderRecap(r, inherited, budget-len(tail)-1, shown+"\n"+earlier)
	if body == "" {
		body = recapHeader
	}
	return body + "\n" + tail
}

// EditedRecap is the recap that stands for the user's edit of one: its
// text as the user wrote it, and as what later folds build on.
func EditedRecap(text string) Recap {
	text = tidy(text)
	earlier := strings.TrimSpace(strings.TrimPrefix(text, recapHeader))
	return Recap{Text: text, Earlier: earlier}
}

// tidy makes text valid UTF-8 without white space at either end.
func tidy(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.TrimSpace(s)
}

// Rendering.

const recapHeader = "Recap of earlier turns, folded to fit the context window:"

// recapText writes lines while they fit in a budget. Every line is
// counted with a newline after it; the last one is dropped at the end.
type recapText struct {
	lines  []string
	used   int
	budget int
}

func (t *recapText) fits(n int) bool { return t.used+n <= t.budget }

func (t *recapText) add(line string) {
	t.lines = append(t.lines, line)
	t.used += len(line) + 1
}

// section adds head and as many items as fit, in order, stopping at the
// first that does not — or, when skip is set, passing over it to the
// ones after it.
func (t *recapText) section(head string, items []string, skip bool) {
	headed := false
	for _, it := range items {
		line := "- " + it
		need := len(line) + 1
		if !headed {
			need += len(head) + 1
		}
		if !t.fits(need) {
			if skip {
				continue
			}
			return
		}
		if !headed {
			t.add(head)
			headed = true
		}
		t.add(line)
	}
}

// sectionSize is what section would use with room for everything.
func sectionSize(head string, items []string) int {
	if len(items) == 0 {
		return 0
	}
	n := len(head) + 1
	for _, it := range items {
		n += len(it) + 3
	}
	return n
}

// happenedHead heads what happened in the folded turns, the section the
// trail follows.
const happenedHead = "Happened, newest first:"

func renderRecap(r Recap, inherited bool, budget int, shown string) string {
	t := recapText{budget: budget}
	if !t.fits(len(recapHeader) + 1) {
		return ""
	}
	t.add(recapHeader)
	t.changedNames(r, shown, trailReserve(r, budget, shown))
	// The rest of the trail stands after what happened, its room held
	// from the note and from what happened: it names what they do not.

	var files []string
	for _, f := range r.Files {
		if len(f.Ranges) > 0 || !f.Edited {
			f.Edited = false // said under the files changed, or by an entry
			files = append(files, fileLine(f))
		}
	}
	sections := []struct {
		head  string
		items []string
	}{
		{"Facts:", factLines(r.Ledger, r.Note, shown)},
		{findingsHead, r.Findings},
		{happenedHead, r.Happened},
		{"Files (lines read):", files},
		{"Pages fetched:", r.Pages},
		{"Searches run:", r.Searches},
	}

	if r.Note != "" {
		head := noteHead
		if inherited {
			head = "Note (from an earlier fold):"
		}
		rest := 0
		for _, s := range sections {
			rest += sectionSize(s.head, s.items)
		}
		avail := budget - t.used - len(head) - 2
		// The facts the note does not show are held back first: every one
		// of them when the note need not be cut for it, else up to a share
		// of the budget.
		facts := min(sectionSize("Facts:", factLines(r.Ledger, "", shown)), budget*factPercent/100)
		room := min(len(r.Note), avail, max(budget*noteLeast/100, min(avail-facts, max(budget*notePercent/100, avail-rest))))
		if room >= len(r.Note) || room >= 16 {
			cut := cutNote(r.Note, room)
			t.add(head)
			t.add(cut)
			sections[0].items = factLines(r.Ledger, cut, shown)
		} else {
			sections[0].items = factLines(r.Ledger, "", shown)
		}
	}
	for i, s := range sections {
		if s.head == findingsHead {
			t.findings(s.items)
			continue
		}
		if s.head == happenedHead {
			t.happened(r, s.head, s.items, trailReserve(r, budget, shown), shown)
			continue
		}
		t.section(s.head, s.items, i == 0)
	}
	return strings.Join(t.lines, "\n")
}

// cutNote cuts note to at most n bytes. It ends at a line when one ends
// in the second half of the room, with the ellipsis on a line of its own,
// and mid-line otherwise.
func cutNote(note string, n int) string {
	if len(note) <= n {
		return note
	}
	head := headUpTo(note, n-len("\n"+ellipsis))
	if i := strings.LastIndexByte(head, '\n'); i >= len(head)/2 {
		return strings.TrimRight(head[:i], " \t\r\n") + "\n" + ellipsis
	}
	return shorten(note, n)
}

// factLines renders the facts of the ledger that are not already shown,
// word for word, on a line of note, nor stated as "key: value" in shown.
func factLines(ledger []Fact, note, shown string) []string {
	var inNote map[Fact]bool
	for line := range strings.Lines(note) {
		if f, ok := factOf(strings.TrimSpace(line)); ok {
			if inNote == nil {
				inNote = make(map[Fact]bool)
			}
			inNote[f] = true
		}
	}
	var out []string
	for _, f := range ledger {
		if line := f.Key + ": " + f.Value; !inNote[f] && !strings.Contains(shown, line) {
			out = append(out, line)
		}
	}
	return out
}

// fileLine renders a file touched: "path: 1-120, 200-240; edited".
func fileLine(f FileTouch) string {
	var b strings.Builder
	b.WriteString(f.Path)
	for i, r := range f.Ranges {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(r.From))
		b.WriteByte('-')
		b.WriteString(strconv.Itoa(r.To))
	}
	if f.Edited {
		if len(f.Ranges) > 0 {
			b.WriteString("; edited")
		} else {
			b.WriteString(": edited")
		}
	}
	return b.String()
}

// Lists.

func mergeEntries(entries, prev []string) []string {
	out := entries
	for _, e := range prev {
		if len(out) >= maxHappened {
			break
		}
		if e = oneLine(e, maxEntry); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// mergeUnique returns items then prev, each once, at most n of them.
func mergeUnique(items, prev []string, n int) []string {
	var out []string
	seen := make(map[string]bool)
	for _, l := range [][]string{items, prev} {
		for _, s := range l {
			if len(out) >= n {
				return out
			}
			if s = oneLine(s, maxLabel); s != "" && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// files gathers the files touched, newest first: the first maxFiles of
// them, since older ones would be cut, and every file changed beyond
// them, which the recap names whatever else it drops.
type files struct {
	list []FileTouch
	at   map[string]int
}

func (fs *files) touch(path string, r LineRange, edited bool) {
	path = oneLine(path, maxLabel)
	if path == "" {
		return
	}
	i, ok := fs.at[path]
	if !ok {
		if len(fs.list) >= maxFiles && !edited {
			return
		}
		if fs.at == nil {
			fs.at = make(map[string]int)
		}
		i = len(fs.list)
		fs.at[path] = i
		fs.list = append(fs.list, FileTouch{Path: path})
	}
	f := &fs.list[i]
	if r.From > 0 && r.To >= r.From {
		f.Ranges = append(f.Ranges, r)
		if len(f.Ranges) > 8*maxRanges {
			// A file read in many pieces: merge as we go to stay small.
			f.Ranges = mergeRanges(f.Ranges, maxRanges)
		}
	}
	f.Edited = f.Edited || edited
}

// mergeFiles merges the files of this fold (newest first) with the
// previous recap's, keeping maxFiles, each with its ranges merged.
func mergeFiles(fs files, prev []FileTouch) []FileTouch {
	for _, f := range prev {
		fs.touch(f.Path, LineRange{}, f.Edited)
		if i, ok := fs.at[oneLine(f.Path, maxLabel)]; ok {
			fs.list[i].Ranges = append(fs.list[i].Ranges, f.Ranges...)
			fs.list[i].Changed = append(fs.list[i].Changed, f.Changed...)
		}
	}
	out := fs.list
	for i := range out {
		out[i].Ranges = mergeRanges(out[i].Ranges, maxRanges)
		out[i].Changed = mergeRanges(out[i].Changed, maxRanges)
	}
	return out
}

// mergeRanges sorts rs and merges those that overlap or touch (1-50 and
// 40-120 give 1-120; 1-50 and 51-60 give 1-60). If more than n remain,
// the smallest gaps between them are closed (the leftmost first on a tie)
// until n do: the span read stays covered. Ranges that are not spans of
// lines are dropped.
func mergeRanges(rs []LineRange, n int) []LineRange {
	var out []LineRange
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b LineRange) int {
		if a.From != b.From {
			return a.From - b.From
		}
		return a.To - b.To
	})
	for _, r := range sorted {
		if r.From <= 0 || r.To < r.From {
			continue
		}
		if k := len(out) - 1; k >= 0 && r.From <= out[k].To+1 {
			out[k].To = max(out[k].To, r.To)
			continue
		}
		out = append(out, r)
	}
	if len(out) <= n || n <= 0 {
		return out
	}
	// Close the len(out)-n smallest gaps; gap i lies after out[i].
	gaps := make([]int, len(out)-1)
	for i := range gaps {
		gaps[i] = i
	}
	slices.SortStableFunc(gaps, func(a, b int) int {
		return (out[a+1].From - out[a].To) - (out[b+1].From - out[b].To)
	})
	closed := make([]bool, len(out)-1)
	for _, g := range gaps[:len(out)-n] {
		closed[g] = true
	}
	merged := out[:1]
	for i := 1; i < len(out); i++ {
		if closed[i-1] {
			merged[len(merged)-1].To = out[i].To
		} else {
			merged = append(merged, out[i])
		}
	}
	return merged
}

// The folded turns. What each tool call in them tells is read in calls.go.

// turns is what foldTurns gathers, newest first.
type turns struct {
	entries  []string
	files    files
	pages    []string
	searches []string
	commands []string

	used  []bool     // scratch for group
	calls []callInfo // scratch for group
}

// foldTurns walks the folded messages back from the newest, one group at
// a time: a message that is not a tool result, with the tool results that
// follow it.
func foldTurns(msgs []Message) turns {
	var t turns
	for end := len(msgs); end > 0; {
		start := end - 1
		for start > 0 && msgs[start].Role == Tool {
			start--
		}
		t.group(msgs[start:end])
		end = start
	}
	return t
}

// group gathers one group: head (unless it is itself a tool result) and
// its results. Calls are matched to results by ToolCallID; a result no
// call claims stands alone.
func (t *turns) group(g []Message) {
	head, results := g[0], g[1:]
	if head.Role == Tool {
		head, results = Message{}, g
	}
	used := t.used[:0]
	for range results {
		used = append(used, false)
	}
	calls := t.calls[:0]
	defer func() { t.used, t.calls = used, calls[:0] }()
	for _, c := range head.ToolCalls {
		var res *Message
		for i := range results {
			if !used[i] && c.ID != "" && results[i].ToolCallID == c.ID {
				used[i] = true
				res = &results[i]
				break
			}
		}
		calls = append(calls, inspect(c, res))
	}
	for i := range results {
		if !used[i] {
			calls = append(calls, inspect(ToolCall{}, &results[i]))
		}
	}
	for i := range calls {
		t.record(&calls[i])
	}
	if len(t.entries) >= maxHappened {
		return
	}
	var parts []string
	switch head.Role {
	case User:
		parts = append(parts, userEntry(head)...)
	case Assistant:
		n := maxEntry - 2
		if len(calls) > 0 {
			n = maxEntryPart
		}
		if s := oneLine(firstSentence(head.Content), n); s != "" {
			parts = append(parts, "\""+s+"\"")
		}
	}
	for i := range calls {
		parts = append(parts, calls[i].entry())
	}
	if len(parts) == 0 {
		return
	}
	e := parts[0]
	for i, p := range parts[1:] {
		if i == 0 && strings.HasPrefix(e, "\"") {
			e += " " + p
		} else {
			e += "; " + p
		}
		if len(e) > maxEntry {
			break
		}
	}
	t.entries = append(t.entries, shorten(e, maxEntry))
}

// record notes the files, page and search a call touched.
func (t *turns) record(c *callInfo) {
	if c.failed {
		return
	}
	switch c.kind {
	case Read:
		t.files.touch(c.path, LineRange{From: c.from, To: c.to}, false)
	case Diff:
		t.recordEdit(c)
	case Command:
		t.recordCommand(c)
	case Fetch:
		// Older pages and searches than the newest few would be cut.
		if len(t.pages) < maxPages {
			if u := oneLine(c.path, maxLabel); u != "" && !slices.Contains(t.pages, u) {
				t.pages = append(t.pages, u)
			}
		}
	case Search:
		if len(t.searches) < maxSearches {
			if s := c.search(); s != "" && !slices.Contains(t.searches, s) {
				t.searches = append(t.searches, s)
			}
		}
	}
}

// firstSentence is the first sentence of s's first line that has text.
func firstSentence(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = headUpTo(s, 4*maxEntry)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.', '!', '?':
			if i+1 == len(s) || s[i+1] == ' ' {
				return s[:i+1]
			}
		case 0xE3, 0xEF: // 。 or full-width ！？ in CJK text
			for _, p := range []string{"。", "！", "？"} {
				if strings.HasPrefix(s[i:], p) {
					return s[:i+len(p)]
				}
			}
		}
	}
	return s
}
