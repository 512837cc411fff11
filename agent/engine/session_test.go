package engine

import (
	"context"
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
