package engine

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// captures is the folder of real engine responses (see its README).
const captures = "../../testdata/engine-captures"

// readCapture returns a file under testdata/engine-captures.
func readCapture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(captures, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reply is one scripted HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
	sse    bool // write the body event by event, flushing each
}

// llamaCapture loads a llama.cpp capture NAME (e.g.
// "c8192-np1/06-chat-2msg"): its status, headers and raw body.
func llamaCapture(t testing.TB, name string) reply {
	t.Helper()
	base := "llama.cpp/" + name
	status, err := strconv.Atoi(strings.TrimSpace(string(readCapture(t, base+".status"))))
	if err != nil {
		t.Fatalf("%s.status: %v", name, err)
	}
	r := reply{status: status, header: http.Header{}}
	sc := bufio.NewScanner(bytes.NewReader(readCapture(t, base+".headers.txt")))
	sc.Scan() // status line
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch k = http.CanonicalHeaderKey(strings.TrimSpace(k)); k {
		case "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive":
			// Set by the test server itself (the bodies were edited after capture).
		default:
			r.header.Add(k, strings.TrimSpace(v))
		}
	}
	if _, err := os.Stat(filepath.Join(captures, filepath.FromSlash(base+".sse.txt"))); err == nil {
		r.body = readCapture(t, base+".sse.txt")
		r.sse = true
	} else {
		r.body = readCapture(t, base+".response.json")
	}
	return r
}

// jsonReply answers with a body from docs-samples or from the test.
func jsonReply(status int, body []byte) reply {
	return reply{status: status, header: http.Header{"Content-Type": {"application/json"}}, body: body}
}

// sseReply answers with an event stream written by the test.
func sseReply(events ...string) reply {
	var b strings.Builder
	for _, e := range events {
		b.WriteString(e)
		b.WriteString("\n\n")
	}
	return reply{status: 200, header: http.Header{"Content-Type": {"text/event-stream"}}, body: []byte(b.String()), sse: true}
}

func (r reply) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	w.WriteHeader(r.status)
	if !r.sse {
		w.Write(r.body)
		return
	}
	f, _ := w.(http.Flusher)
	for ev := range bytes.SplitAfterSeq(r.body, []byte("\n\n")) {
		w.Write(ev)
		if f != nil {
			f.Flush()
		}
	}
}

// recorder keeps the requests a test server received.
type recorder struct {
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.bodies = append(rec.bodies, b)
		rec.headers = append(rec.headers, r.Header.Clone())
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (rec *recorder) last(t testing.TB) ([]byte, http.Header) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bodies) == 0 {
		t.Fatal("the server received no request")
	}
	return rec.bodies[len(rec.bodies)-1], rec.headers[len(rec.headers)-1]
}

// newServer starts a loopback server and returns its /v1 base URL.
func newServer(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// userRequest is a small request for tests that only look at the answer.
func userRequest() Request {
	return Request{Messages: []Message{
		{Role: "system", Content: "You are a helpful coding assistant. Answer briefly."},
		{Role: "user", Content: "What does parse_config return when the file is missing?"},
	}}
}

// kindOf returns err's Kind, or -1 when err is not an *Error.
func kindOf(err error) Kind {
	if e, ok := AsError(err); ok {
		return e.Kind
	}
	return -1
}

// hold reads the request and answers nothing until the client goes away
// (or 10 s pass, so a broken client cannot hang the test server). The body
// must be read: only then does the server notice a closed connection.
func hold(_ http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}
