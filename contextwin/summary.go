package contextwin

import (
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Summary bounds, in bytes.
const (
	// keepBelow: a result shorter than this keeps its bytes when shed.
	keepBelow = 300
	// keepPercent: a result whose summary would be at least this share
	// of it keeps its bytes.
	keepPercent = 60

	maxSummary     = 2048 // a whole summary, marker included
	maxSummaryLine = 120  // one outline entry, hunk header or output line
	maxLabel       = 200  // the path, pattern, command or URL of a header
	maxOutline     = 40   // outline entries before "… and K more"
	maxHunks       = 20   // hunk headers before "… and K more"
	searchHead     = 5    // opening lines a search keeps
	commandTail    = 5    // closing lines a command keeps
	commandHead    = 3    // opening lines a long command output keeps
	openingBytes   = 300  // what a fetch or another result keeps
	reportBytes    = 600  // what a subagent report keeps
)

// ellipsis marks text that was cut.
const ellipsis = "…"

// Summarize returns what a shed tool result becomes: a few lines that say
// what the result was and how to get it back, at most 2 KB whatever the
// content. By m.Payload.Kind:
//
//	Read     "Read PATH lines A-B of N", then the top-level declarations
//	         (Markdown headings, YAML keys, TOML tables) with line numbers
//	Diff     "Edited PATH (+A -D)" for each file, then its hunk headers
//	Search   "Search "PATTERN": K lines of results", then the first lines;
//	         for a navigation answer (locations with their lines indented
//	         below them) every unindented line: the locations
//	Command  "Ran COMMAND: K lines of output", then the last lines
//	Fetch    "Fetched URL: K bytes", then the opening
//	Report   the first paragraph of a subagent's report
//	Other    the opening
//
// and a last line in brackets that says the result was shed and how to get
// it back (run again, read the file, or read Payload.Spill). Listed lines
// are cut to 120 bytes; an outline shows at most 40 declarations and a
// diff 20 hunk headers, then "… and K more".
//
// keep reports that the result is not worth shedding: its content is under
// 300 bytes, or the summary would be 60% of its size or more, or it is the
// payload that defines the task. The summary is returned all the same. A
// message that is not a tool result has no summary: ("", true).
func Summarize(m Message) (summary string, keep bool) {
	if m.Role != Tool {
		return "", true
	}
	p := m.Payload
	var s string
	switch p.Kind {
	case Read:
		s = summarizeRead(m.Content, p)
	case Diff:
		s = summarizeDiff(m.Content, p)
	case Search:
		s = summarizeSearch(m.Content, p)
	case Command:
		s = summarizeCommand(m.Content, p)
	case Fetch:
		s = summarizeOpening(m.Content, p, "Fetched "+label(p.Path, "a page")+": "+strconv.Itoa(len(m.Content))+" bytes", openingBytes, "fetch the page again for its text")
	case Report:
		s = summarizeOpening(firstParagraph(m.Content), p, "Subagent report, "+strconv.Itoa(len(m.Content))+" bytes; its opening:", reportBytes, "the rest of the report is gone")
	default:
		s = summarizeOpening(m.Content, p, "Tool output, "+strconv.Itoa(len(m.Content))+" bytes; its opening:", openingBytes, "run the tool again for its output")
	}
	keep = p.Task || len(m.Content) < keepBelow || len(s)*100 >= len(m.Content)*keepPercent
	return s, keep
}

// summary collects a summary's lines inside maxSummary, leaving room for
// the closing marker.
type summary struct {
	b      strings.Builder
	marker string
}

func newSummary(p Payload, how string) *summary {
	m := "[shed to save context: " + how + "]"
	if p.Spill != "" {
		m = "[shed to save context: the full output is in " + label(p.Spill, "a file") + "]"
	}
	return &summary{marker: m}
}

// room is how many bytes the body may still take, reserving some for a
// closing "… and K more" line.
func (s *summary) room(reserve int) int {
	return maxSummary - len(s.marker) - s.b.Len() - reserve
}

// add appends line if it fits in what is left after reserve bytes.
func (s *summary) add(line string, reserve int) bool {
	if len(line)+1 > s.room(reserve) {
		return false
	}
	s.b.WriteString(line)
	s.b.WriteByte('\n')
	return true
}

// more is the line that counts what did not fit; it fits in moreReserve.
func more(n int, what string) string {
	return "  " + ellipsis + " and " + plural(n, "more "+what)
}

// plural counts what in English: "1 line", "2 lines" (what takes an s).
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

const moreReserve = 40

func (s *summary) String() string {
	return s.b.String() + s.marker
}

// label makes s fit on a header line: one line, valid UTF-8, at most
// maxLabel bytes; alt stands in when s is empty.
func label(s, alt string) string {
	s = oneLine(s, maxLabel)
	if s == "" {
		return alt
	}
	return s
}

// oneLine returns s on one line — each run of white space (newlines
// included) becomes one space, invalid UTF-8 becomes U+FFFD — cut to at
// most n bytes with an ellipsis when it is longer. It looks at no more of
// s than it needs, so a megabyte-long line costs no more than a short one.
func oneLine(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n && plainLine(s) {
		return s
	}
	var b strings.Builder
	space := false
	cut := false
	for i := 0; i < len(s); {
		if b.Len() > n {
			cut = true
			break
		}
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			space = b.Len() > 0
			i++
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if c < utf8.RuneSelf {
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // U+FFFD for a bad byte
		i += size
	}
	out := b.String()
	if !cut && len(out) <= n {
		return out
	}
	return shorten(out, n)
}

// oneLineTail is oneLine keeping the end of s rather than its start: the
// end of a long line of output is where its verdict is.
func oneLineTail(s string, n int) string {
	if n <= 0 {
		return ""
	}
	l := oneLine(tailUpTo(s, 4*n), 16*n)
	if len(l) <= n {
		return l
	}
	if n < len(ellipsis)+1 {
		return tailUpTo(l, n)
	}
	return ellipsis + tailUpTo(l, n-len(ellipsis))
}

// plainLine reports whether oneLine would leave s as it is: printable
// ASCII, single spaces between words.
func plainLine(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			if i == 0 || i == len(s)-1 || s[i-1] == ' ' {
				return false
			}
			continue
		}
		if c <= ' ' || c >= utf8.RuneSelf || c == 0x7f {
			return false
		}
	}
	return true
}

