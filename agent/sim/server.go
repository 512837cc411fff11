package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Server is one simulated engine. Create it with New; serve it with Serve
// or mount Handler in an httptest.Server.
type Server struct {
	cfg     Config
	fl      flavor // the engine imitated, picked from cfg.Flavor
	handler http.Handler
	cache   promptCache
	slots   *slotPool // nil for vLLM, whose cache is shared
	policy  *policy   // nil without a Root
	created int64     // the "created" time of models and completions

	mu              sync.Mutex
	script          []Turn
	injected        []Fault
	records         []RequestRecord
	chatSeq         int
	readyAt         time.Time
	loadingOverride *bool
	vocab           map[int]string // pieces seen by /tokenize, for /detokenize
	// keyed are the scripts a Replicas router shares with its
	// replicas, by ScriptHeader; nil for a server of its own.
	keyed *keyedScripts
	// modelStatus is the router's model's status (router.go); "" is
	// loaded.
	modelStatus string

	logMu     sync.Mutex
	closing   chan struct{}
	closeOnce sync.Once
}

// RequestRecord is what one chat request asked for and what it cost. Every
// chat request is recorded, refused ones included.
type RequestRecord struct {
	Seq  int    // chat request number, from 1
	Body []byte // the raw request body
	// Headers are the request's HTTP headers.
	Headers      http.Header
	Stream       bool
	IncludeUsage bool     // stream_options.include_usage
	ToolChoice   string   // "auto", "none", "required" or "function:NAME"
	Tools        []string // names of the tools offered
	Messages     int      // messages in the request
	MaxTokens    int      // the request's max_tokens, -1 when unset
	// Prompt is the rendered prompt; PromptTokens its token count (BOS
	// included), the figure an engine reports for the request as sent.
	Prompt       string
	PromptTokens int
	// EvalTokens are the prompt tokens the engine evaluated: PromptTokens,
	// or fewer when Ollama truncated (then DroppedMessages says how many
	// messages it dropped).
	EvalTokens      int
	DroppedMessages int
	Slot            int // the slot used; -1 for vLLM's shared cache or none
	CacheN          int // prompt tokens reused from the cache
	PromptN         int // prompt tokens evaluated anew
	// Common is how many prompt tokens the cache held before the first
	// that differs (at most all but one). Restart says whether a llama.cpp
	// slot whose cache cannot roll back (Config.Cache) restarted before
	// it, at CacheN: from a checkpoint, or from 0.
	Common  int
	Restart Restart
	// CompletionTokens were generated; SentTokens reached the client (fewer
	// when the stream was cut, stalled or cancelled).
	CompletionTokens int
	SentTokens       int
	FinishReason     string   // "stop", "tool_calls", "length", or "" when no reply was sent
	ToolCalls        []string // names of the tools the reply called
	Source           string   // where the reply came from: "script", "policy", "note", "final"
	Status           int      // the HTTP status sent
	Error            string   // the error message sent, if any
	Fault            string   // the fault applied (Fault.String), if any
	Cancelled        bool     // the client went away, or the server closed, mid-answer
}

// New checks cfg and builds a Server. The load time (Config.LoadTime)
// starts now.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	fl := flavorFor(cfg.Flavor)
	if cfg.Model == "" {
		cfg.Model = fl.defaultModel()
	}
	s := &Server{
		cfg:     cfg,
		fl:      fl,
		created: time.Now().Unix(),
		script:  slices.Clone(cfg.Script),
		readyAt: time.Now().Add(cfg.LoadTime),
		vocab:   map[int]string{},
		closing: make(chan struct{}),
	}
	s.cache, s.slots = fl.newCache(cfg.Slots, cfg.Cache)
	if cfg.Root != "" {
		s.policy = newPolicy(cfg.Root, cfg.PolicyRounds)
	}
	s.handler = s.recoverer(s.routes())
	return s, nil
}

// Config is the server's configuration, defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// Handler serves the flavour's endpoints.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve answers on ln until ctx is cancelled, then shuts down: in-flight
// requests (stalled streams included) are cancelled and waited for. It
// returns nil after a shutdown caused by ctx, or the error that stopped it.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return ServeHandler(ctx, ln, s.handler, s.Close)
}

// Close makes every in-flight request finish at once (a stalled stream
// ends, a delay is cut short). The Handler still answers afterwards, but
// without delays or stalls.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
}

// Inject queues faults for the next chat requests, one fault per request,
// in order. They combine with the standing Config.Faults.
func (s *Server) Inject(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.injected = append(s.injected, faults...)
}

// SetLoading forces the llama.cpp "Loading model" state on or off,
// overriding Config.LoadTime.
func (s *Server) SetLoading(loading bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loadingOverride = &loading
}

// AppendScript adds turns to the end of the script.
func (s *Server) AppendScript(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, turns...)
}

// ScriptLeft is the number of script turns not yet consumed.
func (s *Server) ScriptLeft() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Requests returns a copy of the records of every chat request so far, in
// the order they arrived.
func (s *Server) Requests() []RequestRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]RequestRecord, len(s.records))
	for i, r := range s.records {
		r.Body = slices.Clone(r.Body)
		r.Tools = slices.Clone(r.Tools)
		r.ToolCalls = slices.Clone(r.ToolCalls)
		out[i] = r
	}
	return out
}

