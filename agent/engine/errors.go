package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// Kind classifies an engine failure by what the user, or the agent, does
// about it. A Kind is itself an error so that callers can write
// errors.Is(err, engine.Overflow).
type Kind int

const (
	// Unknown is a failure that fits no other kind.
	Unknown Kind = iota
	// Unreachable: nothing answers at the endpoint (refused, no route, DNS).
	Unreachable
	// Timeout: the engine did not answer, or a stream fell silent, in time.
	Timeout
	// Canceled: the caller cancelled the context.
	Canceled
	// Auth: the engine refused the credentials (401, 403).
	Auth
	// NotFound: the path or the model does not exist (404); often a base
	// URL without its /v1.
	NotFound
	// Overflow: the prompt (or prompt plus max_tokens) does not fit the
	// context window. Error.PromptTokens and Error.Window carry the engine's
	// own figures when it gave them.
	Overflow
	// RateLimit: 429.
	RateLimit
	// Loading: the engine is up but its model is still loading (503).
	Loading
	// Server: any other 5xx.
	Server
	// BadRequest: any other 4xx.
	BadRequest
	// BadResponse: the engine answered with something that is not what the
	// protocol promises (an HTML page, garbage JSON, missing fields).
	BadResponse
	// StreamCut: a streamed answer ended before it finished.
	StreamCut
	// BadToolCall: the model produced a tool call whose arguments are not
	// valid JSON. The response is still returned beside the error.
	BadToolCall
	// Template: llama.cpp could not parse the model's output in the format
	// its chat template expects (HTTP 500 "… does not match the expected
	// … format"): the template or the model's tool-call format is wrong,
	// and the same request fails again.
	Template
)

var kindNames = [...]string{
	Unknown:     "engine failure",
	Unreachable: "engine unreachable",
	Timeout:     "engine timed out",
	Canceled:    "canceled",
	Auth:        "engine refused the credentials",
	NotFound:    "not found at the engine",
	Overflow:    "context overflow",
	RateLimit:   "engine rate limit",
	Loading:     "engine is loading its model",
	Server:      "engine server error",
	BadRequest:  "engine rejected the request",
	BadResponse: "engine sent an unexpected response",
	StreamCut:   "stream cut short",
	BadToolCall: "malformed tool call",
	Template:    "engine could not parse the model's output with its chat template",
}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "engine failure"
	}
	return kindNames[k]
}

// Error makes a Kind usable as a target of errors.Is.
func (k Kind) Error() string { return k.String() }

// Retryable reports whether the same request may succeed if sent again
// later, unchanged.
func (k Kind) Retryable() bool {
	switch k {
	case Timeout, RateLimit, Loading, Server, StreamCut, Unreachable:
		return true
	}
	return false
}

