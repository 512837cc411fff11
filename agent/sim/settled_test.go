package sim

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
)

// Settled waits for the record of a request that has come in and is not
// done (here held by a latency), and says how many were unrecorded when
// its context ends first.
func TestSettled(t *testing.T) {
	s, url := start(t, Config{})
	if recs, err := s.Settled(context.Background()); err != nil || len(recs) != 0 {
		t.Fatalf("Settled before any request = %d records, %v", len(recs), err)
	}
	s.Inject(Fault{Latency: 300 * time.Millisecond})
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	for deadline := time.Now().Add(testslow.Scale(10 * time.Second)); s.chatCount() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request did not come in")
		}
	}

	short, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	recs, err := s.Settled(short)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "0 of 1 chat requests recorded") || len(recs) != 0 {
		t.Errorf("Settled while the request is held = %d records, %v; want none and an error saying 0 of 1", len(recs), err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), testslow.Scale(10*time.Second))
	defer cancel()
	recs, err = s.Settled(ctx)
	if err != nil || len(recs) != 1 || recs[0].Seq != 1 {
		t.Errorf("Settled = %d records, %v; want the one request's", len(recs), err)
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
}
