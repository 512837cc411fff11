package lsp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/tools"
)

// runs is the work under way that the client can cancel: the agent run
// (one at a time) and the requests answered from goroutines, by request
// id. It is safe for concurrent use.
type runs struct {
	mu       sync.Mutex
	run      *activeRun                    // nil when none
	inflight map[string]context.CancelFunc // by request id (idKey)
	queue    []queuedAsk                   // asks that run after the run under way (join.go)
	undo     undoRecord                    // what the last run that changed files wrote (rollback.go)
}

// activeRun is the run under way.
type activeRun struct {
	cancel context.CancelFunc
	key    string // the id of the executeCommand that started it
	asked  string // the user's instruction, on one line, for edit descriptions
	prog   atomic.Pointer[progress]

	// Guarded by runs.mu (join.go): the agent session once the run has
	// one, what the user said before it had, and whether it is ending.
	sess    *agent.Session
	pending []string
	over    bool

	mu      sync.Mutex
	changes []change // what became of the run's changes, in order
	// toldUndo counts the run's applied edits whose undo the model has
	// been told of, by their index in the run's undo record.
	toldUndo map[int]bool
}

// change is what became of one of the agent's changes.
type change struct {
	path string
	out  tools.Outcome
	account
}

// account is the end line's words on a change: why it was not applied,
// or not whole, or what to check of one applied, in a few words; and the
// fate the line groups it by.
type account struct {
	why  string
	fate fate
	// check, when set, is the line to check of a change written away
	// from where it was planned, named anew at the end of the run.
	check *lineMark
}

// fate is what the end line knows of a change beyond its outcome.
type fate int

const (
	asTold      fate = iota // as the outcome says
	unconfirmed             // applied by the editor's word; its text has not arrived
	overTyping              // applied, but sent while the user was typing (why: what to check)
	undoneByYou             // landed, then the user undid it
)

// record notes what became of a change of the run under way.
func (rs *runs) record(path string, out tools.Outcome, a account) {
	rs.mu.Lock()
	r := rs.run
	rs.mu.Unlock()
	if r == nil {
		return
	}
	r.mu.Lock()
	r.changes = append(r.changes, change{path, out, a})
	r.mu.Unlock()
}

// markUndone turns the last applied change to path into one the user
// undid.
func (r *activeRun) markUndone(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.changes) - 1; i >= 0; i-- {
		if c := &r.changes[i]; c.path == path && c.out.Applied && c.fate != undoneByYou {
			c.out.Applied = false
			c.fate = undoneByYou
			c.why = "undone by you"
			return
		}
	}
}

