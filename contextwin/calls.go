package contextwin

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
)

// What a tool call tells. A fold reads each folded call and its result
// (matched by ToolCallID) through inspect, which gives a callInfo: the
// kind of tool (from the result's Payload, else guessed from the tool's
// name by kindOfTool), the file, pattern, command or URL it was about, the
// lines a read covered, and whether it failed. The recap then takes two
// things from it: turns.record lists the files touched, pages fetched and
// searches run, and callInfo.entry writes the call's share of a Happened
// entry. Arguments are read by jsonFields, a forgiving scanner, since a
// model's JSON is not always well formed.
// callInfo is what a tool call and its result tell about what was done.
type callInfo struct {
	name      string
	kind      Kind
	args      toolArgs
	path      string
	from, to  int
	total     int
	res       *Message
	failed    bool
	diffFiles []string // set lazily by paths
}

// toolArgs are the arguments of a tool call that tell what it touched.
type toolArgs struct {
	path, pattern, command, url, desc string
	offset, limit, end                int
}

func (a *toolArgs) set(key, val string, isString bool) {
	str := func(dst *string) {
		if isString && *dst == "" {
			*dst = val
		}
	}
	num := func(dst *int) {
		if n, err := strconv.Atoi(val); err == nil && *dst == 0 && n > 0 {
			*dst = n
		}
	}
	switch key {
	case "path", "file_path", "filePath", "filepath", "file", "filename", "target_file", "notebook_path", "dir", "directory":
		str(&a.path)
	case "pattern", "query", "regex", "search", "q":
		str(&a.pattern)
	case "command", "cmd", "script":
		str(&a.command)
	case "url", "uri", "href":
		str(&a.url)
	case "description", "prompt", "task", "title":
		str(&a.desc)
	case "offset", "start_line", "startLine", "line_start", "from":
		num(&a.offset)
	case "limit", "lines", "count":
		num(&a.limit)
	case "end_line", "endLine", "line_end", "to":
		num(&a.end)
	}
}

// toolWords maps a word of a tool's name to what the tool returns.
var toolWords = map[string]Kind{
	"edit": Diff, "write": Diff, "patch": Diff, "replace": Diff, "create": Diff, "insert": Diff,
	"read": Read, "view": Read, "cat": Read, "open": Read,
	"grep": Search, "rg": Search, "search": Search, "glob": Search, "find": Search,
	"fetch": Fetch, "web": Fetch, "url": Fetch, "browse": Fetch, "http": Fetch,
	"bash": Command, "shell": Command, "sh": Command, "exec": Command, "run": Command, "command": Command, "terminal": Command, "cmd": Command,
	"agent": Report, "task": Report, "subagent": Report, "delegate": Report,
}

// kindOfTool guesses what a tool returns from the words of its name
// ("read_file", "WebFetch", "str_replace_editor"), for a call whose result
// is missing or has no kind. Words are tried in that order of kinds, so
// "web_search" is a search.
func kindOfTool(name string) Kind {
	best := Other
	for _, w := range nameWords(name) {
		if k, ok := toolWords[w]; ok && (best == Other || kindRank(k) < kindRank(best)) {
			best = k
		}
	}
	return best
}

// nameWords splits a name at non-letters and before capitals, in lower
// case: "str_replace_editor" and "StrReplaceEditor" give str, replace,
// editor. A run of capitals stays one word.
func nameWords(name string) []string {
	var words []string
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'A' <= c && c <= 'Z':
			if i > 0 && !('A' <= name[i-1] && name[i-1] <= 'Z') {
				flush()
			}
			cur = append(cur, c+'a'-'A')
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			cur = append(cur, c)
		default:
			flush()
		}
	}
	flush()
	return words
}

// kindRank orders kinds for a name with words of several: an edit that
// reads is an edit, a web search a search.
func kindRank(k Kind) int {
	return slices.Index([]Kind{Diff, Read, Search, Fetch, Command, Report}, k)
}

