package lsp

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// outbox is a connection whose writes are queued and written by a
// goroutine of its own, so that a writer never waits for the other end to
// read. The library runs every handler on the connection's reader and its
// replies write synchronously: over a synchronous pipe (net.Pipe, or a
// full OS pipe) a client whose reader is itself writing an answer to the
// server would wait for the server's reader, which waits for the client's
// (issue 39: TestSmokeAskApplies hung so). With the outbox the server's
// reader only ever waits for a client that has left maxUnread bytes
// unread.
//
// Messages leave in the order they were written. Close sends what is
// queued (waiting at most flushGrace for a client that does not read),
// then closes the connection. Read and Close are passed through; Write
// may be called from any goroutine.
type outbox struct {
	rwc io.ReadWriteCloser

	mu     sync.Mutex
	cond   *sync.Cond // signalled when the queue or the state changes
	queue  [][]byte
	queued int   // bytes queued or being written
	err    error // the first write's failure; then nothing more is written
	closed bool
	done   chan struct{} // closed when the writer goroutine returns
	log    func(format string, args ...any)
}

// maxUnread bounds the bytes queued for a client that does not read;
// past it Write waits. A document the agent edits is at most
// maxDocumentSize, and a client that leaves this much unread reads
// nothing at all.
const maxUnread = 64 << 20

// flushGrace bounds Close's wait for the queue to drain.
const flushGrace = 2 * time.Second

// newOutbox starts the writer of rwc's outbox; logf (nil: none) hears
// about a write that failed.
func newOutbox(rwc io.ReadWriteCloser, logf func(format string, args ...any)) *outbox {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	o := &outbox{rwc: rwc, done: make(chan struct{}), log: logf}
	o.cond = sync.NewCond(&o.mu)
	go o.run()
	return o
}

func (o *outbox) Read(p []byte) (int, error) { return o.rwc.Read(p) }

// Write queues a copy of p. It fails once a write has failed or the
// outbox is closed, and waits only while maxUnread bytes are queued.
func (o *outbox) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.err == nil && !o.closed && o.queued > 0 && o.queued+len(p) > maxUnread {
		o.cond.Wait()
	}
	if o.err != nil {
		return 0, o.err
	}
	if o.closed {
		return 0, fmt.Errorf("write after close: %w", io.ErrClosedPipe)
	}
	o.queue = append(o.queue, append([]byte(nil), p...))
	o.queued += len(p)
	o.cond.Broadcast()
	return len(p), nil
}

// run writes the queue until the outbox is closed and empty, or a write
// fails.
func (o *outbox) run() {
	defer close(o.done)
	o.mu.Lock()
	defer o.mu.Unlock()
	for {
		for len(o.queue) == 0 && !o.closed {
			o.cond.Wait()
		}
		if len(o.queue) == 0 {
			return
		}
		chunk := o.queue[0]
		o.queue[0] = nil
		o.queue = o.queue[1:]
		o.mu.Unlock()
		_, err := o.rwc.Write(chunk)
		o.mu.Lock()
		o.queued -= len(chunk)
		if err != nil {
			o.err = fmt.Errorf("write to the client: %w", err)
			if !o.closed && len(o.queue) > 0 {
				o.log("%v; %d writes unsent", err, len(o.queue))
			}
			o.queue, o.queued = nil, 0
			o.cond.Broadcast()
			return
		}
		o.cond.Broadcast()
	}
}

// Close sends what is queued, waiting at most flushGrace, then closes
// the connection and waits (as long again) for the writer, which a
// connection whose Close does not interrupt a write (stdout) may leave
// to the process's exit. It may be called more than once.
func (o *outbox) Close() error {
	o.mu.Lock()
	o.closed = true
	o.cond.Broadcast()
	o.mu.Unlock()
	flushed := waitClosed(o.done, flushGrace)
	err := o.rwc.Close()
	if !flushed {
		waitClosed(o.done, flushGrace)
	}
	return err
}

// waitClosed waits at most d for ch to be closed, and reports whether it
// was.
func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