// Error is a classified engine failure.
type Error struct {
	Kind     Kind
	Endpoint string // the base URL the request went to
	Op       string // what was attempted: "chat", "GET /v1/models", …
	Status   int    // HTTP status, 0 when there was no response
	Message  string // the engine's own message, trimmed to one line
	Type     string // the engine's error type, if it gave one

	// For Overflow: the engine's prompt size and window, when it said.
	PromptTokens int
	Window       int

	// RetryAfter is the wait the engine asked for before the next
	// request, in the answer's Retry-After header (seconds or a date,
	// RFC 9110 §10.2.3); 0 when it named none, or a moment already past.
	// Whether to wait that long is the caller's choice.
	RetryAfter time.Duration

	Err error // the underlying error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.String())
	if e.Op != "" || e.Endpoint != "" {
		b.WriteString(" (")
		b.WriteString(strings.TrimSpace(e.Op + " " + e.Endpoint))
		b.WriteString(")")
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	} else if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if h := e.Hint(); h != "" {
		b.WriteString("; ")
		b.WriteString(h)
	}
	if e.RetryAfter > 0 && e.Kind != RateLimit {
		b.WriteString("; ")
		b.WriteString(e.askedWait())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches a Kind: errors.Is(err, engine.Overflow).
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

// Hint says, in one clause, what the user can do about the failure.
func (e *Error) Hint() string {
	switch e.Kind {
	case Unreachable:
		return "is the engine running? check the endpoint (REIKA_ENDPOINT or the profile's endpoint)"
	case Timeout:
		return "the engine may be overloaded or stuck; try again, or check its log"
	case Auth:
		return "set the API key: put it in the environment variable the profile names (api_key_env)"
	case NotFound:
		if e.Status == 404 && !strings.HasSuffix(strings.TrimRight(e.Endpoint, "/"), "/v1") {
			return "the endpoint usually ends in /v1 (e.g. http://127.0.0.1:8080/v1)"
		}
		return "check the endpoint and the model name (REIKA_MODEL)"
	case Overflow:
		if e.Window > 0 {
			return fmt.Sprintf("the engine's window is %d tokens", e.Window)
		}
		return "the prompt is larger than the engine's context window"
	case RateLimit:
		if e.RetryAfter > 0 {
			return e.askedWait()
		}
		return "wait and retry"
	case Loading:
		return "wait until the model has loaded"
	case Server:
		return "see the engine's log"
	case BadResponse:
		return "is this an OpenAI-compatible endpoint? check the endpoint URL"
	case StreamCut:
		return "the engine closed the stream early; see its log"
	case Template:
		return "start llama-server with --jinja, and --chat-template-file with a template that supports tool calls for this model (or use a model whose template does)"
	}
	return ""
}

// askedWait says the wait the engine asked for.
func (e *Error) askedWait() string {
	return "the engine asks to wait " + seconds(e.RetryAfter) + " before a retry"
}

// classifyTransport turns an error from http.Client.Do (no response at all)
// into an *Error.
func classifyTransport(endpoint, op string, err error) *Error {
	e := &Error{Kind: Unknown, Endpoint: endpoint, Op: op, Err: err}
	var ue *url.Error
	if errors.As(err, &ue) {
		e.Err = ue.Err
	}
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.Is(err, context.Canceled):
		e.Kind = Canceled
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		e.Kind = Timeout
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.ECONNRESET),
		errors.As(err, &dnsErr), errors.As(err, &opErr):
		e.Kind = Unreachable
	}
	return e
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// classifyHTTP turns a non-2xx answer into an *Error, reading the body the
// way each engine writes it: llama.cpp's and vLLM's {"error":{…}} envelope,
// old vLLM's flat {"object":"error","message":…}, Ollama's and LM Studio's
// {"error":"…"}, or anything else (an HTML page from a proxy, plain text).
func classifyHTTP(endpoint, op string, status int, body []byte) *Error {
	e := &Error{Endpoint: endpoint, Op: op, Status: status}
	msg, typ, nPrompt, nCtx := parseErrorBody(body)
	e.Message, e.Type = oneLine(msg), typ
	switch {
	case status == 401 || status == 403:
		e.Kind = Auth
	case status == 404:
		e.Kind = NotFound
	case status == 429:
		e.Kind = RateLimit
	case status == 503 && (strings.Contains(strings.ToLower(msg), "loading") || typ == "unavailable_error"):
		e.Kind = Loading
	case status >= 500 && templateMismatch(msg):
		e.Kind = Template
	case status >= 500:
		e.Kind = Server
	case status >= 400:
		e.Kind = BadRequest
	default:
		e.Kind = BadResponse
	}
	if p, w, ok := overflowFigures(typ, msg); ok || nCtx > 0 && typ == "exceed_context_size_error" {
		e.Kind = Overflow
		e.PromptTokens, e.Window = p, w
		if nPrompt > 0 {
			e.PromptTokens = nPrompt
		}
		if nCtx > 0 {
			e.Window = nCtx
		}
	}
	if e.Message == "" && len(body) > 0 {
		e.Message = describeBody(body)
	}
	return e
}

// templateMismatch reports whether an engine's message says it could not
// parse the model's output in its chat template's format (llama.cpp).
func templateMismatch(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "does not match the expected") && strings.Contains(m, "format")
}

