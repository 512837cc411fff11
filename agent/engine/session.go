package engine

import "net/http"

// Session identity. Routers in front of several engine replicas keep a
// conversation on the replica that holds its prefix cache only when the
// client names the conversation; under round-robin over N replicas a
// session's next request finds its cache one time in N, and a
// prefix-hash router loses it exactly at a fold, when the first messages
// change. Every chat request of a session carries its id in the headers
// the routers read.

// SessionHeaders are the headers a request's Session is sent in:
// x-session-id and x-session-affinity (read by the gateways that pin a
// conversation to a replica by a header, crush's and opencode's too) and
// X-Dynamo-Session-ID (NVIDIA Dynamo's router).
var SessionHeaders = []string{"x-session-id", "x-session-affinity", "X-Dynamo-Session-ID"}

// ParentSessionHeaders are the headers a subagent's request names its
// parent's session in (Dynamo's).
var ParentSessionHeaders = []string{"X-Dynamo-Parent-Session-ID"}

// setSession puts the session's id, and its parent's, in h.
func setSession(h http.Header, session, parent string) {
	for _, k := range SessionHeaders {
		h.Set(k, session)
	}
	if parent == "" {
		return
	}
	for _, k := range ParentSessionHeaders {
		h.Set(k, parent)
	}
}
