package tools

// Placing a proposal in a document as it is now: the front ends' one rule
// (the language server's edits, the ACP front end's writes), in byte
// offsets.

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Current is a file as the editor has it now: the open buffer (Text,
// Version, Open) or the file on disk (Text, Open false). Exists is false
// when there is neither.
type Current struct {
	Text    string
	Version int32
	Open    bool
	Exists  bool
}

// HunkEdit is one hunk of a proposal placed in Current.Text: the bytes
// [OldStart, OldEnd) of Current.Text become Text. It is minimal: the text
// the hunk kept unchanged at either end is trimmed off.
type HunkEdit struct {
	// Index is the hunk's index in the proposal's Hunks (0-based).
	Index int
	// OldStart and OldEnd are byte offsets in Current.Text.
	OldStart, OldEnd int
	Text             string
	// Moved is set when the hunk was re-anchored to another offset than
	// the one it had in the proposal's Old.
	Moved bool
}

// EditPlan is a proposal placed in the document as it is now, ready to
// become a workspace edit.
type EditPlan struct {
	Proposal Proposal
	// Current is the document the plan was made against: its text, the
	// version the edit must carry, whether the file must be created.
	Current Current
	// Hunks are the edits to Current.Text, in document order, none
	// overlapping; a hunk that changes nothing is left out.
	Hunks []HunkEdit
	// Reanchored is set when the user changed the document since the
	// agent read it and the hunks were placed by their context.
	Reanchored bool
}

// Creates reports whether applying the plan creates the file.
func (p EditPlan) Creates() bool { return p.Proposal.Create && !p.Current.Exists }

// Empty reports whether the plan changes nothing.
func (p EditPlan) Empty() bool { return len(p.Hunks) == 0 && !p.Creates() }

// Result is the text the file has once the plan is applied: Current.Text
// (the user's text) with the plan's hunks.
func (p EditPlan) Result() string { return p.Edits().Apply(p.Current.Text) }

// Edits are the plan's hunks as hunks of Current.Text, in place there
// (PlanEdit keeps them in order and apart).
func (p EditPlan) Edits() Hunks {
	hs := make(Hunks, len(p.Hunks))
	for i, h := range p.Hunks {
		hs[i] = Hunk{OldStart: h.OldStart, OldEnd: h.OldEnd, Text: h.Text}
	}
	return hs
}

// PlanError says why a proposal could not be placed in the document.
// Nothing of the proposal was applied. Its message is one sentence, fit
// for the model and for the user.
type PlanError struct {
	// Path is the proposal's file.
	Path string
	// Hunk is the 1-based hunk at fault, 0 when the whole file is.
	Hunk int
	// Kind is why, as a fact the end line can trust.
	Kind PlanErrorKind
	msg  string
}

// PlanErrorKind is why a proposal could not be placed.
type PlanErrorKind int

const (
	// PlanChanged: the user changed the hunk's lines or the lines around
	// them since the agent read the file.
	PlanChanged PlanErrorKind = iota
	// PlanAmbiguous: the hunk's lines now appear more than once.
	PlanAmbiguous
	// PlanMoved: the user moved or copied lines so that hunks no longer
	// line up.
	PlanMoved
	// PlanGone: the file no longer exists.
	PlanGone
	// PlanCreated: a new file exists now with other text.
	PlanCreated
	// PlanMalformed: the proposal itself does not hold together.
	PlanMalformed
)

// Short is the end line's few words for the kind.
func (k PlanErrorKind) Short() string {
	switch k {
	case PlanChanged:
		return "you had changed those lines or the lines next to them"
	case PlanAmbiguous:
		return "its place in the file is ambiguous now"
	case PlanMoved:
		return "you had moved the lines around it"
	case PlanGone:
		return "the file no longer exists"
	case PlanCreated:
		return "the file was created since, with other text"
	}
	return "the proposal was malformed"
}

func (e *PlanError) Error() string { return e.msg }

// contextLines is how many lines above and below a hunk, with the hunk's
// own lines, anchor it in a document the user changed.
const contextLines = 3

// PlanEdit places proposal p in the document as it is now.
//
// When cur.Text is still p.Old, the hunks apply where they are, each
// trimmed to the bytes it really changes. When the user changed the
// document since the agent read it, each hunk is re-anchored by its
// context — the whole lines of its replaced text and up to three lines on
// either side in p.Old, which must all still be whole lines in cur.Text:
//   - a context wholly before the user's first change stays where it was,
//     one wholly after the user's last change moves by the length the user
//     added or removed (so a copy elsewhere does not make it ambiguous);
//   - any other context must occur exactly once in cur.Text;
//   - hunks whose contexts overlap in p.Old must move together, and the
//     others must stay apart and in order;
//   - a hunk this rule refuses is placed still when the user only inserted
//     whole lines, at one place outside every hunk's own lines (a line
//     typed between the lines of its context): the old text is all there,
//     and each hunk's place is known exactly.
//
// A hunk that cannot be placed so is refused with a *PlanError naming it,
// and nothing is applied: the user's unsaved text is never overwritten.
// A new file that now exists with other text, and a file that no longer
// exists, are refused too.
func PlanEdit(p Proposal, cur Current) (EditPlan, error) {
	plan := EditPlan{Proposal: p, Current: cur}
	name := DisplayName(p)
	exists := cur.Exists || cur.Open
	plan.Current.Exists = exists
	if p.Create {
		if exists {
			if cur.Text == p.New {
				return plan, nil // already there: nothing to do
			}
			return plan, &PlanError{Path: p.Path, Kind: PlanCreated, msg: fmt.Sprintf(
				"%s was created since the agent proposed it, and its text differs from the proposal; nothing was applied", name)}
		}
		plan.Current.Text = ""
		if p.New != "" {
			plan.Hunks = []HunkEdit{{Index: 0, Text: p.New}}
		}
		return plan, nil
	}
	if !exists {
		return plan, &PlanError{Path: p.Path, Kind: PlanGone, msg: fmt.Sprintf(
			"%s no longer exists: it was deleted or renamed since the agent read it; nothing was applied", name)}
	}
	hunks, err := proposalHunks(p, name)
	if err != nil {
		return plan, err
	}
	starts := make([]int, len(hunks)) // each hunk's start in cur.Text
	if cur.Text == p.Old {
		for i, h := range hunks {
			starts[i] = h.OldStart
		}
	} else {
		plan.Reanchored = true
		if starts, err = anchorHunks(p, hunks, cur.Text, name); err != nil {
			s, ok := anchorByInsertion(p.Old, hunks, cur.Text)
			if !ok {
				return plan, err
			}
			starts = s
		}
	}
	for i, h := range hunks {
		s := starts[i]
		e := s + h.OldEnd - h.OldStart
		he, ok := minimalEdit(cur.Text, s, e, h.Text)
		if !ok {
			continue // the hunk changes nothing
		}
		if n := len(plan.Hunks); n > 0 && he.OldStart < plan.Hunks[n-1].OldEnd {
			// Only hunks that split a character or a line break between
			// them can come to overlap here.
			err := &PlanError{Path: p.Path, Hunk: i + 1, Kind: PlanMalformed, msg: fmt.Sprintf(
				"the proposal for %s is malformed: hunks %d and %d of %d split one character or line break between them; nothing was applied",
				name, plan.Hunks[n-1].Index+1, i+1, len(hunks))}
			plan.Hunks = nil
			return plan, err
		}
		he.Index = i
		he.Moved = s != h.OldStart
		plan.Hunks = append(plan.Hunks, he)
	}
	return plan, nil
}

// proposalHunks returns p's hunks after checking they are in order, inside
// p.Old, and produce p.New. A proposal with no hunks whose texts differ
// gets one hunk over the whole file, which minimalEdit then trims.
func proposalHunks(p Proposal, name string) (Hunks, error) {
	hunks := p.Hunks
	if len(hunks) == 0 && p.Old != p.New {
		hunks = Hunks{{OldStart: 0, OldEnd: len(p.Old), Text: p.New}}
	}
	if i := hunks.Misplaced(len(p.Old)); i >= 0 {
		h := hunks[i]
		return nil, &PlanError{Path: p.Path, Hunk: i + 1, Kind: PlanMalformed, msg: fmt.Sprintf(
			"the proposal for %s is malformed: hunk %d of %d replaces bytes %d-%d of a %d-byte file, out of order or out of range; nothing was applied",
			name, i+1, len(hunks), h.OldStart, h.OldEnd, len(p.Old))}
	}
	if hunks.Apply(p.Old) != p.New {
		return nil, &PlanError{Path: p.Path, Kind: PlanMalformed, msg: fmt.Sprintf(
			"the proposal for %s is inconsistent: its hunks do not produce its new text; nothing was applied", name)}
	}
	return hunks, nil
}

// anchorHunks finds where each hunk's context is in cur, and returns each
// hunk's start there; see PlanEdit for the rule.
func anchorHunks(p Proposal, hunks []Hunk, cur, name string) ([]int, error) {
	old := p.Old
	pre := commonPrefix(old, cur)
	suf := commonSuffix(old[pre:], cur[pre:])
	starts := make([]int, len(hunks))
	var prevEnd, prevShift, prevAt, prevLen int // the previous hunk's context
	for i, h := range hunks {
		cs := contextStart(old, h.OldStart, contextLines)
		ce := contextEnd(old, h.OldEnd, contextLines)
		ctx := old[cs:ce]
		fail := func(kind PlanErrorKind, why string) error {
			return &PlanError{Path: p.Path, Hunk: i + 1, Kind: kind, msg: fmt.Sprintf("hunk %d of %d (%s of %s) %s; nothing was applied",
				i+1, len(hunks), lineSpan(old, h.OldStart, h.OldEnd), name, why)}
		}
		const changed = "no longer matches: the user changed those lines or the lines around them since the agent read the file"
		var at int
		switch {
		case ctx == "":
			return nil, fail(PlanChanged, "no longer matches: the file was empty when the agent read it, and the user has typed in it since")
		case ce <= pre || cs >= len(old)-suf:
			at = cs // before the user's first change
			if ce > pre {
				at += len(cur) - len(old) // after the user's last change
			}
			if !wholeLines(cur, at, at+len(ctx)) {
				return nil, fail(PlanChanged, changed) // the user typed on a line of the context
			}
		default:
			var found []int
			for _, o := range occurrences(cur, ctx) {
				if wholeLines(cur, o, o+len(ctx)) {
					found = append(found, o)
				}
			}
			switch len(found) {
			case 0:
				return nil, fail(PlanChanged, changed)
			case 1:
				at = found[0]
			default:
				return nil, fail(PlanAmbiguous, fmt.Sprintf("is ambiguous: those lines and the lines around them now appear %d times in the file, so where it belongs is unclear", len(found)))
			}
		}
		shift := at - cs
		if i > 0 {
			// Contexts that overlap in old must move together; the others
			// must keep their order without overlapping.
			together := cs < prevEnd && shift == prevShift
			apart := cs >= prevEnd && prevAt+prevLen <= at
			if !together && !apart {
				return nil, fail(PlanMoved, fmt.Sprintf("no longer lines up with hunk %d: the user moved or copied the lines around them since the agent read the file", i))
			}
		}
		starts[i] = h.OldStart + shift
		prevEnd, prevShift, prevAt, prevLen = ce, shift, at, len(ctx)
	}
	return starts, nil
}

// minimalEdit turns the replacement of text[s:e] by repl into the smallest
// edit that does the same, never starting or ending inside a UTF-8
// sequence or between the \r and \n of a line break (LSP positions cannot
// point there). ok is false when the replacement changes nothing.
func minimalEdit(text string, s, e int, repl string) (HunkEdit, bool) {
	for s > 0 && !editBoundary(text, s) {
		s--
		repl = text[s:s+1] + repl
	}
	for e < len(text) && !editBoundary(text, e) {
		repl += text[e : e+1]
		e++
	}
	old := text[s:e]
	if old == repl {
		return HunkEdit{}, false
	}
	pre := commonPrefix(old, repl)
	for pre > 0 && !editBoundary(text, s+pre) {
		pre--
	}
	suf := commonSuffix(old[pre:], repl[pre:])
	for suf > 0 && !editBoundary(text, e-suf) {
		suf--
	}
	return HunkEdit{OldStart: s + pre, OldEnd: e - suf, Text: repl[pre : len(repl)-suf]}, true
}

// editBoundary reports whether an edit may start or end at offset i of
// text.
func editBoundary(text string, i int) bool {
	if i <= 0 || i >= len(text) {
		return true
	}
	return utf8.RuneStart(text[i]) && !(text[i-1] == '\r' && text[i] == '\n')
}

// wholeLines reports whether text[s:e] is whole lines of text: it starts
// a line and ends one (a last line without its line break ends where
// text does, or where a break follows).
func wholeLines(text string, s, e int) bool {
	if s > 0 && text[s-1] != '\n' {
		return false
	}
	return e == len(text) || text[e-1] == '\n' || text[e] == '\n' || text[e] == '\r'
}

// contextStart returns the start of the line n lines above the one that
// holds offset s.
func contextStart(text string, s, n int) int {
	i := strings.LastIndexByte(text[:s], '\n') + 1
	for k := 0; k < n && i > 0; k++ {
		i = strings.LastIndexByte(text[:i-1], '\n') + 1
	}
	return i
}

// contextEnd returns the end (after the newline) of the line n lines below
// the one that holds offset e; a hunk that ends at the start of a line
// holds none of it.
func contextEnd(text string, e, n int) int {
	i := e
	if i > 0 && text[i-1] != '\n' {
		i = nextLineStart(text, i)
	}
	for k := 0; k < n && i < len(text); k++ {
		i = nextLineStart(text, i)
	}
	return i
}

// nextLineStart returns the offset after the newline that ends the line
// holding offset i, or len(text).
func nextLineStart(text string, i int) int {
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(text)
}

// occurrences returns every offset where sub occurs in text, overlapping
// ones included.
func occurrences(text, sub string) []int {
	var at []int
	for from := 0; from <= len(text); {
		j := strings.Index(text[from:], sub)
		if j < 0 {
			break
		}
		at = append(at, from+j)
		from += j + 1
	}
	return at
}

// lineSpan names the lines bytes [s, e) of text cover: "line 4",
// "lines 40-44"; an insertion is "at line 4".
func lineSpan(text string, s, e int) string {
	first := 1 + strings.Count(text[:s], "\n")
	if e == s {
		return fmt.Sprintf("at line %d", first)
	}
	last := 1 + strings.Count(text[:e-1], "\n")
	if last == first {
		return fmt.Sprintf("line %d", first)
	}
	return fmt.Sprintf("lines %d-%d", first, last)
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// DisplayName is how messages name the proposal's file.
func DisplayName(p Proposal) string {
	if p.Path != "" {
		return p.Path
	}
	return path.Base(strings.ReplaceAll(p.Abs, "\\", "/"))
}

// Place is PlanEdit for a front end that writes the file itself: the
// plan whose Result it writes, or, when there is nothing to write, the
// outcome that ends the proposal (a refusal, or a file that already had
// this text). name is the file as the model is told it; readErr is the
// failure to read cur, if any.
func Place(p Proposal, name string, cur Current, readErr error) (plan EditPlan, done *Outcome) {
	if readErr != nil {
		return plan, &Outcome{Reason: fmt.Sprintf("%s cannot be read: %v; nothing was applied", name, readErr)}
	}
	plan, err := PlanEdit(p, cur)
	switch {
	case err != nil:
		return plan, &Outcome{Reason: err.Error()}
	case plan.Empty():
		return plan, &Outcome{Applied: true, Note: name + " already had this text"}
	}
	return plan, nil
}
