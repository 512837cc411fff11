package replay

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/contextwin"
)

// What a user loses beyond the planted facts: the re-reads a model would
// make, the trail of the files the session changed, and the notes the
// strategy asked for. A losses follows the turn requests of one replay as
// they are answered (turn) and the side calls' answers (note), and reads
// nothing but the requests and the recording: it changes no round, so
// every strategy's row measures the same recorded session.

// Losses are a replay's measures of what a user loses (see doc.go for
// how each is counted); a Row carries them.
type Losses struct {
	// ReReads are the reads a model would have made again: a recorded
	// round uses a file (reads other lines of it, edits it) whose newest
	// read the request no longer carries whole. ReReadTokens is what
	// those reads would have prefilled (the read results appended again);
	// ReReadsPerEvent is ReReads ÷ Events.
	ReReads         int     `json:"rereads"`
	ReReadTokens    int     `json:"reread_tokens"`
	ReReadsPerEvent float64 `json:"rereads_per_event"`
	// Trail is the share of (turn request, file changed before its round)
	// pairs where the request names the file; TrailWorst the lowest share
	// in one request, TrailLast the share in the last. 1 when the session
	// changed nothing.
	Trail      float64 `json:"trail"`
	TrailWorst float64 `json:"trail_worst"`
	TrailLast  float64 `json:"trail_last"`
	// Notes are the side calls' answers a turn request came after (the
	// notes, the summaries); NotesKept the mean over them of the share of
	// each one's findings the last request carries (a value a later note
	// gives its key anew is not wanted), NotesReached the share of them
	// of which half the findings or more reached one later request. 1
	// without notes.
	Notes        int     `json:"notes"`
	NotesKept    float64 `json:"notes_kept"`
	NotesReached float64 `json:"notes_reached"`
}

// fileRead is a recorded read result as every strategy receives it (Cut).
type fileRead struct {
	path     string
	from, to int
	content  string
	tokens   int
}

// fileUse is a recorded round's use of a file: a read of lines from–to,
// or (read false) an edit, a write or a diff.
type fileUse struct {
	path     string
	read     bool
	from, to int
}

// finding is one item of a note: a line, a value of a "key: value" line,
// or an item of a listed value; key is its line's key ("" for a line
// without one), list whether the value was a list.
type finding struct {
	key, text string
	list      bool
}

// noteSeen is a side call's answer and where it went since.
type noteSeen struct {
	round    int
	findings []finding
	after    bool   // a turn request came after it
	checked  bool   // a turn request after it was looked at whole
	present  []bool // its findings the current request carries
	reached  bool   // a later request carried half its findings or more
}

// losses measures one replay.
type losses struct {
	uses    [][]fileUse  // by round, 1-based
	reads   [][]fileRead // by round: the round's read results
	changed map[string]int
	order   []string // changed files, by the round first changing them

	registered int // reads of rounds up to this one are held
	newest     map[string]fileRead
	reread     map[string]bool // re-read since the last event
	named      map[string]bool // changed files named in the current request
	seen       map[string]bool // changed files looked for in the current request
	lastRound  int
	prevLen    int

	rereads, rereadTokens int
	pairs, pairsNamed     int
	worst, last           float64
	notes                 []*noteSeen
}

// newLosses reads what the measures need from the recording: every
// round's file uses, read results and changed files.
func newLosses(s *Recording) *losses {
	l := &losses{uses: make([][]fileUse, len(s.Rounds)+1), reads: make([][]fileRead, len(s.Rounds)+1),
		changed: map[string]int{}, newest: map[string]fileRead{}, reread: map[string]bool{},
		named: map[string]bool{}, seen: map[string]bool{}, worst: 1, last: 1}
	for i, r := range s.Rounds {
		n := i + 1
		for _, c := range r.Assistant.ToolCalls {
			if p := callPath(c); p != "" && (c.Name == "edit" || c.Name == "write") {
				l.uses[n] = append(l.uses[n], fileUse{path: p})
				l.change(p, n)
			}
		}
		for _, res := range r.Results {
			p := res.Payload
			switch {
			case p.Path == "":
			case p.Kind == contextwin.Read:
				cut := Cut(res)
				l.uses[n] = append(l.uses[n], fileUse{path: p.Path, read: true, from: p.From, to: p.To})
				l.reads[n] = append(l.reads[n], fileRead{path: p.Path, from: p.From, to: p.To, content: cut.Content, tokens: blockTokens(toEngine(cut))})
			case p.Kind == contextwin.Diff:
				l.uses[n] = append(l.uses[n], fileUse{path: p.Path})
				l.change(p.Path, n)
			}
		}
	}
	return l
}