// Arrived is the number of chat requests that have arrived so far. A
// request is recorded when its handler returns, which may be after its
// client has the answer: a test that has its answers waits until
// Requests holds Arrived records.
func (s *Server) Arrived() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chatSeq
}

// Settled waits until every chat request that has come in is recorded,
// or ctx ends, and returns the records in the order the requests came. A
// request is recorded when its handler returns, which may be after the
// client has its answer and has moved on: a figure counted from the
// records once the client is done (the demo's lower bound) is counted
// from Settled's. The error says how many were still unrecorded.
func (s *Server) Settled(ctx context.Context) ([]RequestRecord, error) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		recorded, came := len(s.records), s.chatSeq
		s.mu.Unlock()
		var err error
		if recorded < came {
			select {
			case <-tick.C:
				continue
			case <-ctx.Done():
				err = fmt.Errorf("%d of %d chat requests recorded: %w", recorded, came, ctx.Err())
			}
		}
		recs := s.Requests()
		slices.SortStableFunc(recs, func(a, b RequestRecord) int { return a.Seq - b.Seq })
		return recs, err
	}
}

// LastRequest is the record of the newest chat request, without its body;
// ok is false before the first.
func (s *Server) LastRequest() (r RequestRecord, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.records) == 0 {
		return RequestRecord{}, false
	}
	r = s.records[len(s.records)-1]
	r.Body, r.Tools, r.ToolCalls = nil, slices.Clone(r.Tools), slices.Clone(r.ToolCalls)
	return r, true
}

func (s *Server) loading() bool {
	if !s.fl.loads() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loadingOverride != nil {
		return *s.loadingOverride
	}
	return time.Now().Before(s.readyAt)
}

// nextChat numbers a chat request and takes the fault that applies to it:
// the next injected one, merged with the standing rules that match.
func (s *Server) nextChat() (int, Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chatSeq++
	n := s.chatSeq
	var f Fault
	if len(s.injected) > 0 {
		f = s.injected[0]
		s.injected = s.injected[1:]
	}
	for _, r := range s.cfg.Faults {
		if r.applies(n) {
			f = f.merge(r.Fault)
		}
	}
	return n, f
}

func (s *Server) record(rec *RequestRecord) {
	s.mu.Lock()
	s.records = append(s.records, *rec)
	s.mu.Unlock()
	s.writeBody(rec.Body)
	if s.cfg.Log == nil {
		return
	}
	line := fmt.Sprintf("sim: #%d %d", rec.Seq, rec.Status)
	if rec.FinishReason != "" {
		line += fmt.Sprintf(" prompt=%d cache=%d new=%d", rec.EvalTokens, rec.CacheN, rec.PromptN)
		if rec.Restart != RestartAtChange {
			line += fmt.Sprintf(" restart=%s common=%d", rec.Restart, rec.Common)
		}
	} else if rec.PromptTokens > 0 {
		line += fmt.Sprintf(" prompt=%d", rec.PromptTokens)
	}
	if rec.DroppedMessages > 0 {
		line += fmt.Sprintf(" truncated(dropped %d messages of %d tokens)", rec.DroppedMessages, rec.PromptTokens)
	}
	if rec.FinishReason != "" {
		line += fmt.Sprintf(" gen=%d finish=%s", rec.CompletionTokens, rec.FinishReason)
	}
	if len(rec.ToolCalls) > 0 {
		line += fmt.Sprintf(" calls=%v", rec.ToolCalls)
	}
	if rec.Stream {
		line += " stream"
	}
	if rec.Fault != "" {
		line += " fault(" + rec.Fault + ")"
	}
	if rec.Cancelled {
		line += " cancelled"
	}
	if rec.Error != "" {
		line += " error=" + fmt.Sprintf("%q", rec.Error)
	}
	s.logMu.Lock()
	fmt.Fprintln(s.cfg.Log, line)
	s.logMu.Unlock()
}

// writeBody writes a request's body on a line of Config.Bodies.
func (s *Server) writeBody(body []byte) {
	if s.cfg.Bodies == nil || len(body) == 0 {
		return
	}
	var line bytes.Buffer
	if json.Compact(&line, body) != nil {
		line.Reset()
		b, _ := json.Marshal(string(body)) // not JSON: kept as a string
		line.Write(b)
	}
	line.WriteByte('\n')
	s.logMu.Lock()
	s.cfg.Bodies.Write(line.Bytes())
	s.logMu.Unlock()
}

// sleep waits d; it reports false when the request or the server ended
// first.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.closing:
		return false
	}
}

// hang waits until the request or the server ends.
func (s *Server) hang(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-s.closing:
	}
}

// recoverer turns a panic in a handler into a 500 instead of a dropped
// connection; http.ErrAbortHandler (a deliberate cut) passes through.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				if s.cfg.Log != nil {
					s.logMu.Lock()
					fmt.Fprintf(s.cfg.Log, "sim: internal error on %s %s: %v\n", r.Method, r.URL.Path, v)
					s.logMu.Unlock()
				}
				s.writeError(w, http.StatusInternalServerError, fmt.Sprintf("simulator internal error: %v", v))
			}
		}()
		w.Header().Set("Server", s.fl.serverHeader())
		next.ServeHTTP(w, r)
	})
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	s.fl.routes(s, mux)
	return mux
}

// writeError sends the flavour's JSON error envelope.
func (s *Server) writeError(w http.ResponseWriter, status int, msg string) {
	s.writeJSON(w, status, s.fl.errorBody(status, msg))
}
