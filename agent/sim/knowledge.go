package sim

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// knowledge is what a conversation has established, read back from its
// tool calls and results. The policy is a pure function of it (and of the
// directory), so the same conversation always gets the same reply.
type knowledge struct {
	task      string
	rounds    int // tool rounds already made
	directive int // "rounds=N" in the task, or 0
	reads     []readRecord
	readCount map[string]int
	greps     []string
	globs     []string
	bashes    []string
	edits     []editRecord
	done      map[string]bool // "grep\x00pattern", "glob\x00pattern", "bash\x00cmd", "edit\x00path\x00line"
	idents    []string        // identifiers seen in results, first seen first
	identSet  map[string]bool
	paths     []string // path-like strings seen in results, first seen first
	pathSet   map[string]bool
	// facts are the lines "FACT key: value" seen anywhere in the
	// conversation — the findings a careful model writes down when asked
	// for a note — keyed, newest value last.
	facts    []string
	factKeys map[string]int
}

// factRe finds a fact planted in a message: "FACT key: value", at the
// start of a line (indented too: a shed summary indents what it quotes),
// or of a file's line as a read numbers it, in a comment ("   12\t//
// FACT owner: x"): a model reads a fact in code as well as in a log.
var factRe = regexp.MustCompile(`(?m)^[ \t]*(?:\d+\t[ \t]*(?://|#|--|;)[ \t]*)?FACT ([A-Za-z0-9_.-]{1,40}): (.{1,200})$`)

// noteFacts collects the facts of a message's text.
func (k *knowledge) noteFacts(text string) {
	for _, m := range factRe.FindAllStringSubmatch(text, -1) {
		line := m[1] + ": " + strings.TrimSpace(m[2])
		if i, ok := k.factKeys[m[1]]; ok {
			k.facts[i] = line
			continue
		}
		k.factKeys[m[1]] = len(k.facts)
		k.facts = append(k.facts, line)
	}
}

type readRecord struct {
	path   string
	offset int
	limit  int
	result string // the tool result, "" when it never came back
}

type editRecord struct {
	path string
	old  string
}

var (
	roundIDRe   = regexp.MustCompile(`_r(\d+)_\d+$`)
	directiveRe = regexp.MustCompile(`\brounds\s*[=:]\s*(\d+)`)
	declNameRe  = regexp.MustCompile(`\b(?:func|type|def|class|fn|struct|interface|trait|enum)\s+(?:\([^)]*\)\s*)?([A-Za-z_][A-Za-z0-9_]{2,40})`)
	identRe     = regexp.MustCompile(`\b[A-Za-z_][A-Za-z0-9_]{3,40}\b`)
	pathRe      = regexp.MustCompile(`[A-Za-z0-9_.\-/]+\.[A-Za-z0-9]{1,8}`)
)

// The wording of contextwin's recap of folded turns (contextwin/fold.go),
// which a model reads as text: its opening, the heading of the task it
// carries verbatim, and the heading that follows the task when the turn's
// defining payload travels too.
const (
	recapOpening = "[The conversation before this point was folded"
	recapTask    = "\n\nThe task, verbatim:\n"
	recapPayload = "\n\nThe payload that defines the task ("
)

// noteTaskRe finds the task line of a progress note a recap carries.
var noteTaskRe = regexp.MustCompile(`(?m)^Task: (.+)$`)

// taskOf is the task as a careful model reads it: the first user message,
// unless that is a recap of folded turns. Then it is the task the recap
// quotes verbatim; without one, the first later user message that is not
// a recap (the request the kept turns answer); without one, the task line
// of the note the recap carries; else nothing.
func taskOf(msgs []message) string {
	recap := ""
	for _, m := range msgs {
		if m.Role != "user" {
			continue
		}
		if !strings.HasPrefix(m.Content, recapOpening) {
			return m.Content
		}
		if recap != "" {
			continue
		}
		recap = m.Content
		if _, task, ok := strings.Cut(m.Content, recapTask); ok {
			task, _, _ = strings.Cut(task, recapPayload)
			return task
		}
	}
	if m := noteTaskRe.FindStringSubmatch(recap); m != nil {
		return m[1]
	}
	return ""
}