// shorten cuts s to at most n bytes, ending it with an ellipsis when it
// was cut and there is room for one.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < len(ellipsis)+1 {
		return headUpTo(s, n)
	}
	return headUpTo(s, n-len(ellipsis)) + ellipsis
}

// opening returns the start of s as a block of at most n bytes: valid
// UTF-8, blank lines at either end dropped, an ellipsis where it was cut.
func opening(s string, n int) string {
	if n <= 0 {
		return ""
	}
	const ws = " \t\r\n"
	s = strings.TrimRight(strings.TrimLeft(s, ws), ws)
	if len(s) <= n && utf8.ValidString(s) {
		return s
	}
	h := headUpTo(s, n)
	if !utf8.ValidString(h) {
		h = strings.ToValidUTF8(h, "\uFFFD")
	}
	return strings.TrimRight(headUpTo(h, n-len(ellipsis)), ws) + ellipsis
}

// firstParagraph is s up to its first blank line.
func firstParagraph(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return s
		}
		i += j + 1
		rest := s[i:]
		k := strings.IndexByte(rest, '\n')
		if k < 0 {
			k = len(rest)
		}
		if strings.TrimSpace(rest[:k]) == "" {
			return s[:i]
		}
	}
}

// countLines is the number of lines in s: its newlines, plus one for a
// last line with none.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

func summarizeOpening(content string, p Payload, head string, n int, how string) string {
	s := newSummary(p, how)
	s.add(head, 0)
	if o := opening(content, min(n, s.room(1))); o != "" {
		s.add(o, 0)
	}
	return s.String()
}

