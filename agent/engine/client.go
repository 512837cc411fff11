package engine

import (
	"context"
	"errors"
	"fmt"
	"math"

	openai "github.com/sashabaranov/go-openai"
)

// opChat names the chat call in errors.
const opChat = "chat"

// Client sends chat requests to one engine. It is safe for concurrent use:
// each call keeps its own state, attached to its own context.
type Client struct {
	opts     Options
	timeouts Timeouts
	oc       *openai.Client
}

// NewClient returns a client for the engine at opts.BaseURL. It sends
// nothing until Chat is called.
func NewClient(opts Options) *Client {
	// DefaultConfig with an empty key sends no Authorization header.
	cfg := openai.DefaultConfig(opts.APIKey)
	cfg.BaseURL = opts.BaseURL
	cfg.HTTPClient = doer{hc: opts.httpClient()}
	// SSE comment lines (keep-alives during a long prefill) count toward
	// this limit; Timeouts.Idle guards against a stuck stream instead.
	cfg.EmptyMessagesLimit = math.MaxUint
	return &Client{opts: opts, timeouts: opts.Timeouts.withDefaults(), oc: openai.NewClientWithConfig(cfg)}
}

// Chat sends one chat-completion request. With onDelta set, the answer is
// streamed and onDelta receives each increment, on the calling goroutine,
// as it arrives; with onDelta nil, the answer comes whole.
//
// Every error is an *Error; test its kind with errors.Is(err,
// engine.Overflow) and so on. The Response is also returned beside some
// errors: always with BadToolCall (to show the model which call was
// malformed), and with failures part way through a stream (StreamCut,
// Timeout, Canceled, an error event) it holds what arrived.
//
// A streamed call fails with Timeout when the engine sends nothing for
// Timeouts.Idle (the wait for the first byte included); a whole call when
// it takes longer than Timeouts.Response. Cancelling ctx closes the
// connection at once, so the engine stops generating.
func (c *Client) Chat(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	if c.opts.BaseURL == "" {
		return nil, c.errorf(Unreachable, nil, "no endpoint configured")
	}
	stream := onDelta != nil
	or, patch, err := buildRequest(c.opts, req, stream)
	if err != nil {
		return nil, c.errorf(BadRequest, err, "%v", err)
	}
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	first := c.timeouts.Idle
	if req.FirstByte > 0 {
		first = req.FirstByte
	}
	cl := &call{stream: stream, maxTokens: req.MaxTokens, patch: patch, idle: first, chunk: c.timeouts.Chunk, cancel: cancel,
		session: req.Session, parent: req.ParentSession, identity: c.opts.Identity}
	defer cl.stop()
	if !stream {
		var cancelT context.CancelFunc
		callCtx, cancelT = context.WithTimeoutCause(callCtx, c.timeouts.Response, errResponseTimeout)
		defer cancelT()
	}
	callCtx = context.WithValue(callCtx, callKey{}, cl)
	if stream {
		return c.stream(ctx, callCtx, cl, or, onDelta)
	}
	return c.complete(ctx, callCtx, cl, or)
}

// complete runs a non-streamed call. go-openai sends it; the answer is read
// from the raw body the wrapper kept, which carries what go-openai's types
// drop (timings, reasoning, cached tokens).
func (c *Client) complete(ctx, callCtx context.Context, cl *call, or openai.ChatCompletionRequest) (*Response, error) {
	_, err := c.oc.CreateChatCompletion(callCtx, or)
	if cl.status >= 200 && cl.status < 300 && cl.bodyErr == nil {
		// go-openai's own decoding may have failed (arguments sent as an
		// object, content as parts): the raw body decides.
		resp, perr := parseCompletion(c.opts.BaseURL, opChat, cl.status, cl.body, nil)
		if perr != nil {
			return nil, perr
		}
		return resp, checkToolCalls(c.opts.BaseURL, opChat, resp)
	}
	if err == nil {
		err = fmt.Errorf("unexpected HTTP status %d", cl.status)
	}
	return nil, c.failure(ctx, callCtx, cl, err)
}

// failure classifies an error from go-openai by what actually happened,
// in this order: the caller gave up, one of our timers fired, the engine
// answered with an error status (read from the raw body, not go-openai's
// strings), the answer broke off, or nothing answered at all.
func (c *Client) failure(ctx, callCtx context.Context, cl *call, err error) *Error {
	if ctx.Err() != nil {
		kind := Canceled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			kind = Timeout
		}
		return &Error{Kind: kind, Endpoint: c.opts.BaseURL, Op: opChat, Err: context.Cause(ctx)}
	}
	switch cause := context.Cause(callCtx); {
	case errors.Is(cause, errIdle) && cl.began:
		return c.errorf(Timeout, cause, "the answer stopped: no data for %v", cl.silence)
	case errors.Is(cause, errIdle):
		return c.errorf(Timeout, cause, "no data for %v before the answer began", cl.silence)
	case errors.Is(cause, errResponseTimeout):
		return c.errorf(Timeout, cause, "no answer within %v", c.timeouts.Response)
	}
	switch {
	case cl.status == 0:
		return classifyTransport(c.opts.BaseURL, opChat, err)
	case cl.bodyErr != nil:
		e := c.errorf(StreamCut, cl.bodyErr, "the answer broke off: %v", cl.bodyErr)
		e.Status = cl.status
		return e
	case cl.status < 200 || cl.status >= 300:
		e := classifyHTTP(c.opts.BaseURL, opChat, cl.status, cl.body)
		e.RetryAfter = cl.retryAfter
		return e
	case cl.sse != nil:
		return c.errorf(StreamCut, err, "the stream broke off: %v", err)
	}
	e := c.errorf(BadResponse, err, "%v", err)
	e.Status = cl.status
	return e
}

// errorf returns an *Error of kind for this client's endpoint and the chat
// call.
func (c *Client) errorf(kind Kind, err error, format string, args ...any) *Error {
	return &Error{Kind: kind, Endpoint: c.opts.BaseURL, Op: opChat, Message: fmt.Sprintf(format, args...), Err: err}
}