func (l *losses) change(path string, round int) {
	if _, ok := l.changed[path]; !ok {
		l.changed[path] = round
		l.order = append(l.order, path)
	}
}

// callPath is the file a tool call names in its arguments, if any.
func callPath(c contextwin.ToolCall) string {
	var args struct {
		Path     string `json:"path"`
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal([]byte(c.Arguments), &args) != nil {
		return ""
	}
	if args.Path != "" {
		return args.Path
	}
	return args.FilePath
}

// conversation is a request's messages less the fixed prefix (the system
// prompt, whose repo map names files the session never changed).
func conversation(req engine.Request) []engine.Message {
	msgs := req.Messages
	if len(msgs) > 0 && msgs[0].Role == "system" {
		msgs = msgs[1:]
	}
	return msgs
}

// mentions reports whether one of msgs carries s: in its text or in a
// tool call's arguments.
func mentions(msgs []engine.Message, s string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Content, s) {
			return true
		}
		for _, c := range m.ToolCalls {
			if strings.Contains(c.Arguments, s) {
				return true
			}
		}
	}
	return false
}

// turn takes a turn request of round, answered: extends says whether it
// extends the previous turn request.
func (l *losses) turn(round int, req engine.Request, extends bool) {
	msgs := conversation(req)
	fresh := msgs
	if extends && l.prevLen <= len(msgs) {
		fresh = msgs[l.prevLen:]
	} else {
		clear(l.named)
		clear(l.seen)
		clear(l.reread)
		for _, n := range l.notes {
			n.checked = false
		}
	}
	l.prevLen = len(msgs)
	if round != l.lastRound {
		l.register(round)
		l.countReReads(round, msgs)
		l.lastRound = round
	}
	l.trail(round, msgs, fresh)
	for _, n := range l.notes {
		n.after = true
		if n.reached {
			continue
		}
		look := fresh
		if !n.checked {
			look, n.checked = msgs, true
			clear(n.present)
		}
		count := 0
		for i, f := range n.findings {
			n.present[i] = n.present[i] || mentions(look, f.text)
			if n.present[i] {
				count++
			}
		}
		n.reached = 2*count >= len(n.findings)
	}
}

// register makes the reads of the rounds before round the newest of
// their files.
func (l *losses) register(round int) {
	for ; l.registered < round-1 && l.registered+1 < len(l.reads); l.registered++ {
		for _, r := range l.reads[l.registered+1] {
			l.newest[r.path] = r
			delete(l.reread, r.path)
		}
	}
}

// countReReads counts the files round uses whose newest read msgs no
// longer carry whole: the model would read each again first, once until
// the next event. A round that itself reads the lines of that read again
// re-reads in the recording already, and every strategy pays for it.
func (l *losses) countReReads(round int, msgs []engine.Message) {
	if round >= len(l.uses) {
		return
	}
	for _, u := range l.uses[round] {
		r, ok := l.newest[u.path]
		if !ok || l.reread[u.path] || (u.read && u.from <= r.from && u.to >= r.to) || mentions(msgs, r.content) {
			continue
		}
		l.reread[u.path] = true
		l.rereads++
		l.rereadTokens += r.tokens
	}
}

// trail counts, in one turn request, the files changed before its round
// and those it names; fresh are its messages the previous one did not
// have.
func (l *losses) trail(round int, msgs, fresh []engine.Message) {
	pairs, named := 0, 0
	for _, p := range l.order {
		if l.changed[p] >= round {
			continue
		}
		if !l.named[p] {
			look := fresh
			if !l.seen[p] {
				look = msgs
			}
			l.named[p] = mentions(look, p)
		}
		l.seen[p] = true
		pairs++
		if l.named[p] {
			named++
		}
	}
	if pairs == 0 {
		l.last = 1
		return
	}
	l.pairs += pairs
	l.pairsNamed += named
	l.last = float64(named) / float64(pairs)
	l.worst = min(l.worst, l.last)
}