// landed says in one line what became of the run's changes: "1 change
// applied to a.go", "1 change applied, 1 not applied: you were editing
// the file".
func (r *activeRun) landed() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.changes) == 0 {
		return "no changes"
	}
	t := tallyChanges(r.changes)
	// One kind of outcome names the files: "1 change applied to a.go".
	single := t.kinds() == 1
	var parts []string
	if len(t.ok) > 0 {
		parts = append(parts, t.appliedPart(single))
	}
	if n := len(t.part); n > 0 {
		p := fmt.Sprintf("%d partly applied (%s)", n, t.part[0].why)
		if single {
			p = fmt.Sprintf("%d change%s to %s partly applied (%s)", n, pluralSuffix(n), files(t.part), t.part[0].why)
		}
		parts = append(parts, p)
	}
	if len(t.not) > 0 {
		parts = append(parts, notAppliedPart(t.not, single))
	}
	if n := len(t.undone); n > 0 {
		p := fmt.Sprintf("%d undone by you", n)
		if single {
			p = fmt.Sprintf("%d change%s to %s undone by you", n, pluralSuffix(n), files(t.undone))
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// tally is a run's changes sorted by what became of them.
type tally struct {
	ok, part, not, undone []change
	pending               int      // applied changes the editor has not confirmed yet
	typing                []string // where applied changes met the user's typing
}

// tallyChanges sorts changes by what became of them.
func tallyChanges(changes []change) tally {
	var t tally
	for _, c := range changes {
		if c.out.Applied && c.fate == unconfirmed {
			t.pending++
		}
		if c.out.Applied && c.fate == overTyping {
			t.typing = append(t.typing, c.why)
		}
		switch {
		case c.fate == undoneByYou:
			t.undone = append(t.undone, c)
		case c.out.Applied:
			t.ok = append(t.ok, c)
		case c.out.Partial:
			t.part = append(t.part, c)
		default:
			t.not = append(t.not, c)
		}
	}
	return t
}

// kinds is how many kinds of outcome the run's changes had.
func (t tally) kinds() int {
	kinds := 0
	for _, cs := range [][]change{t.ok, t.part, t.not, t.undone} {
		if len(cs) > 0 {
			kinds++
		}
	}
	return kinds
}

// appliedPart is the end line's part on the applied changes; single says
// they are all the run made, so the part names their files.
func (t tally) appliedPart(single bool) string {
	n := len(t.ok)
	p := fmt.Sprintf("%d change%s applied", n, pluralSuffix(n))
	if single {
		p += " to " + files(t.ok)
	}
	if t.pending > 0 {
		p += fmt.Sprintf(" (%d unconfirmed: the editor has not sent its text yet)", t.pending)
	}
	if len(t.typing) > 0 {
		p += ", but you were typing: check " + strings.Join(t.typing, ", ")
	}
	return p
}

// notAppliedPart is the end line's part on the changes not applied. Each
// change keeps its own reason: a decline is said only of what the user
// declined. single says they are all the run made.
func notAppliedPart(not []change, single bool) string {
	n := len(not)
	var whys []string
	by := map[string][]change{}
	for _, c := range not {
		if by[c.why] == nil {
			whys = append(whys, c.why)
		}
		by[c.why] = append(by[c.why], c)
	}
	switch {
	case len(whys) > 1:
		var each []string
		for _, w := range whys {
			each = append(each, fmt.Sprintf("%s (%s)", w, files(by[w])))
		}
		return fmt.Sprintf("%d not applied: %s", n, strings.Join(each, "; "))
	case single:
		return fmt.Sprintf("%d change%s to %s not applied: %s", n, pluralSuffix(n), files(not), not[0].why)
	}
	return fmt.Sprintf("%d not applied: %s", n, not[0].why)
}

// files names the files of some changes, at most three.
func files(cs []change) string {
	seen := map[string]bool{}
	var names []string
	for _, c := range cs {
		if !seen[c.path] {
			seen[c.path] = true
			names = append(names, c.path)
		}
	}
	if len(names) > 3 {
		names = append(names[:3], fmt.Sprintf("%d more", len(names)-3))
	}
	return strings.Join(names, ", ")
}

func (r *activeRun) progressToken() string {
	if p := r.prog.Load(); p != nil {
		return p.token
	}
	return ""
}

// busy reports whether a run is under way.
func (rs *runs) busy() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.run != nil
}

// finish forgets r, if it is still the run under way.
func (rs *runs) finish(r *activeRun) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.run == r {
		rs.run = nil
	}
}

// asked is the instruction of the run under way, "" when none.
func (rs *runs) asked() string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.run == nil {
		return ""
	}
	return rs.run.asked
}

// cancel stops the run under way, if any.
func (rs *runs) cancel() bool {
	rs.mu.Lock()
	r := rs.run
	rs.mu.Unlock()
	if r == nil {
		return false
	}
	r.cancel()
	return true
}

// cancelRequest cancels the request with this id, and the run it started.
func (rs *runs) cancelRequest(key string) {
	rs.mu.Lock()
	cancel, r := rs.inflight[key], rs.run
	rs.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if r != nil && r.key == key {
		r.cancel()
	}
}

// cancelProgress stops the run that reports progress with this token.
func (rs *runs) cancelProgress(token string) {
	rs.mu.Lock()
	r := rs.run
	rs.mu.Unlock()
	if r != nil && r.progressToken() == token {
		r.cancel()
	}
}

// track makes the request with this id cancellable until untrack.
func (rs *runs) track(key string, cancel context.CancelFunc) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.inflight == nil {
		rs.inflight = map[string]context.CancelFunc{}
	}
	rs.inflight[key] = cancel
}

func (rs *runs) untrack(key string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.inflight, key)
}
