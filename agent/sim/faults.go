package sim

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Fault is a misbehaviour applied to one chat request. Fields combine: a
// fault may delay the answer and then cut the stream. The zero Fault does
// nothing.
type Fault struct {
	// Latency delays the first byte of the answer.
	Latency time.Duration
	// ChunkLatency delays every streamed chunk.
	ChunkLatency time.Duration
	// Status answers with this HTTP status and the flavour's JSON error
	// (llama.cpp's "Loading model" for 503) instead of a reply.
	Status int
	// HTML answers with an HTML error page, as a reverse proxy in front of
	// the engine would; the status is Status, or 502 when Status is 0.
	HTML bool
	// RetryAfter is sent as the failing answer's Retry-After header, as
	// written: delay-seconds ("60"), an HTTP-date, or anything else a
	// careless server sends. Only with Status or HTML.
	RetryAfter string
	// CutAfter closes the connection abruptly after that many streamed
	// chunks (never sending [DONE]); a non-streamed answer is cut half way.
	CutAfter int
	// StallAfter stops sending after that many streamed chunks and holds
	// the connection open until the client gives up; a non-streamed answer
	// stalls half way.
	StallAfter int
	// MalformedToolCalls cuts the reply's tool-call arguments short, so they
	// are not valid JSON.
	MalformedToolCalls bool
	// IgnoreMaxTokens generates the whole reply whatever max_tokens the
	// request set, as a broken engine or proxy does.
	IgnoreMaxTokens bool
	// Usage misreports the reply's figures as a careless engine or a proxy
	// in front of one does: UsageAbsent sends none (no usage object, no
	// timings), UsageZero sends every count as 0.
	Usage UsageFault
	// PromptScale multiplies the prompt_tokens the usage reports (and its
	// total) by this factor; 0 and 1 leave them. The request is served
	// and recorded with its true count.
	PromptScale int
}

// UsageFault is how a reply misreports its figures.
type UsageFault string

const (
	UsageAbsent UsageFault = "absent"
	UsageZero   UsageFault = "zero"
)

// FaultRule applies a Fault to chat requests by their number (1 for the
// first chat request the server receives).
type FaultRule struct {
	Fault Fault
	// Every applies the fault to every Every-th request (request n when n
	// is a multiple of Every); 0 or 1 means every request.
	Every int
	// First limits the rule to the first First requests; 0 means no limit.
	First int
}

func (r FaultRule) applies(n int) bool {
	if r.First > 0 && n > r.First {
		return false
	}
	return r.Every <= 1 || n%r.Every == 0
}

// IsZero reports whether f does nothing.
func (f Fault) IsZero() bool { return f == Fault{} }

// failing reports whether f answers with an error instead of a reply.
func (f Fault) failing() bool { return f.Status != 0 || f.HTML }

func (f Fault) validate() error {
	if f.Latency < 0 || f.ChunkLatency < 0 || f.CutAfter < 0 || f.StallAfter < 0 {
		return fmt.Errorf("fault values must not be negative")
	}
	if f.Status != 0 && (f.Status < 400 || f.Status > 599) {
		return fmt.Errorf("fault status %d is not an HTTP error status (400-599)", f.Status)
	}
	if f.RetryAfter != "" && !f.failing() {
		return fmt.Errorf("fault retry_after %q needs a status or an HTML page to go with", f.RetryAfter)
	}
	for _, c := range []byte(f.RetryAfter) {
		if c < ' ' || c > '~' {
			return fmt.Errorf("fault retry_after %q: a header value is printable ASCII", f.RetryAfter)
		}
	}
	if f.Usage != "" && f.Usage != UsageAbsent && f.Usage != UsageZero {
		return fmt.Errorf("fault usage %q: want %q or %q", f.Usage, UsageAbsent, UsageZero)
	}
	if f.PromptScale < 0 {
		return fmt.Errorf("fault prompt_scale %d must not be negative", f.PromptScale)
	}
	return nil
}

// merge combines two faults: the longer delays, the first status, the
// first Retry-After, the earlier cut or stall, either malformation, the
// first misreport of the usage, the larger prompt scale.
func (f Fault) merge(g Fault) Fault {
	f.Latency = max(f.Latency, g.Latency)
	f.ChunkLatency = max(f.ChunkLatency, g.ChunkLatency)
	if f.Status == 0 {
		f.Status = g.Status
	}
	if f.RetryAfter == "" {
		f.RetryAfter = g.RetryAfter
	}
	f.HTML = f.HTML || g.HTML
	f.CutAfter = minPositive(f.CutAfter, g.CutAfter)
	f.StallAfter = minPositive(f.StallAfter, g.StallAfter)
	f.MalformedToolCalls = f.MalformedToolCalls || g.MalformedToolCalls
	f.IgnoreMaxTokens = f.IgnoreMaxTokens || g.IgnoreMaxTokens
	if f.Usage == "" {
		f.Usage = g.Usage
	}
	f.PromptScale = max(f.PromptScale, g.PromptScale)
	return f
}

func minPositive(a, b int) int {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}