// note takes a side call's answer in round: a note, a summary.
func (l *losses) note(round int, text string) {
	if f := findings(text); len(f) > 0 {
		l.notes = append(l.notes, &noteSeen{round: round, findings: f, present: make([]bool, len(f))})
	}
}

// keyRe matches a line's key: a label of up to 40 characters before ": ",
// less a count in parentheses.
var keyRe = regexp.MustCompile(`^([^:]{1,40}?)(?: \(\d+\))?: (.+)$`)

// findings are what a note states: each line (list markers trimmed), the
// value of a "key: value" line, and each item of a comma-separated value.
func findings(text string) []finding {
	var out []finding
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		line = strings.TrimSpace(strings.TrimLeft(line, "-*•"))
		if len(line) < 4 || strings.HasSuffix(line, ":") {
			continue
		}
		m := keyRe.FindStringSubmatch(line)
		if m == nil {
			out = append(out, finding{text: line})
			continue
		}
		key, value := strings.ToLower(strings.TrimSpace(m[1])), m[2]
		items := strings.Split(value, ", ")
		if len(items) == 1 {
			out = append(out, finding{key: key, text: value})
			continue
		}
		for _, it := range items {
			it, _, _ = strings.Cut(it, " and ")
			if it = strings.TrimSpace(it); len(it) >= 3 {
				out = append(out, finding{key: key, text: it, list: true})
			}
		}
	}
	return out
}

// result closes the measures on the last turn request.
func (l *losses) result(last engine.Request) Losses {
	out := Losses{ReReads: l.rereads, ReReadTokens: l.rereadTokens, TrailWorst: round(l.worst, 3), TrailLast: round(l.last, 3), Trail: 1, NotesKept: 1, NotesReached: 1}
	if l.pairs > 0 {
		out.Trail = round(float64(l.pairsNamed)/float64(l.pairs), 3)
	}
	msgs := conversation(last)
	kept, counted, reached := 0.0, 0, 0
	for i, n := range l.notes {
		if !n.after {
			continue
		}
		out.Notes++
		if n.reached {
			reached++
		}
		live, present := 0, 0
		for _, f := range n.findings {
			if superseded(f, l.notes[i+1:]) {
				continue
			}
			live++
			if mentions(msgs, f.text) {
				present++
			}
		}
		if live > 0 {
			kept += float64(present) / float64(live)
			counted++
		}
	}
	if out.Notes > 0 {
		out.NotesReached = round(float64(reached)/float64(out.Notes), 3)
	}
	if counted > 0 {
		out.NotesKept = round(kept/float64(counted), 3)
	}
	return out
}

// superseded reports whether a later note states f anew: gives its key
// another value, or, for a line without a key, has a line that differs
// from it only in its numbers ("Progress note after 17 tool rounds.",
// "… 23 …"), or lists the items of what f says there are none of ("no
// edits made", "edits made (2): a.go"). The newest is what must survive,
// as the recap's findings keep it.
func superseded(f finding, later []*noteSeen) bool {
	if f.list {
		return false
	}
	none, isNone := strings.CutPrefix(strings.ToLower(strings.TrimSuffix(f.text, ".")), "no ")
	none = strings.TrimSuffix(none, " yet")
	for _, n := range later {
		for _, g := range n.findings {
			switch {
			case f.key != "":
				if g.key == f.key && !g.list && g.text != f.text {
					return true
				}
			case g.key == "" && g.text != f.text && numbersAside(g.text) == numbersAside(f.text):
				return true
			case isNone && g.key == none:
				return true
			}
		}
	}
	return false
}

var numberRe = regexp.MustCompile(`\b\d+\b`)

// numbersAside is s with every number that stands alone as "#".
func numbersAside(s string) string { return numberRe.ReplaceAllString(s, "#") }