func summarizeSearch(content string, p Payload) string {
	s := newSummary(p, "run the search again for its results")
	head := "Search results"
	if p.Path != "" {
		head = "Search \"" + label(p.Path, "") + "\""
	}
	s.add(head+": "+plural(countLines(content), "line")+" of results", 0)
	if hasSnippets(content) {
		summarizeLocations(s, content)
		return s.String()
	}
	shown := 0
	for line := range strings.Lines(content) {
		if shown >= searchHead {
			break
		}
		line = strings.TrimSuffix(line, "\n")
		if l := oneLine(line, maxSummaryLine-2); l != "" {
			s.add("  "+l, 0)
			shown++
		}
	}
	return s.String()
}

// hasSnippets reports whether a search's lines have numbered lines under
// them, as a read numbers a file's ("     6\tfunc Open("): the navigation
// tools' answers (definition, references) list each location unindented,
// its declaration's lines numbered below it. grep and glob number none.
func hasSnippets(content string) bool {
	for line := range strings.Lines(content) {
		t := strings.TrimLeft(line, " ")
		if len(t) == len(line) {
			continue
		}
		digits := len(t) - len(strings.TrimLeft(t, "0123456789"))
		if digits > 0 && digits < len(t) && t[digits] == '\t' {
			return true
		}
	}
	return false
}

// summarizeLocations keeps a navigation answer's unindented lines (its
// approximate line, its head, every location) and drops the snippets: a
// shed answer still says where, which is what the model asked.
func summarizeLocations(s *summary, content string) {
	var lines []string
	for line := range strings.Lines(content) {
		if line[0] != ' ' && line[0] != '\t' {
			if l := oneLine(strings.TrimSuffix(line, "\n"), maxSummaryLine-2); l != "" {
				lines = append(lines, l)
			}
		}
	}
	for i, l := range lines {
		if !s.add("  "+l, moreReserve) {
			s.add(more(len(lines)-i, "line"), 0)
			return
		}
	}
}

func summarizeCommand(content string, p Payload) string {
	s := newSummary(p, "run the command again for its output")
	head := "Ran a command"
	if p.Path != "" {
		head = "Ran " + label(p.Path, "")
	}
	n := countLines(content)
	s.add(head+": "+plural(n, "line")+" of output", 0)
	// The opening says what ran and with what (versions, the run's
	// settings); the closing lines what came of it (results, the exit
	// status); the failure block between them what failed and why
	// (failureBlock). They stay; the rest of the middle goes.
	lines := strings.Split(strings.TrimRight(content, "\n"), "\n")
	var first, block, tail []int
	for i := 0; i < len(lines) && len(first) < commandHead; i++ {
		if commandLine(lines[i]) != "" {
			first = append(first, i)
		}
	}
	for i := len(lines) - 1; i >= 0 && len(tail) < commandTail; i-- {
		if commandLine(lines[i]) != "" {
			tail = append([]int{i}, tail...)
		}
	}
	if n <= commandHead+commandTail+1 {
		first = nil // short: the closing lines say it all
	}
	if len(tail) > 0 {
		from := 0
		if len(first) > 0 {
			from = first[len(first)-1] + 1
		}
		block = failureBlock(lines, from, tail[0])
	}
	last := -1
	for _, part := range [][]int{first, block, tail} {
		for _, i := range part {
			if last >= 0 && !blankBetween(lines, last, i) {
				s.add("  …", 0)
			}
			s.add("  "+commandLine(lines[i]), 0)
			last = i
		}
	}
	return s.String()
}

// blankBetween reports whether lines strictly between a and b are blank:
// nothing between two shown lines was left out.
func blankBetween(lines []string, a, b int) bool {
	for _, l := range lines[a+1 : b] {
		if strings.TrimSpace(l) != "" {
			return false
		}
	}
	return true
}

// commandLine is a line of a command's output as a summary shows it: one
// line, its end kept when it is long; "" for a blank one.
func commandLine(line string) string {
	return oneLineTail(strings.TrimRight(line, "\r"), maxSummaryLine-2)
}

// Reads.

