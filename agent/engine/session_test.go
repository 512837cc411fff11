package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// A request of a session carries its id in every header a router reads,
// streamed or not, and a subagent's its parent's too; a request without
// one carries none.
func TestSessionHeaders(t *testing.T) {
	var mu sync.Mutex
	var got []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`))
	}))
	defer srv.Close()
	c := NewClient(Options{BaseURL: srv.URL + "/v1"})
	msgs := []Message{{Role: "user", Content: "hi"}}
	for _, req := range []Request{
		{Messages: msgs, Session: "s-1"},
		{Messages: msgs, Session: "s-1/sub-1", ParentSession: "s-1"},
		{Messages: msgs},
	} {
		if _, err := c.Chat(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range SessionHeaders {
		if got[0].Get(k) != "s-1" || got[1].Get(k) != "s-1/sub-1" || got[2].Get(k) != "" {
			t.Errorf("%s = %q, %q, %q; want s-1, s-1/sub-1 and none", k, got[0].Get(k), got[1].Get(k), got[2].Get(k))
		}
	}
	for _, k := range ParentSessionHeaders {
		if got[0].Get(k) != "" || got[1].Get(k) != "s-1" {
			t.Errorf("%s = %q, %q; want none, then the parent's s-1", k, got[0].Get(k), got[1].Get(k))
		}
	}
}

// The headers and body fields a session is named in are settings: a
// router's own header replaces the default set, an empty list sends none,
// and user and prompt_cache_key carry the id only when named; a request
// without a session (a probe) carries neither.
func TestSessionIdentitySettings(t *testing.T) {
	var mu sync.Mutex
	var heads []http.Header
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		heads, bodies = append(heads, r.Header.Clone()), append(bodies, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`))
	}))
	defer srv.Close()
	msgs := []Message{{Role: "user", Content: "hi"}}
	for _, id := range []Identity{
		{Headers: []string{"X-Team-Session"}, ParentHeaders: []string{}, Fields: []string{"user", "prompt_cache_key"}},
		{Headers: []string{}, ParentHeaders: []string{}},
	} {
		c := NewClient(Options{BaseURL: srv.URL + "/v1", Identity: id})
		for _, req := range []Request{{Messages: msgs, Session: "s-1/sub-1", ParentSession: "s-1"}, {Messages: msgs}} {
			if _, err := c.Chat(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := heads[0].Get("X-Team-Session"); got != "s-1/sub-1" {
		t.Errorf("X-Team-Session = %q, want s-1/sub-1", got)
	}
	for i, h := range heads {
		for _, k := range append(append([]string(nil), SessionHeaders...), ParentSessionHeaders...) {
			if h.Get(k) != "" {
				t.Errorf("request %d: %s = %q, want none: the setting replaces the default set", i, k, h.Get(k))
			}
		}
	}
	for _, f := range SessionFields {
		if bodies[0][f] != "s-1/sub-1" {
			t.Errorf("%s = %v, want the session's id", f, bodies[0][f])
		}
		for i := 1; i < len(bodies); i++ {
			if _, ok := bodies[i][f]; ok {
				t.Errorf("request %d carries %s, want none: no session, or no field named", i, f)
			}
		}
	}
	if heads[1].Get("X-Team-Session") != "" {
		t.Errorf("a request without a session carries X-Team-Session %q", heads[1].Get("X-Team-Session"))
	}
	if err := CheckIdentity(Identity{Headers: []string{"x session"}}); err == nil {
		t.Error("CheckIdentity accepts a header name with a space")
	}
	if err := CheckIdentity(Identity{Fields: []string{"metadata"}}); err == nil {
		t.Error("CheckIdentity accepts a field it does not send")
	}
}