func inspect(c ToolCall, res *Message) callInfo {
	ci := callInfo{name: c.Name, res: res}
	jsonFields(c.Arguments, ci.args.set)
	var p Payload
	if res != nil {
		p = res.Payload
	}
	ci.kind = p.Kind
	if ci.kind == Other {
		ci.kind = kindOfTool(c.Name)
	}
	ci.failed = res != nil && ci.kind != Command && looksFailed(res.Content)
	a := &ci.args
	switch ci.kind {
	case Read:
		ci.path = cmp.Or(p.Path, a.path)
		ci.from, ci.to, ci.total = p.From, p.To, p.Total
		if res != nil && !ci.failed && (ci.from <= 0 || ci.to <= 0) {
			if f, l, ok := numberedSpan(res.Content); ok {
				ci.from, ci.to = cmp.Or(ci.from, f), cmp.Or(ci.to, l)
			}
		}
		if ci.from <= 0 {
			ci.from = max(a.offset, 1)
		}
		if ci.to <= 0 {
			switch {
			case a.end >= ci.from:
				ci.to = a.end
			case a.limit > 0:
				ci.to = ci.from + a.limit - 1
			case res != nil && !ci.failed && res.Content != "":
				ci.to = ci.from + countLines(res.Content) - 1
			default:
				ci.from = 0 // nothing says which lines
			}
		}
	case Diff:
		ci.path = cmp.Or(p.Path, a.path)
	case Search:
		ci.path = cmp.Or(p.Path, a.pattern)
	case Command:
		ci.path = cmp.Or(p.Path, a.command)
	case Fetch:
		ci.path = cmp.Or(p.Path, a.url)
	}
	return ci
}

// numberedSpan returns the numbers of the first and last numbered lines
// of a numbered listing.
func numberedSpan(content string) (first, last int, ok bool) {
	if !lineNumbering(content) {
		return 0, 0, false
	}
	head, _, _ := strings.Cut(content, "\n")
	first, _, _ = numbered(strings.TrimSuffix(head, "\r"))
	end := strings.TrimRight(content, " \t\r\n")
	line := end[strings.LastIndexByte(end, '\n')+1:]
	last, _, ok = numbered(line)
	if !ok || last < first {
		last = first
	}
	return first, last, true
}

// looksFailed reports whether a result reads as a tool's error.
func looksFailed(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	for _, w := range []string{"error", "failed", "fatal"} {
		if len(s) >= len(w) && strings.EqualFold(s[:len(w)], w) {
			return true
		}
	}
	return false
}

// paths is the files an edit changed: the path it names, else those of
// the diff in its result.
func (c *callInfo) paths() []string {
	if c.path != "" {
		return []string{c.path}
	}
	if c.diffFiles == nil && c.res != nil {
		for _, f := range parseDiff(c.res.Content, "") {
			if f.path != "" {
				c.diffFiles = append(c.diffFiles, f.path)
			}
		}
	}
	return c.diffFiles
}

// search is how the Searches list names a search: "pattern" in where.
func (c *callInfo) search() string {
	p := oneLine(c.path, maxLabel-40)
	if p == "" {
		return ""
	}
	s := "\"" + p + "\""
	if w := oneLine(c.args.path, 40); w != "" && c.args.path != c.path {
		s += " in " + w
	}
	return s
}

