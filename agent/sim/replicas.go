package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// A router in front of several replicas of one engine, as a team runs
// vLLM, SGLang or llama.cpp behind vLLM's production-stack router, llm-d,
// SGLang's model gateway, NVIDIA Dynamo or a gateway: each replica keeps
// its own prompt cache, and where a conversation's next request lands
// decides whether its prefix is found. Replicas is that router with a
// routing policy (Route); `reika-lsp sim --replicas N --route …` serves it.

// Route is how a Replicas router chooses a replica for a chat request.
type Route string

const (
	// RoundRobin sends each request to the next replica: a
	// conversation's cache is found one time in N.
	RoundRobin Route = "round-robin"
	// PrefixHash sends a request by the hash of its first messages (the
	// system prompt and the first user message): a conversation stays on
	// one replica until a fold replaces its first messages.
	PrefixHash Route = "prefix-hash"
	// SessionRoute keeps a session, named by the SessionHeader, on one
	// replica: a new session goes to the replica with the fewest sessions,
	// a subagent (ParentHeader) to its parent's; a request that names no
	// session goes round-robin.
	SessionRoute Route = "session"
)

// The headers a SessionRoute router reads, and the one that names the
// script a request's reply comes from (a replay's, per session).
const (
	SessionHeader = "x-session-id"
	ParentHeader  = "X-Dynamo-Parent-Session-ID"
	ScriptHeader  = "X-Sim-Script"
)

// ParseRoute accepts the routes' names.
func ParseRoute(s string) (Route, error) {
	switch r := Route(strings.ToLower(strings.TrimSpace(s))); r {
	case RoundRobin, PrefixHash, SessionRoute:
		return r, nil
	case "":
		return RoundRobin, nil
	}
	return "", fmt.Errorf("unknown route %q: want round-robin, prefix-hash or session", s)
}

// Replicas is a router in front of n simulated engines of one
// configuration. Other requests than chat (models, props, slots,
// tokenize) go to the first replica: they are the same on all.
type Replicas struct {
	servers []*Server
	route   Route
	keyed   *keyedScripts

	mu       sync.Mutex
	next     int            // round-robin's
	sessions map[string]int // session → replica
	load     []int          // sessions per replica
	sent     []int          // chat requests per replica
}

// NewReplicas builds a router of route in front of n replicas of cfg.
func NewReplicas(cfg Config, n int, route Route) (*Replicas, error) {
	if n < 1 || n > 64 {
		return nil, fmt.Errorf("replicas %d: want 1 to 64", n)
	}
	if _, err := ParseRoute(string(route)); err != nil {
		return nil, err
	}
	r := &Replicas{route: route, keyed: &keyedScripts{m: map[string][]Turn{}}, sessions: map[string]int{}, load: make([]int, n), sent: make([]int, n)}
	for range n {
		s, err := New(cfg)
		if err != nil {
			return nil, err
		}
		s.keyed = r.keyed
		r.servers = append(r.servers, s)
	}
	return r, nil
}

// Servers are the replicas.
func (r *Replicas) Servers() []*Server { return r.servers }

// Sent is how many chat requests each replica received.
func (r *Replicas) Sent() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.sent...)
}

// AppendScriptFor queues turns for the chat requests that name key in
// ScriptHeader, whichever replica answers them.
func (r *Replicas) AppendScriptFor(key string, turns ...Turn) {
	r.keyed.mu.Lock()
	defer r.keyed.mu.Unlock()
	r.keyed.m[key] = append(r.keyed.m[key], turns...)
}

// Handler routes each chat request to a replica.
func (r *Replicas) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/chat/completions") {
			r.servers[0].Handler().ServeHTTP(w, req)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBody))
		if err != nil {
			r.servers[0].writeError(w, http.StatusBadRequest, "could not read the request body")
			return
		}
		i := r.pick(req.Header, body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		r.servers[i].Handler().ServeHTTP(w, req)
	})
}

// pick chooses the replica for a chat request.
func (r *Replicas) pick(h http.Header, body []byte) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.choose(h, body)
	r.sent[i]++
	return i
}

// choose is pick's policy; r.mu is held.
func (r *Replicas) choose(h http.Header, body []byte) int {
	n := len(r.servers)
	if r.route == PrefixHash {
		return int(prefixHash(body) % uint32(n))
	}
	id := h.Get(SessionHeader)
	if r.route == SessionRoute && id != "" {
		if i, ok := r.sessions[id]; ok {
			return i
		}
		i, ok := r.sessions[h.Get(ParentHeader)]
		if !ok {
			i = 0
			for j := range r.load {
				if r.load[j] < r.load[i] {
					i = j
				}
			}
		}
		r.sessions[id] = i
		r.load[i]++
		return i
	}
	i := r.next % n
	r.next++
	return i
}

// prefixHash hashes a chat request's messages up to its first user
// message: what a prefix-hash router keys a conversation on.
func prefixHash(body []byte) uint32 {
	var req struct {
		Messages []json.RawMessage `json:"messages"`
	}
	json.Unmarshal(body, &req)
	h := fnv.New32a()
	for _, m := range req.Messages {
		h.Write(m)
		var role struct {
			Role string `json:"role"`
		}
		if json.Unmarshal(m, &role) == nil && role.Role == "user" {
			break
		}
	}
	return h.Sum32()
}

// Serve answers on ln until ctx is cancelled.
func (r *Replicas) Serve(ctx context.Context, ln net.Listener) error {
	return ServeHandler(ctx, ln, r.Handler(), r.close)
}

func (r *Replicas) close() {
	for _, s := range r.servers {
		s.Close()
	}
}

// keyedScripts are scripts by key, shared by a router's replicas.
type keyedScripts struct {
	mu sync.Mutex
	m  map[string][]Turn
}

// take takes the next turn of key's script for c; ok is false when it
// has none.
func (k *keyedScripts) take(key string, c *chat) (reply, *Fault, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	q := k.m[key]
	r, f, ok := takeTurn(&q, c)
	k.m[key] = q
	return r, f, ok
}
