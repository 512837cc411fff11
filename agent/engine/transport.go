package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"time"
)

// maxBody bounds a response body read whole (a non-streamed answer or an
// error page): far above any real answer, it only stops a runaway server.
const maxBody = 64 << 20

var (
	errIdle            = errors.New("the engine sent nothing within the idle timeout")
	errResponseTimeout = errors.New("the engine did not answer within the response timeout")
)

// callKey carries a *call in the context of the request go-openai builds,
// so that the HTTP wrapper knows which Chat call it serves and concurrent
// calls never share state.
type callKey struct{}

// call is the state of one Chat call shared with the HTTP wrapper. Every
// field is written and read on the goroutine that runs Chat (go-openai
// calls Do and reads the body synchronously), except that the idle timer's
// own goroutine calls cancel.
type call struct {
	stream bool
	// maxTokens is the request's max_tokens (0: none), past which a
	// stream is stopped (assembler.overran).
	maxTokens int
	patch     *bodyPatch
	// session and parent are the request's Session and ParentSession,
	// identity the headers they go in.
	session, parent string
	identity        Identity
	idle            time.Duration // the wait for the first byte
	chunk           time.Duration // the wait between chunks after it
	cancel          context.CancelCauseFunc
	timer           *time.Timer
	// began is set at the first byte; silence is the wait that was
	// exceeded when the timer fired. Both are read after the call.
	began   bool
	silence time.Duration

	status int    // HTTP status; 0 when no response arrived
	body   []byte // whole body of a non-streamed answer, an error, or a stream answered without SSE
	// retryAfter is the wait the answer's Retry-After header asked for
	// (go-openai's errors drop the headers).
	retryAfter time.Duration
	// bodyErr is set when reading a whole body failed part way.
	bodyErr error
	// diverted: a streamed request was answered with a plain body (JSON
	// or HTML), now in body; go-openai sees an empty stream.
	diverted bool
	sse      *sseBody // the wrapped stream body
}

// startIdle arms the idle timer; it fires unless touch is called in time.
func (c *call) startIdle() {
	if c.idle <= 0 || c.timer != nil {
		return
	}
	c.silence = c.idle
	c.timer = time.AfterFunc(c.idle, func() { c.cancel(errIdle) })
}

// heard restarts the wait for the first byte when the headers came.
func (c *call) heard() {
	if c.timer != nil && !c.began {
		c.timer.Reset(c.idle)
	}
}

// touch records that bytes of the answer arrived: from now on the wait
// between chunks applies.
func (c *call) touch() {
	if c.timer == nil {
		return
	}
	wait := c.idle
	if c.chunk > 0 {
		wait = c.chunk
	}
	c.began, c.silence = true, wait
	c.timer.Reset(wait)
}

func (c *call) stop() {
	if c.timer != nil {
		c.timer.Stop()
	}
}

// doer is the HTTPDoer go-openai sends through. For a request that carries
// a *call it patches the body, arms the idle timer for streams, and keeps
// what go-openai discards: the status, Retry-After and raw body of answers
// and errors, and, for streams, whether `data: [DONE]` arrived.
type doer struct {
	hc *http.Client
}

func (d doer) Do(r *http.Request) (*http.Response, error) {
	c, _ := r.Context().Value(callKey{}).(*call)
	if c == nil {
		return d.hc.Do(r)
	}
	if c.patch != nil && r.Body != nil {
		orig, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		body, err := c.patch.apply(orig)
		if err != nil {
			return nil, err
		}
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	if c.session != "" {
		r = r.Clone(r.Context())
		c.identity.setSession(r.Header, c.session, c.parent)
	}
	if c.stream {
		c.startIdle()
	}
	resp, err := d.hc.Do(r)
	if err != nil {
		return nil, err
	}
	c.status = resp.StatusCode
	c.retryAfter = retryAfter(resp.Header, time.Now())
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if c.stream && ok && !plainBody(resp.Header) {
		// Headers are not the answer: llama.cpp sends them before the
		// prefill, so the wait for the first byte still applies.
		c.heard()
		c.sse = &sseBody{rc: resp.Body, c: c}
		resp.Body = c.sse
		return resp, nil
	}
	var src io.Reader = resp.Body
	if c.stream {
		src = &touchReader{r: resp.Body, c: c}
	}
	b, err := io.ReadAll(io.LimitReader(src, maxBody))
	resp.Body.Close()
	if err != nil {
		c.bodyErr = err
		return nil, err
	}
	c.body = b
	if c.stream && ok {
		c.diverted = true
		b = nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

// plainBody reports whether a 2xx answer to a streamed request is a whole
// JSON or HTML body rather than server-sent events: an engine that ignores
// "stream", or a proxy's page.
func plainBody(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return false
	}
	return mt == "application/json" || mt == "text/html"
}

type touchReader struct {
	r io.Reader
	c *call
}

func (t *touchReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.c.touch()
	}
	return n, err
}

// maxLine bounds the part of one SSE line kept for inspection; an error
// event is far shorter.
const maxLine = 64 << 10

// sseBody wraps a stream's body: every read resets the idle timer, and the
// lines are watched for `data: [DONE]` and for `data: {"error":…}`, which
// go-openai reads but does not report faithfully.
type sseBody struct {
	rc io.ReadCloser
	c  *call

	line    []byte
	long    bool // the current line outgrew maxLine
	head    []byte
	sawDone bool
	errLine []byte // payload of the first error event
}

const headSize = 512

func (s *sseBody) Read(p []byte) (int, error) {
	n, err := s.rc.Read(p)
	if n > 0 {
		s.c.touch()
		s.scan(p[:n])
	}
	if err == io.EOF && len(s.line) > 0 {
		s.endLine()
	}
	return n, err
}

func (s *sseBody) Close() error { return s.rc.Close() }

func (s *sseBody) scan(b []byte) {
	if len(s.head) < headSize {
		s.head = append(s.head, b[:min(len(b), headSize-len(s.head))]...)
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		if room := maxLine - len(s.line); room < len(part) {
			s.long = true
			part = part[:room]
		}
		s.line = append(s.line, part...)
		if i < 0 {
			return
		}
		s.endLine()
		b = b[i+1:]
	}
}

var (
	dataPrefix = []byte("data:")
	doneData   = []byte("[DONE]")
	errorData  = []byte(`{"error"`)
)

func (s *sseBody) endLine() {
	line := bytes.TrimSpace(s.line)
	if payload, ok := bytes.CutPrefix(line, dataPrefix); ok {
		payload = bytes.TrimSpace(payload)
		switch {
		case bytes.Equal(payload, doneData):
			s.sawDone = true
		case s.errLine == nil && !s.long && bytes.HasPrefix(payload, errorData):
			s.errLine = bytes.Clone(payload)
		}
	}
	s.line = s.line[:0]
	s.long = false
}