// maxScan bounds how much of one tool result is scanned for names.
const maxScan = 64 << 10

func learn(c *chat) *knowledge {
	k := &knowledge{
		readCount: map[string]int{},
		done:      map[string]bool{},
		identSet:  map[string]bool{},
		pathSet:   map[string]bool{},
		factKeys:  map[string]int{},
	}
	k.task = taskOf(c.messages)
	for _, m := range c.messages {
		k.noteFacts(m.Content)
	}
	// The task's own names come first: they are what to look for.
	for _, id := range identRe.FindAllString(k.task, -1) {
		if looksLikeIdentifier(id) {
			k.addIdent(id)
		}
	}
	if m := directiveRe.FindStringSubmatch(k.task); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			k.directive = min(n, 100000)
		}
	}
	calls := map[string]toolCall{}
	readAt := map[string]int{} // call id → index in k.reads
	assistantRounds := 0
	for _, m := range c.messages {
		switch m.Role {
		case "assistant":
			if len(m.ToolCalls) > 0 {
				assistantRounds++
			}
			for _, tc := range m.ToolCalls {
				calls[tc.ID] = tc
				if sub := roundIDRe.FindStringSubmatch(tc.ID); sub != nil {
					if n, err := strconv.Atoi(sub[1]); err == nil {
						k.rounds = max(k.rounds, n)
					}
				}
				if i := k.noteCall(tc); i >= 0 {
					readAt[tc.ID] = i
				}
			}
		case "tool":
			tc, ok := calls[m.ToolCallID]
			if !ok {
				continue
			}
			if i, ok := readAt[tc.ID]; ok {
				k.reads[i].result = m.Content
			}
			k.scan(m.Content)
		}
	}
	k.rounds = max(k.rounds, assistantRounds)
	return k
}

// noteCall records a call; for a read it returns its index in k.reads.
func (k *knowledge) noteCall(tc toolCall) int {
	var args map[string]any
	_ = json.Unmarshal([]byte(tc.Arguments), &args)
	str := func(key string) string { s, _ := args[key].(string); return s }
	num := func(key string) int { f, _ := args[key].(float64); return int(f) }
	switch strings.ToLower(tc.Name) {
	case "read":
		p := cleanPath(str("path"))
		if p == "" {
			return -1
		}
		k.readCount[p]++
		k.reads = append(k.reads, readRecord{path: p, offset: num("offset"), limit: num("limit")})
		return len(k.reads) - 1
	case "grep":
		k.greps = append(k.greps, str("pattern"))
		k.done["grep\x00"+str("pattern")] = true
	case "glob":
		k.globs = append(k.globs, str("pattern"))
		k.done["glob\x00"+str("pattern")] = true
	case "bash":
		k.bashes = append(k.bashes, str("command"))
		k.done["bash\x00"+str("command")] = true
	case "edit":
		p := cleanPath(str("path"))
		k.edits = append(k.edits, editRecord{path: p, old: str("old_text")})
		for line := range strings.SplitSeq(str("old_text"), "\n") {
			k.done["edit\x00"+p+"\x00"+line] = true
		}
	}
	return -1
}

// scan collects the names and paths a tool result mentions.
func (k *knowledge) scan(text string) {
	if len(text) > maxScan {
		text = text[:maxScan]
	}
	for _, m := range declNameRe.FindAllStringSubmatch(text, -1) {
		k.addIdent(m[1])
	}
	for _, id := range identRe.FindAllString(text, -1) {
		if looksLikeIdentifier(id) {
			k.addIdent(id)
		}
	}
	for _, p := range pathRe.FindAllString(text, -1) {
		p = cleanPath(p)
		if p != "" && !k.pathSet[p] {
			k.pathSet[p] = true
			k.paths = append(k.paths, p)
		}
	}
}

func (k *knowledge) addIdent(id string) {
	if !k.identSet[id] && !keywords[id] {
		k.identSet[id] = true
		k.idents = append(k.idents, id)
	}
}