// String describes f for the request record and the log ("" for none).
func (f Fault) String() string {
	var parts []string
	if f.Latency > 0 {
		parts = append(parts, "latency="+f.Latency.String())
	}
	if f.ChunkLatency > 0 {
		parts = append(parts, "chunk-latency="+f.ChunkLatency.String())
	}
	if f.HTML {
		parts = append(parts, fmt.Sprintf("html=%d", f.htmlStatus()))
	} else if f.Status != 0 {
		parts = append(parts, fmt.Sprintf("status=%d", f.Status))
	}
	if f.RetryAfter != "" {
		parts = append(parts, "retry-after="+strconv.Quote(f.RetryAfter))
	}
	if f.CutAfter > 0 {
		parts = append(parts, fmt.Sprintf("cut-after=%d", f.CutAfter))
	}
	if f.StallAfter > 0 {
		parts = append(parts, fmt.Sprintf("stall-after=%d", f.StallAfter))
	}
	if f.MalformedToolCalls {
		parts = append(parts, "malformed-tool-calls")
	}
	if f.IgnoreMaxTokens {
		parts = append(parts, "ignore-max-tokens")
	}
	if f.Usage != "" {
		parts = append(parts, "usage="+string(f.Usage))
	}
	if f.PromptScale > 1 {
		parts = append(parts, fmt.Sprintf("prompt-scale=%d", f.PromptScale))
	}
	return strings.Join(parts, " ")
}

func (f Fault) htmlStatus() int {
	if f.Status != 0 {
		return f.Status
	}
	return 502
}

// faultJSON is a Fault as a script writes it:
// {"latency": "200ms", "chunk_latency": "10ms", "status": 503, "html": true,
// "retry_after": 60, "cut_after": 3, "stall_after": 3, "malformed_tool_calls": true,
// "usage": "absent", "prompt_scale": 10}.
// retry_after is a number of seconds or a string sent as it is (a date).
type faultJSON struct {
	Latency            string          `json:"latency,omitempty"`
	ChunkLatency       string          `json:"chunk_latency,omitempty"`
	Status             int             `json:"status,omitempty"`
	HTML               bool            `json:"html,omitempty"`
	RetryAfter         json.RawMessage `json:"retry_after,omitempty"`
	CutAfter           int             `json:"cut_after,omitempty"`
	StallAfter         int             `json:"stall_after,omitempty"`
	MalformedToolCalls bool            `json:"malformed_tool_calls,omitempty"`
	IgnoreMaxTokens    bool            `json:"ignore_max_tokens,omitempty"`
	Usage              UsageFault      `json:"usage,omitempty"`
	PromptScale        int             `json:"prompt_scale,omitempty"`
}

// UnmarshalJSON reads the script form of a fault; durations are strings
// such as "250ms".
func (f *Fault) UnmarshalJSON(b []byte) error {
	var j faultJSON
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("fault: %w", err)
	}
	out := Fault{Status: j.Status, HTML: j.HTML, CutAfter: j.CutAfter,
		StallAfter: j.StallAfter, MalformedToolCalls: j.MalformedToolCalls, IgnoreMaxTokens: j.IgnoreMaxTokens, Usage: j.Usage, PromptScale: j.PromptScale}
	var err error
	if out.RetryAfter, err = retryAfterValue(j.RetryAfter); err != nil {
		return err
	}
	if j.Latency != "" {
		if out.Latency, err = time.ParseDuration(j.Latency); err != nil {
			return fmt.Errorf("fault latency: %w", err)
		}
	}
	if j.ChunkLatency != "" {
		if out.ChunkLatency, err = time.ParseDuration(j.ChunkLatency); err != nil {
			return fmt.Errorf("fault chunk_latency: %w", err)
		}
	}
	*f = out
	return f.validate()
}

// MarshalJSON writes the script form of a fault.
func (f Fault) MarshalJSON() ([]byte, error) {
	j := faultJSON{Status: f.Status, HTML: f.HTML, CutAfter: f.CutAfter,
		StallAfter: f.StallAfter, MalformedToolCalls: f.MalformedToolCalls, IgnoreMaxTokens: f.IgnoreMaxTokens, Usage: f.Usage, PromptScale: f.PromptScale}
	if f.Latency > 0 {
		j.Latency = f.Latency.String()
	}
	if f.ChunkLatency > 0 {
		j.ChunkLatency = f.ChunkLatency.String()
	}
	if f.RetryAfter != "" {
		j.RetryAfter, _ = json.Marshal(f.RetryAfter)
	}
	return json.Marshal(j)
}

// retryAfterValue reads a script's retry_after: a whole number of
// seconds, or a string.
func retryAfterValue(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var n uint64
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", fmt.Errorf("fault retry_after %s: want whole seconds or a string (an HTTP-date)", raw)
	}
	return strconv.FormatUint(n, 10), nil
}

// reported is what a reply says of its figures under f: the true ones,
// all zero, or a prompt count scaled; shown is false when it says
// nothing (no usage, no timings).
func (f Fault) reported(fig figures) (out figures, shown bool) {
	switch f.Usage {
	case UsageAbsent:
		return figures{}, false
	case UsageZero:
		return figures{}, true
	}
	if f.PromptScale > 1 {
		fig.promptTokens *= f.PromptScale
	}
	return fig, true
}

// malformArguments cuts JSON arguments short so they no longer parse: a
// proper prefix of a JSON object is never valid JSON.
func malformArguments(args string) string {
	args = strings.TrimSpace(args)
	if len(args) < 4 || args[0] != '{' {
		return `{"path": "`
	}
	// At least the brace, even when the middle falls in a run of bytes
	// that start no rune.
	return args[:max(len(truncateUTF8(args, len(args)/2)), 1)]
}
