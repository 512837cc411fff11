package engine

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// maxRetryAfter bounds the wait read from a Retry-After header, so that a
// huge figure cannot overflow a time.Duration: about 31 years, far past
// any wait a caller would keep.
const maxRetryAfter = 1_000_000_000 * time.Second

// retryAfter reads the wait an answer's Retry-After header asks for
// before the next request (RFC 9110 §10.2.3): delay-seconds, or an
// HTTP-date. A date counts from the answer's own Date header when it has
// a valid one (the engine's clock against itself, so a skewed clock here
// does not matter), else from now. It is 0 when the header is absent,
// not one of the two forms, or names a moment already past.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, ok := delaySeconds(v); ok {
		return secs
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		now = date
	}
	if d := at.Sub(now); d > 0 {
		return min(d, maxRetryAfter)
	}
	return 0
}

// delaySeconds reads delay-seconds, one or more decimal digits and
// nothing else (no sign, no fraction), bounded by maxRetryAfter.
func delaySeconds(v string) (time.Duration, bool) {
	var n int64
	for _, c := range []byte(v) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
		if time.Duration(n)*time.Second >= maxRetryAfter {
			n = int64(maxRetryAfter / time.Second)
		}
	}
	return time.Duration(n) * time.Second, true
}

// seconds writes a wait in whole seconds, rounded up, as the user reads
// it: "60 s".
func seconds(d time.Duration) string {
	return fmt.Sprintf("%d s", (d+time.Second-1)/time.Second)
}
