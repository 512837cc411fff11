package lsp

import (
	"context"

	"github.com/reika-lsp/reika/agent"
)

// An ask while a run is under way steers it: the instruction joins the
// run as the user's next message, before its next request (agent's
// Session.Say), and a run whose model answered goes on with it. An ask
// with "queue": true waits instead and runs after, and so does one that
// arrives as the run is ending, when it can no longer take a message.

// admission is what became of an ask.
type admission int

const (
	started admission = iota // the ask is the run under way now
	joined                   // the ask joined the run under way
	queued                   // the ask runs after the run under way
)

// queuedAsk is an ask waiting for the run under way to end.
type queuedAsk struct {
	r           *activeRun
	ctx         context.Context
	instruction string
}

// admit makes q's run the run under way when there is none; else q's
// instruction joins the run under way, or waits for it to end (wait, or
// a run that can no longer take a message).
func (rs *runs) admit(q queuedAsk, wait bool) admission {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	cur := rs.run
	switch {
	case cur == nil:
		rs.run = q.r
		return started
	case !wait && !cur.over && cur.sess == nil:
		// The session is still starting: the run takes the message as
		// soon as it has one (attach).
		cur.pending = append(cur.pending, q.instruction)
		return joined
	case !wait && !cur.over && cur.sess.Say(q.instruction):
		return joined
	}
	rs.queue = append(rs.queue, q)
	return queued
}

// attach gives r its agent session, and the session what the user said
// while it started.
func (rs *runs) attach(r *activeRun, sess *agent.Session) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r.sess = sess
	for _, text := range r.pending {
		sess.Say(text)
	}
	r.pending = nil
}

// over marks r as ending: what the user asks from now on waits for the
// next run.
func (rs *runs) over(r *activeRun) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r.over = true
}

// next takes the first ask that waits, making it the run under way; nil
// when none waits or a run is under way.
func (rs *runs) next() *queuedAsk {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.run != nil || len(rs.queue) == 0 {
		return nil
	}
	q := rs.queue[0]
	rs.queue = rs.queue[1:]
	rs.run = q.r
	return &q
}

// dropQueue forgets the asks that wait, cancelling their contexts; it
// returns how many there were.
func (rs *runs) dropQueue() int {
	rs.mu.Lock()
	q := rs.queue
	rs.queue = nil
	rs.mu.Unlock()
	for _, a := range q {
		a.r.cancel()
	}
	return len(q)
}

// report puts a line on the progress of the run under way.
func (rs *runs) report(line string) {
	rs.mu.Lock()
	r := rs.run
	rs.mu.Unlock()
	if r == nil {
		return
	}
	if p := r.prog.Load(); p != nil {
		p.report(line)
	}
}
