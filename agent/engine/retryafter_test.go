package engine

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	const date = "Sun, 06 Nov 1994 08:49:37 GMT" // the engine's Date header
	tests := []struct {
		name        string
		retry, date string // the headers; "" leaves one out
		want        time.Duration
	}{
		{"absent", "", "", 0},
		{"seconds", "60", "", 60 * time.Second},
		{"seconds with spaces", " 120 ", "", 120 * time.Second},
		{"zero", "0", "", 0},
		{"leading zeros", "007", "", 7 * time.Second},
		{"huge", "99999999999999999999999", "", maxRetryAfter},
		{"negative", "-5", "", 0},
		{"fraction", "1.5", "", 0},
		{"unit", "60s", "", 0},
		{"garbage", "soon", "", 0},
		{"date against the Date header", "Sun, 06 Nov 1994 08:50:37 GMT", date, time.Minute},
		{"date in RFC 850 form", "Sunday, 06-Nov-94 08:51:37 GMT", date, 2 * time.Minute},
		{"date in asctime form", "Sun Nov  6 08:49:47 1994", date, 10 * time.Second},
		{"date against now", "Sat, 01 Mar 2025 12:00:30 GMT", "", 30 * time.Second},
		{"date against now, a bad Date header", "Sat, 01 Mar 2025 12:00:30 GMT", "yesterday", 30 * time.Second},
		{"date already past", "Sun, 06 Nov 1994 08:48:37 GMT", date, 0},
		{"date equal to Date", date, date, 0},
		{"date not in any form", "2025-03-01T12:00:30Z", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.retry != "" {
				h.Set("Retry-After", tt.retry)
			}
			if tt.date != "" {
				h.Set("Date", tt.date)
			}
			if got := retryAfter(h, now); got != tt.want {
				t.Errorf("retryAfter(Retry-After %q, Date %q) = %v, want %v", tt.retry, tt.date, got, tt.want)
			}
		})
	}
}

// The client carries the Retry-After of an error answer on the *Error,
// whole or streamed, and says it in the message.
func TestChatRetryAfter(t *testing.T) {
	rate := `{"error":{"message":"slow down","type":"rate_limit_error"}}`
	loading := `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`
	withHeaders := func(r reply, kv ...string) reply {
		for i := 0; i < len(kv); i += 2 {
			r.header.Set(kv[i], kv[i+1])
		}
		return r
	}
	tests := []struct {
		name   string
		reply  reply
		kind   Kind
		want   time.Duration
		msgHas string
	}{
		{"429 seconds", withHeaders(jsonReply(429, []byte(rate)), "Retry-After", "60"), RateLimit, time.Minute,
			"HTTP 429: slow down; the engine asks to wait 60 s before a retry"},
		{"429 date", withHeaders(jsonReply(429, []byte(rate)), "Date", "Sun, 06 Nov 1994 08:49:37 GMT", "Retry-After", "Sun, 06 Nov 1994 08:50:07 GMT"),
			RateLimit, 30 * time.Second, "the engine asks to wait 30 s before a retry"},
		{"429 garbage", withHeaders(jsonReply(429, []byte(rate)), "Retry-After", "later"), RateLimit, 0, "slow down; wait and retry"},
		{"429 absent", jsonReply(429, []byte(rate)), RateLimit, 0, "slow down; wait and retry"},
		{"503 loading", withHeaders(jsonReply(503, []byte(loading)), "Retry-After", "20"), Loading, 20 * time.Second,
			"wait until the model has loaded; the engine asks to wait 20 s before a retry"},
		{"503 proxy page", withHeaders(reply{status: 503, header: http.Header{"Content-Type": {"text/html"}},
			body: []byte("<html><head><title>503 Service Unavailable</title></head></html>")}, "Retry-After", "5"),
			Server, 5 * time.Second, "see the engine's log; the engine asks to wait 5 s before a retry"},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name + "/whole"
			var onDelta func(Delta)
			if stream {
				name, onDelta = tt.name+"/stream", func(Delta) {}
			}
			t.Run(name, func(t *testing.T) {
				base := newServer(t, tt.reply)
				_, err := NewClient(Options{BaseURL: base}).Chat(t.Context(), userRequest(), onDelta)
				var e *Error
				if !errors.As(err, &e) || e.Kind != tt.kind {
					t.Fatalf("Chat() error = %v, want kind %v", err, tt.kind)
				}
				if e.RetryAfter != tt.want {
					t.Errorf("Chat() RetryAfter = %v, want %v", e.RetryAfter, tt.want)
				}
				if !strings.Contains(err.Error(), tt.msgHas) {
					t.Errorf("Chat() error = %q, want it to contain %q", err, tt.msgHas)
				}
			})
		}
	}
}
