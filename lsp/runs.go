package lsp

import (
	"context"
	"sync"
	"sync/atomic"
)

// runs is the work under way that the client can cancel: the agent run
// (one at a time) and the requests answered from goroutines, by request
// id. It is safe for concurrent use.
type runs struct {
	mu       sync.Mutex
	run      *activeRun                    // nil when none
	inflight map[string]context.CancelFunc // by request id (idKey)
}

// activeRun is the run under way.
type activeRun struct {
	cancel context.CancelFunc
	key    string // the id of the executeCommand that started it
	asked  string // the user's instruction, on one line, for edit descriptions
	prog   atomic.Pointer[progress]
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

// start makes r the run under way, unless one already is.
func (rs *runs) start(r *activeRun) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.run != nil {
		return false
	}
	rs.run = r
	return true
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
