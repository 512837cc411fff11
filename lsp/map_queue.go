package lsp

import (
	"context"
	"runtime"
	"sync"
	"time"

	"go.lsp.dev/protocol"
)

// The repo map follows the open documents off the reader's goroutine. A
// didOpen or didChange only marks the document dirty; one worker, owned by
// the connection, hands the map the latest text of each dirty document
// once the editor has been quiet for mapQuiet (or, while the user keeps
// typing, every mapMaxDelay), and whoever needs the map first (the
// agent's Render) brings it up to date itself. A burst of keystrokes costs
// the map one update, and the dirty set, one entry per open document, is
// bounded by what the editor has open.

// mapQuiet is how long the editor stays quiet before the map catches up;
// mapMaxDelay bounds how long it lags behind a user who keeps typing.
const (
	mapQuiet    = 250 * time.Millisecond
	mapMaxDelay = 2 * time.Second
)

// mapQueue is the documents the repo map has not seen the latest text of.
// It is safe for concurrent use.
type mapQueue struct {
	mu    sync.Mutex
	dirty map[protocol.DocumentURI]bool
	last  time.Time     // of the last change
	wake  chan struct{} // holds a token when dirty became non-empty
	jobs  chan func()   // work for the worker's thread

	// apply is held from reading a document's text to the map's update
	// with it, and while a closed document leaves the map: whoever takes
	// a text second has a text at least as new, and a document closed
	// meanwhile does not come back.
	apply sync.Mutex
}

// testHookMapIdle, when set (by a test, before Serve), is called each
// time the worker has caught up with every document.
var testHookMapIdle func()

func newMapQueue() mapQueue {
	return mapQueue{dirty: map[protocol.DocumentURI]bool{}, wake: make(chan struct{}, 1), jobs: make(chan func())}
}

// mark records that uri changed. Only the first mark after the worker
// caught up wakes it; the others only move the time of the last change.
func (q *mapQueue) mark(uri protocol.DocumentURI) {
	q.mu.Lock()
	first := len(q.dirty) == 0
	q.dirty[uri] = true
	q.last = time.Now()
	q.mu.Unlock()
	if first {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// calm is how long it is since the last change.
func (q *mapQueue) calm() time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	return time.Since(q.last)
}

// forget drops uri from the dirty set (it was closed).
func (q *mapQueue) forget(uri protocol.DocumentURI) {
	q.mu.Lock()
	delete(q.dirty, uri)
	q.mu.Unlock()
}

// idle reports whether no document is dirty.
func (q *mapQueue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.dirty) == 0
}

// take empties the dirty set and returns what it held.
func (q *mapQueue) take() []protocol.DocumentURI {
	q.mu.Lock()
	defer q.mu.Unlock()
	uris := make([]protocol.DocumentURI, 0, len(q.dirty))
	for uri := range q.dirty {
		uris = append(uris, uri)
	}
	clear(q.dirty)
	return uris
}

// mapWorker brings the map up to date after each quiet spell, and runs
// the jobs others hand it (onMapThread), until ctx ends.
//
// Every parse happens here, on one OS thread: glibc gives each thread
// that calls malloc an arena of its own, and syntax trees made on one
// thread and freed on another leave every arena fragmented. With 500
// files of 20 KB parsed from wherever the Go scheduler ran them, glibc's
// arenas held 72 MB for 23 MB of trees (27 MB for 5 MB with 8 trees); on
// one thread, 25 MB (7 MB).
//
// A panic in the map is logged and survived: the map is a help to the
// agent, and the worker must go on.
func (s *Server) mapWorker(ctx context.Context) {
	runtime.LockOSThread() // never unlocked: the thread ends with the worker
	// quiet runs while documents wait for a quiet spell, which began
	// waiting at since.
	var quiet *time.Timer
	var since time.Time
	defer func() {
		if quiet != nil {
			quiet.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case job := <-s.mapq.jobs:
			s.survive(job)
		case <-s.mapq.wake:
			if quiet == nil {
				quiet, since = time.NewTimer(mapQuiet), time.Now()
			}
		case <-timerC(quiet):
			if calm := s.mapq.calm(); calm < mapQuiet && time.Since(since) < mapMaxDelay {
				quiet.Reset(mapQuiet - calm)
				continue
			}
			quiet = nil
			s.survive(func() {
				slice, cancel := context.WithTimeout(ctx, mapSlice)
				defer cancel()
				s.flushMap(slice)
			})
			if !s.mapq.idle() {
				quiet = time.NewTimer(0) // the next slice, after any job waiting
				continue
			}
			if h := testHookMapIdle; h != nil {
				h()
			}
		}
	}
}

// survive runs f, logging a panic instead of ending the server.
func (s *Server) survive(f func()) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Printf("internal error in the repo map: %v", r)
		}
	}()
	f()
}

// timerC is t's channel, or nil (which never delivers) for no timer.
func timerC(t *time.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

// onMapThread runs f on the map's worker, which parses on one thread, and
// returns when f has run; once the connection has ended, it runs f on the
// caller's goroutine.
func (s *Server) onMapThread(f func()) {
	done := make(chan struct{})
	select {
	case s.mapq.jobs <- func() { defer close(done); f() }:
		<-done
	case <-s.ctx.Done():
		f()
	}
}

// flushMap hands the map the latest text of every dirty document, until
// ctx ends; what is left stays dirty for whoever comes next.
func (s *Server) flushMap(ctx context.Context) {
	uris := s.mapq.take()
	for i, uri := range uris {
		if ctx.Err() != nil {
			s.mapq.requeue(uris[i:])
			return
		}
		s.mapDocument(uri)
	}
}

// requeue puts back documents a flush did not get to, without moving the
// time of the last change or waking the worker: its own loop goes on.
func (q *mapQueue) requeue(uris []protocol.DocumentURI) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, uri := range uris {
		q.dirty[uri] = true
	}
}

// mapSlice is how long the worker parses before it lets a waiting job
// (the agent's Render) in; renderFlushMax is how long Render waits for the
// documents the map has not taken yet before it renders what it has. The
// rest is taken in the background, and reaches the model in the recap at
// the next fold, as anything the map learns after the prefix: with 1,000
// documents just opened, the first request does not wait for them all.
const (
	mapSlice       = 200 * time.Millisecond
	renderFlushMax = 2 * time.Second
)
