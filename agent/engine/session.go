package engine

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Session identity. Routers in front of several engine replicas keep a
// conversation on the replica that holds its prefix cache only when the
// client names the conversation; under round-robin over N replicas a
// session's next request finds its cache one time in N, and a
// prefix-hash router loses it exactly at a fold, when the first messages
// change. Every chat request of a session carries its id in the headers
// the routers read (Identity); a request without a Session (a probe)
// carries none.

// SessionHeaders are the headers a request's Session is sent in by
// default:
//   - x-session-id: the header routers that pin a conversation to a
//     replica by a header are set to read (vLLM's production-stack router's
//     session routing names its header with --session-key; Envoy's and
//     Gateway API implementations' consistent hashing on a header), and the
//     one crush and opencode send;
//   - x-session-affinity: the same, by the name crush and opencode also
//     send;
//   - X-Dynamo-Session-ID: NVIDIA Dynamo's KV-aware router.
var SessionHeaders = []string{"x-session-id", "x-session-affinity", "X-Dynamo-Session-ID"}

// ParentSessionHeaders are the headers a subagent's request names its
// parent's session in by default (Dynamo's, which keeps a subagent beside
// its parent's cache).
var ParentSessionHeaders = []string{"X-Dynamo-Parent-Session-ID"}

// SessionFields are the body fields a session's id may also be sent in:
// the OpenAI API's user and prompt_cache_key (OpenAI routes a request by
// its prompt_cache_key to the machine that holds the prefix). They are
// sent only when Identity.Fields names them: vLLM and SGLang read user,
// llama.cpp and Ollama ignore both, and a hosted service that checks its
// fields strictly refuses one it does not know.
var SessionFields = []string{"user", "prompt_cache_key"}

// Identity says where a request's session is named.
type Identity struct {
	// Headers carry the session's id; nil sends SessionHeaders, an empty
	// non-nil list none.
	Headers []string
	// ParentHeaders carry a subagent's parent's id; nil sends
	// ParentSessionHeaders, an empty non-nil list none.
	ParentHeaders []string
	// Fields are the body fields, among SessionFields, that carry the
	// session's id; none by default.
	Fields []string
}

// CheckIdentity reports the first name of id that cannot be sent: a
// header name that is not a valid HTTP token, a field not among
// SessionFields.
func CheckIdentity(id Identity) error {
	for _, h := range append(append([]string(nil), id.Headers...), id.ParentHeaders...) {
		if !validHeaderName(h) {
			return fmt.Errorf("%q is not an HTTP header name", h)
		}
	}
	for _, f := range id.Fields {
		if !knownField(f) {
			return fmt.Errorf("%q is not a session field: want %s", f, strings.Join(SessionFields, " or "))
		}
	}
	return nil
}

func knownField(f string) bool {
	for _, k := range SessionFields {
		if k == f {
			return true
		}
	}
	return false
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

func (id Identity) headers() []string {
	if id.Headers == nil {
		return SessionHeaders
	}
	return id.Headers
}

func (id Identity) parentHeaders() []string {
	if id.ParentHeaders == nil {
		return ParentSessionHeaders
	}
	return id.ParentHeaders
}

// setSession puts the session's id, and its parent's, in h.
func (id Identity) setSession(h http.Header, session, parent string) {
	for _, k := range id.headers() {
		h.Set(k, session)
	}
	if parent == "" {
		return
	}
	for _, k := range id.parentHeaders() {
		h.Set(k, parent)
	}
}

// addSessionFields puts the session's id in the body fields id names,
// below the extras: a profile's own "user" wins.
func (id Identity) addSessionFields(p *bodyPatch, session string) {
	if session == "" {
		return
	}
	b, _ := json.Marshal(session)
	for _, f := range id.Fields {
		if knownField(f) {
			p.defaults[f] = b
		}
	}
}