// entry is the call's part of a Happened entry, at most maxEntryPart
// bytes.
func (c *callInfo) entry() string {
	const label = 80 // a path, pattern, command or URL in an entry
	var s string
	content := ""
	if c.res != nil {
		content = c.res.Content
	}
	switch c.kind {
	case Read:
		s = "read " + cmp.Or(oneLine(c.path, label), "a file")
		if c.from > 0 {
			s += " " + strconv.Itoa(c.from) + "-" + strconv.Itoa(c.to)
		}
		if c.total > 0 {
			s += " of " + strconv.Itoa(c.total)
		}
	case Diff:
		ps := c.paths()
		s = "edited " + cmp.Or(oneLine(strings.Join(ps, ", "), label), "a file")
		if h := strings.Count(content, "\n@@") + b2i(strings.HasPrefix(content, "@@")); h > 0 {
			s += " (" + plural(h, "hunk") + ")"
		}
	case Search:
		s = "searched " + cmp.Or(c.search(), "something")
		if c.res != nil && !c.failed {
			s += ": " + plural(countLines(content), "line")
		}
	case Command:
		s = "ran " + cmp.Or(oneLine(c.path, label), "a command")
		if c.res != nil {
			if l := lastLine(content); l != "" {
				s += " → " + oneLineTail(l, 60)
			} else {
				s += " (no output)"
			}
		}
	case Fetch:
		s = "fetched " + cmp.Or(oneLine(c.path, label), "a page")
		if c.res != nil && !c.failed {
			s += " (" + strconv.Itoa(len(content)) + " bytes)"
		}
	case Report:
		s = "a subagent"
		if d := oneLine(c.args.desc, 50); d != "" {
			s += " \"" + d + "\""
		}
		if c.res != nil && !c.failed {
			s += " reported: " + oneLine(firstSentence(content), 60)
		}
	default:
		s = cmp.Or(oneLine(c.name, 40), "a tool")
		if c.res != nil && !c.failed {
			if l := oneLine(firstLine(content), 60); l != "" {
				s += " → " + l
			}
		}
	}
	if c.failed {
		s += " → failed: " + oneLine(firstLine(content), 60)
	}
	return shorten(s, maxEntryPart)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// firstLine is the first line of s that has text.
func firstLine(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// lastLine is the last line of s that has text.
func lastLine(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// Tool arguments.

// jsonFields calls f with each top-level member of the JSON object s
// whose value is a string (decoded) or a number (as written); other values
// are skipped. It reads as far as s is well formed and stops there, so
// arguments a model wrote badly still yield what they can. It is a small
// scanner rather than encoding/json because a fold reads thousands of
// calls and needs only a few of their fields.
func jsonFields(s string, f func(key, val string, isString bool)) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] != '"' {
			return
		}
		key, j, ok := jsonString(s, i)
		if !ok {
			return
		}
		i = skipSpace(s, j)
		if i >= len(s) || s[i] != ':' {
			return
		}
		i = skipSpace(s, i+1)
		if i >= len(s) {
			return
		}
		switch c := s[i]; {
		case c == '"':
			val, j, ok := jsonString(s, i)
			if !ok {
				return
			}
			f(key, val, true)
			i = j
		case c == '-' || '0' <= c && c <= '9':
			j := i + 1
			for j < len(s) && strings.IndexByte("+-.eE0123456789", s[j]) >= 0 {
				j++
			}
			f(key, s[i:j], false)
			i = j
		default:
			j, ok := skipJSONValue(s, i)
			if !ok {
				return
			}
			i = j
		}
		i = skipSpace(s, i)
		if i >= len(s) || s[i] != ',' {
			return
		}
		i++
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// jsonString decodes the JSON string that starts at s[i] == '"' and
// returns it with the index after its closing quote.
func jsonString(s string, i int) (string, int, bool) {
	j := i + 1
	for j < len(s) && s[j] != '"' && s[j] != '\\' {
		j++
	}
	if j < len(s) && s[j] == '"' {
		return s[i+1 : j], j + 1, true // the common case: no escapes
	}
	var b strings.Builder
	b.WriteString(s[i+1 : j])
	for j < len(s) {
		c := s[j]
		switch {
		case c == '"':
			return b.String(), j + 1, true
		case c != '\\':
			b.WriteByte(c)
			j++
			continue
		}
		if j+1 >= len(s) {
			return "", 0, false
		}
		e := s[j+1]
		j += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(s, j)
			if !ok {
				return "", 0, false
			}
			j += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if j+6 <= len(s) && s[j] == '\\' && s[j+1] == 'u' {
					r2, ok = hex4(s, j+2)
				}
				if d := utf16.DecodeRune(r, r2); ok && d != unicode.ReplacementChar {
					r = d
					j += 6
				} else {
					r = unicode.ReplacementChar
				}
			}
			b.WriteRune(r)
		default:
			return "", 0, false
		}
	}
	return "", 0, false
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(s[i:i+4], 16, 32)
	return rune(n), err == nil
}

// skipJSONValue skips an object, an array or a literal at s[i].
func skipJSONValue(s string, i int) (int, bool) {
	depth := 0
	for i < len(s) {
		switch c := s[i]; c {
		case '"':
			_, j, ok := jsonString(s, i)
			if !ok {
				return 0, false
			}
			i = j
			if depth == 0 {
				return i, true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i, true // the end of a literal's object
			}
			depth--
			if depth < 0 {
				return 0, false
			}
			if depth == 0 {
				return i + 1, true
			}
		case ',':
			if depth == 0 {
				return i, true
			}
		default:
			if depth == 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
				return i, true
			}
		}
		i++
	}
	return i, depth == 0
}