// numbered splits a line of a numbered listing — cat -n's "    12\tcode",
// "12\tcode", "12: code" or "12→code" — into its number and its code.
func numbered(line string) (n int, code string, ok bool) {
	i := 0
	for i < len(line) && i < 16 && line[i] == ' ' {
		i++
	}
	start := i
	for i < len(line) && i-start < 10 && '0' <= line[i] && line[i] <= '9' {
		n = n*10 + int(line[i]-'0')
		i++
	}
	if i == start {
		return 0, "", false
	}
	rest := line[i:]
	switch {
	case strings.HasPrefix(rest, "\t"):
		return n, rest[1:], true
	case strings.HasPrefix(rest, "→"):
		return n, rest[len("→"):], true
	case strings.HasPrefix(rest, ": "):
		return n, rest[2:], true
	case rest == ":" || rest == "":
		return n, "", true
	}
	return 0, "", false
}

// lineNumbering reports whether content is a numbered listing: its first
// line is numbered and so is the next, one further.
func lineNumbering(content string) bool {
	first, rest, _ := strings.Cut(content, "\n")
	n, _, ok := numbered(strings.TrimSuffix(first, "\r"))
	if !ok || rest == "" {
		return ok && first != "" && strings.TrimSpace(first) != strconv.Itoa(n)
	}
	second, _, _ := strings.Cut(rest, "\n")
	m, _, ok := numbered(strings.TrimSuffix(second, "\r"))
	return ok && m == n+1
}

// outlineKind is how a read's outline finds its entries.
type outlineKind int

const (
	outlineCode     outlineKind = iota // declarations, any language
	outlineCFamily                     // declarations, and C-style function definitions
	outlineMarkdown                    // headings
	outlineYAML                        // top-level keys
	outlineTOML                        // tables
	outlineNone                        // data and text: no outline
)

func outlineFor(p string) outlineKind {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown", ".mdx", ".mdown":
		return outlineMarkdown
	case ".yaml", ".yml":
		return outlineYAML
	case ".toml", ".ini", ".cfg":
		return outlineTOML
	case ".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".ino", ".cu", ".java", ".cs", ".m", ".mm":
		return outlineCFamily
	case ".json", ".jsonl", ".txt", ".log", ".csv", ".tsv", ".lock", ".sum", ".svg", ".xml", ".html", ".htm", ".css":
		return outlineNone
	}
	return outlineCode
}

// Words that may stand before a declaration's keyword.
var declModifiers = map[string]bool{
	"async": true, "public": true, "private": true, "protected": true, "internal": true,
	"static": true, "final": true, "abstract": true, "declare": true, "unsafe": true,
	"extern": true, "inline": true, "sealed": true, "open": true, "override": true,
	"data": true, "default": true, "partial": true, "local": true, "export": true,
}

// Keywords that open a top-level declaration in some common language.
var declKeywords = map[string]bool{
	// Go
	"func": true, "type": true, "var": true, "const": true,
	// Python, Ruby
	"def": true, "class": true, "module": true,
	// JavaScript, TypeScript
	"function": true, "function*": true, "let": true, "interface": true, "enum": true, "namespace": true,
	// Rust
	"fn": true, "struct": true, "trait": true, "impl": true, "mod": true, "union": true, "macro_rules!": true,
	// C, C++, Java, Kotlin, Swift
	"typedef": true, "template": true, "record": true, "object": true, "fun": true, "protocol": true, "extension": true,
}

// Words that start a C-like statement rather than a definition.
var cStatements = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "return": true, "else": true,
	"do": true, "case": true, "goto": true, "sizeof": true, "using": true, "import": true,
	"package": true, "include": true,
}

// word splits off the first word of s (up to white space or one of
// "(<{:=;[,").
func word(s string) (w, rest string) {
	i := 0
	for i < len(s) && !strings.ContainsRune(" \t(<{:=;[,", rune(s[i])) {
		i++
	}
	return s[:i], strings.TrimLeft(s[i:], " \t")
}

// outliner finds the top-level declarations of a file line by line.
type outliner struct {
	kind  outlineKind
	fence string // the Markdown code fence we are inside, if any
}