// parseErrorBody reads an error body in any of the shapes engines send.
func parseErrorBody(body []byte) (msg, typ string, nPrompt, nCtx int) {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Type    string          `json:"type"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &env) != nil {
		return "", "", 0, 0
	}
	if len(env.Error) > 0 {
		var s string
		if json.Unmarshal(env.Error, &s) == nil {
			return s, "", 0, 0
		}
		var inner struct {
			Message       json.RawMessage `json:"message"`
			Type          string          `json:"type"`
			NPromptTokens int             `json:"n_prompt_tokens"`
			NCtx          int             `json:"n_ctx"`
		}
		if json.Unmarshal(env.Error, &inner) == nil {
			return rawText(inner.Message), inner.Type, inner.NPromptTokens, inner.NCtx
		}
	}
	if len(env.Message) > 0 {
		return rawText(env.Message), env.Type, 0, 0
	}
	if len(env.Detail) > 0 {
		return rawText(env.Detail), "", 0, 0
	}
	return "", "", 0, 0
}

// rawText renders a JSON value that should be a string but may be a list of
// strings (some servers) or anything else.
func rawText(r json.RawMessage) string {
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(r, &list) == nil {
		return strings.Join(list, ", ")
	}
	return string(r)
}

var (
	// llama.cpp: "request (13392 tokens) exceeds the available context size (8192 tokens)".
	llamaOverflow = regexp.MustCompile(`\((\d+) tokens\) exceeds the available context size \((\d+) tokens\)`)
	// vLLM, SGLang, OpenAI: "maximum context length is 4096 tokens".
	maxContextLen = regexp.MustCompile(`maximum context length is (\d+) tokens`)
	// The prompt size in the sentences that follow it, across versions:
	// "your request has 2778 input tokens", "your messages resulted in 5000
	// tokens", "you requested 17000 tokens (16000 in the messages, …".
	vllmInput     = regexp.MustCompile(`request has (\d+) input tokens`)
	vllmMessages  = regexp.MustCompile(`\((\d+) in the messages`)
	openaiResults = regexp.MustCompile(`messages resulted in (\d+) tokens`)
	// LM Studio: "the model is loaded with context length of only 4096 tokens".
	lmstudioCtx = regexp.MustCompile(`context length of only (\d+) tokens`)
)

// overflowFigures recognises a context-length error message and reads the
// prompt size and the window out of it, where the message carries them.
func overflowFigures(typ, msg string) (prompt, window int, ok bool) {
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	if m := llamaOverflow.FindStringSubmatch(msg); m != nil {
		return atoi(m[1]), atoi(m[2]), true
	}
	if m := maxContextLen.FindStringSubmatch(msg); m != nil {
		window = atoi(m[1])
		for _, re := range []*regexp.Regexp{vllmInput, vllmMessages, openaiResults} {
			if p := re.FindStringSubmatch(msg); p != nil {
				prompt = atoi(p[1])
				break
			}
		}
		return prompt, window, true
	}
	if m := lmstudioCtx.FindStringSubmatch(msg); m != nil {
		return 0, atoi(m[1]), true
	}
	low := strings.ToLower(msg)
	if typ == "exceed_context_size_error" || typ == "context_length_exceeded" ||
		strings.Contains(low, "exceeds the available context size") ||
		strings.Contains(low, "context length exceeded") ||
		strings.Contains(low, "greater than the context length") {
		return 0, 0, true
	}
	return 0, 0, false
}

// describeBody summarises a body that is not a recognised error envelope.
func describeBody(body []byte) string {
	s := strings.TrimSpace(string(body))
	low := strings.ToLower(s)
	if strings.HasPrefix(low, "<!doctype html") || strings.HasPrefix(low, "<html") {
		if m := regexp.MustCompile(`(?is)<title>(.*?)</title>`).FindStringSubmatch(s); m != nil {
			return "an HTML page titled " + strconv.Quote(oneLine(m[1]))
		}
		return "an HTML page"
	}
	return oneLine(s)
}

// oneLine collapses whitespace and bounds the length of a message meant for
// one line of a status bar or a log.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const max = 300
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