// looksLikeIdentifier keeps camelCase, PascalCase and snake_case names,
// which are what an agent greps for, and drops plain words.
func looksLikeIdentifier(s string) bool {
	if strings.Contains(s, "_") && strings.Trim(s, "_") != "" {
		return true
	}
	for i := 1; i < len(s); i++ {
		if isUpper(s[i]) && isLower(s[i-1]) {
			return true
		}
	}
	return false
}

var keywords = map[string]bool{
	"func": true, "type": true, "return": true, "package": true, "import": true,
	"struct": true, "interface": true, "string": true, "error": true, "const": true,
	"class": true, "self": true, "None": true, "True": true, "False": true,
	"function": true, "export": true, "default": true, "__init__": true,
}

func cleanPath(p string) string {
	p = strings.TrimSpace(p)
	p = strings.TrimPrefix(p, "./")
	if p == "." {
		return ""
	}
	return p
}

// readPaths lists the distinct files read, first read first.
func (k *knowledge) readPaths() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range k.reads {
		if !seen[r.path] {
			seen[r.path] = true
			out = append(out, r.path)
		}
	}
	return out
}

func (k *knowledge) editedPaths() []string {
	var out []string
	for _, e := range k.edits {
		if !slices.Contains(out, e.path) {
			out = append(out, e.path)
		}
	}
	return out
}

// note is what the model writes when asked, with tools forbidden, what it
// has established so far.
func (k *knowledge) note() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Progress note after %d tool rounds.\n", k.rounds)
	fmt.Fprintf(&b, "Task: %s\n", excerpt(k.task, 160))
	b.WriteString("Established so far:\n")
	if reads := k.readPaths(); len(reads) > 0 {
		fmt.Fprintf(&b, "- files read (%d): %s\n", len(reads), listSome(reads, 12))
	} else {
		b.WriteString("- no files read yet\n")
	}
	if len(k.greps) > 0 {
		fmt.Fprintf(&b, "- searches: %s\n", listSome(k.greps, 8))
	}
	if len(k.globs) > 0 {
		fmt.Fprintf(&b, "- listings: %s\n", listSome(k.globs, 6))
	}
	if edited := k.editedPaths(); len(edited) > 0 {
		fmt.Fprintf(&b, "- edits made (%d): %s\n", len(k.edits), listSome(edited, 8))
	} else {
		b.WriteString("- no edits made\n")
	}
	if len(k.idents) > 0 {
		fmt.Fprintf(&b, "- names that matter: %s\n", listSome(k.idents, 10))
	}
	if len(k.facts) > 0 {
		b.WriteString("Facts to keep:\n")
		for _, f := range k.facts {
			b.WriteString("- " + f + "\n")
		}
	}
	b.WriteString("Next: continue from the files above; nothing needs to be re-read unless it changed.")
	return b.String()
}

// final is the answer that ends the run.
func (k *knowledge) final() string {
	var b strings.Builder
	fmt.Fprintf(&b, "I have finished after %d tool rounds.\n\n", k.rounds)
	reads := k.readPaths()
	fmt.Fprintf(&b, "- Read %d files: %s\n", len(reads), listSome(reads, 10))
	if len(k.greps) > 0 {
		fmt.Fprintf(&b, "- Searched for: %s\n", listSome(k.greps, 8))
	}
	if edited := k.editedPaths(); len(edited) > 0 {
		fmt.Fprintf(&b, "- Edited %d files (%d edits): %s\n", len(edited), len(k.edits), listSome(edited, 8))
	}
	fmt.Fprintf(&b, "\nOn the task (%s): the relevant code is in %s; ", excerpt(k.task, 80), listSome(reads, 3))
	b.WriteString("I found nothing else that needs changing.")
	return b.String()
}

func listSome(items []string, n int) string {
	if len(items) == 0 {
		return "none"
	}
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// excerpt is s with its whitespace collapsed to single spaces, cut to n
// bytes and an ellipsis when longer.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return truncateUTF8(s, n) + "…"
}

// truncateUTF8 returns the longest prefix of s that is at most n bytes and
// ends on a rune boundary: the package's one rune-safe cut.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:max(n, 0)]
}