// decl reports whether code, one line of the file, opens a top-level
// declaration. Only unindented lines can.
func (o *outliner) decl(code string) bool {
	if code == "" {
		return false
	}
	if o.kind == outlineMarkdown {
		t := strings.TrimLeft(code, " ")
		if len(code)-len(t) < 4 && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
			f := t[:3]
			switch {
			case o.fence == "":
				o.fence = f
			case o.fence == f:
				o.fence = ""
			}
			return false
		}
		if o.fence != "" || code[0] != '#' {
			return false
		}
		h := strings.TrimLeft(code, "#")
		return len(code)-len(h) <= 6 && (h == "" || h[0] == ' ' || h[0] == '\t')
	}
	c := code[0]
	if c == ' ' || c == '\t' || c == '\r' {
		return false
	}
	switch o.kind {
	case outlineNone:
		return false
	case outlineYAML:
		return c != '#' && c != '-' && c != '}' && c != ']' && strings.Contains(code, ":")
	case outlineTOML:
		return c == '['
	}
	if len(code) > 256 {
		code = code[:256] // a declaration shows itself early; a bundle's line is long
	}
	w, rest := word(code)
	if w == "export" || w == "pub" || strings.HasPrefix(w, "pub(") {
		return true
	}
	for declModifiers[w] && rest != "" {
		w, rest = word(rest)
	}
	if declKeywords[w] {
		return true
	}
	if o.kind != outlineCFamily {
		return false
	}
	if strings.HasPrefix(code, "#define ") {
		return true
	}
	return cFunction(code)
}

// cFunction reports whether code looks like the head of a C-style function
// definition: at least two words (a type and a name) before "(", no "="
// before it, and no ";" at its end.
func cFunction(code string) bool {
	open := strings.IndexByte(code, '(')
	if open < 0 || strings.HasSuffix(strings.TrimRight(code, " \t\r"), ";") {
		return false
	}
	head := code[:open]
	if strings.ContainsAny(head, "=.\"'#/") {
		return false
	}
	words := strings.Fields(head)
	if len(words) < 2 || cStatements[words[0]] {
		return false
	}
	return true
}

// outlineEntry renders the declaration at line n as one summary line.
func outlineEntry(n int, code string) string {
	prefix := "  " + strconv.Itoa(n) + ": "
	code = strings.TrimRight(code, " \t\r")
	if t, ok := strings.CutSuffix(code, "{"); ok && len(code) > 1 {
		code = strings.TrimRight(t, " \t")
	}
	return prefix + oneLine(code, maxSummaryLine-len(prefix))
}

func summarizeRead(content string, p Payload) string {
	s := newSummary(p, "read the file again for its text")
	isNumbered := lineNumbering(content)
	o := outliner{kind: outlineFor(p.Path)}
	var entries []string
	found := 0
	first, last := 0, 0
	n := p.From
	if n <= 0 {
		n = 1
	}
	n-- // the number of the line before the next
	for line := range strings.Lines(content) {
		line = strings.TrimSuffix(line, "\n")
		code := line
		if isNumbered {
			num, c, ok := numbered(line)
			if !ok {
				continue // a cut marker or a wrapped line
			}
			n, code = num, c
		} else {
			n++
		}
		if first == 0 {
			first = n
		}
		last = n
		if o.decl(code) {
			found++
			if len(entries) < maxOutline {
				entries = append(entries, outlineEntry(n, code))
			}
		}
	}
	from, to := p.From, p.To
	if from <= 0 {
		from = first
	}
	if to <= 0 {
		to = last
	}
	head := "Read " + label(p.Path, "a file")
	switch {
	case from > 0 && to >= from:
		head += " lines " + strconv.Itoa(from) + "-" + strconv.Itoa(to)
		if p.Total > 0 {
			head += " of " + strconv.Itoa(p.Total)
		}
	case p.Total > 0:
		head += ": no lines of " + strconv.Itoa(p.Total)
	default:
		head += ": no lines"
	}
	s.add(head, 0)
	shown := 0
	for _, e := range entries {
		if !s.add(e, moreReserve) {
			break
		}
		shown++
	}
	if found > shown {
		s.add(more(found-shown, "declaration"), 0)
	}
	return s.String()
}
