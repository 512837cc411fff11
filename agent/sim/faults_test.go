package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// waitRecords waits until the server has recorded n chat requests.
func waitRecords(t *testing.T, s *Server, n int) []RequestRecord {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		recs := s.Requests()
		if len(recs) >= n {
			return recs
		}
		if time.Now().After(deadline) {
			t.Fatalf("server recorded %d requests, want %d", len(recs), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// openStream posts a streamed chat request and returns the response,
// whose body the caller reads event by event.
func openStream(t *testing.T, ctx context.Context, url string, b any) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat/completions", strings.NewReader(string(mustJSON(t, b))))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("stream request: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// nextEvent reads one "data:" payload.
func nextEvent(r *bufio.Reader) (string, error) {
	for {
		line, err := r.ReadString('\n')
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
			return d, nil
		}
		if err != nil {
			return "", err
		}
	}
}

var longTurn = Turn{Content: strings.Repeat("Streaming a long answer, piece by piece. ", 10)}

func streamBody() map[string]any { return with(body(user("go")), "stream", true) }

func TestFaultStatus(t *testing.T) {
	tests := []struct {
		flavor   Flavor
		status   int
		wantBody string
	}{
		{LlamaCpp, 500, `{"error":{"code":500,"message":"simulated fault: internal server error","type":"server_error"}}`},
		{LlamaCpp, 502, `{"error":{"code":502,"message":"simulated fault: bad gateway","type":"server_error"}}`},
		{LlamaCpp, 503, `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`},
		{LlamaCpp, 429, `{"error":{"code":429,"message":"simulated fault: too many requests, retry later","type":"rate_limit_error"}}`},
		{VLLM, 500, `{"error":{"message":"simulated fault: internal server error","type":"InternalServerError","param":null,"code":500}}`},
		{Ollama, 503, `{"error":{"message":"simulated fault: Service Unavailable","type":"api_error","param":null,"code":null}}`},
	}
	for _, tt := range tests {
		t.Run(string(tt.flavor)+"/"+http.StatusText(tt.status), func(t *testing.T) {
			s, url := start(t, Config{Flavor: tt.flavor})
			s.Inject(Fault{Status: tt.status})
			for _, stream := range []bool{true, false} {
				status, data := do(t, "POST", url+"/v1/chat/completions", with(body(user("hi")), "stream", stream))
				if stream && (status != tt.status || string(data) != tt.wantBody) {
					t.Errorf("injected %d: got %d %s, want %d %s", tt.status, status, data, tt.status, tt.wantBody)
				}
				if !stream && status != 200 {
					t.Errorf("request after the injected fault = %d %s, want 200", status, data)
				}
			}
		})
	}
}

func TestFaultSchedules(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		inject []Fault
		want   []int
	}{
		{"next two", Config{}, []Fault{{Status: 500}, {Status: 503}}, []int{500, 503, 200, 200}},
		{"every third", Config{Faults: []FaultRule{{Fault: Fault{Status: 502}, Every: 3}}}, nil, []int{200, 200, 502, 200, 200, 502}},
		{"first two", Config{Faults: []FaultRule{{Fault: Fault{Status: 429}, First: 2}}}, nil, []int{429, 429, 200, 200}},
		{"injected and standing", Config{Faults: []FaultRule{{Fault: Fault{Status: 500}, Every: 2}}}, []Fault{{Status: 429}}, []int{429, 500, 200, 500}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, url := start(t, tt.cfg)
			s.Inject(tt.inject...)
			var got []int
			for range tt.want {
				status, _ := do(t, "POST", url+"/v1/chat/completions", body(user("hi")))
				got = append(got, status)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFaultHTML(t *testing.T) {
	s, url := start(t, Config{})
	s.Inject(Fault{HTML: true}, Fault{HTML: true, Status: 504})
	for _, want := range []int{502, 504} {
		resp, data := doResp(t, "POST", url+"/v1/chat/completions", streamBody())
		title := fmt.Sprintf("%d %s", want, http.StatusText(want))
		if resp.StatusCode != want || resp.Header.Get("Content-Type") != "text/html" ||
			!strings.Contains(string(data), "<center><h1>"+title+"</h1></center>") {
			t.Errorf("HTML fault = %d %q %s, want %d text/html page", resp.StatusCode, resp.Header.Get("Content-Type"), data, want)
		}
	}
}

func TestFaultCut(t *testing.T) {
	t.Run("stream", func(t *testing.T) {
		s, url := start(t, Config{Script: []Turn{longTurn}})
		s.Inject(Fault{CutAfter: 3})
		resp := openStream(t, context.Background(), url, streamBody())
		r := bufio.NewReader(resp.Body)
		var got []string
		var err error
		for {
			var ev string
			if ev, err = nextEvent(r); err != nil {
				break
			}
			got = append(got, ev)
		}
		if len(got) != 3 || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut after 3: read %d events then %v, want 3 events then unexpected EOF", len(got), err)
		}
		rec := waitRecords(t, s, 1)[0]
		if !rec.Cancelled || rec.Fault != "cut-after=3" || rec.SentTokens >= rec.CompletionTokens {
			t.Errorf("record: cancelled %v fault %q sent %d of %d, want a cut", rec.Cancelled, rec.Fault, rec.SentTokens, rec.CompletionTokens)
		}
	})
	t.Run("after the last chunk", func(t *testing.T) {
		s, url := start(t, Config{Script: []Turn{{Content: "short"}}})
		s.Inject(Fault{CutAfter: 100})
		resp := openStream(t, context.Background(), url, streamBody())
		data, err := io.ReadAll(resp.Body)
		if strings.Contains(string(data), "[DONE]") || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut after 100 of fewer chunks: %v, [DONE] sent = %v; want no [DONE] and unexpected EOF", err, strings.Contains(string(data), "[DONE]"))
		}
	})
	t.Run("non-streamed", func(t *testing.T) {
		s, url := start(t, Config{})
		s.Inject(Fault{CutAfter: 1})
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(string(mustJSON(t, body(user("hi"))))))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err == nil || json.Valid(data) {
			t.Errorf("non-streamed cut: read %q, %v; want half a body and an error", data, err)
		}
	})
}

func TestFaultStall(t *testing.T) {
	s, url := start(t, Config{Script: []Turn{longTurn}})
	s.Inject(Fault{StallAfter: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := openStream(t, ctx, url, streamBody())
	r := bufio.NewReader(resp.Body)
	for i := range 2 {
		if _, err := nextEvent(r); err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
	}
	// The stream now sends nothing and stays open; the client gives up.
	cancel()
	if _, err := nextEvent(r); err == nil {
		t.Errorf("read after the stall and cancel succeeded, want an error")
	}
	rec := waitRecords(t, s, 1)[0]
	if !rec.Cancelled || rec.Fault != "stall-after=2" {
		t.Errorf("record: cancelled %v fault %q, want a cancelled stall", rec.Cancelled, rec.Fault)
	}
}

// TestCloseEndsStall: Close releases a stalled stream without the client.
func TestCloseEndsStall(t *testing.T) {
	s, url := start(t, Config{Script: []Turn{longTurn}})
	s.Inject(Fault{StallAfter: 1})
	resp := openStream(t, context.Background(), url, streamBody())
	r := bufio.NewReader(resp.Body)
	if _, err := nextEvent(r); err != nil {
		t.Fatal(err)
	}
	s.Close()
	rest, _ := io.ReadAll(r)
	if strings.Contains(string(rest), "[DONE]") {
		t.Errorf("after Close a stalled stream sent [DONE]")
	}
	if rec := waitRecords(t, s, 1)[0]; !rec.Cancelled {
		t.Errorf("record after Close: cancelled = false, want true")
	}
}

func TestFaultLatency(t *testing.T) {
	t.Run("served", func(t *testing.T) {
		s, url := start(t, Config{})
		s.Inject(Fault{Latency: time.Millisecond, ChunkLatency: time.Millisecond})
		status, data := do(t, "POST", url+"/v1/chat/completions", streamBody())
		if status != 200 || !strings.HasSuffix(string(data), "data: [DONE]\n\n") {
			t.Errorf("delayed stream = %d %s, want a whole stream", status, data)
		}
		if rec := waitRecords(t, s, 1)[0]; rec.Fault != "latency=1ms chunk-latency=1ms" {
			t.Errorf("record fault = %q, want the latencies", rec.Fault)
		}
	})
	t.Run("client gives up", func(t *testing.T) {
		s, url := start(t, Config{})
		s.Inject(Fault{Latency: time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat/completions", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		// Wait until the request is being delayed, then give up.
		for s.chatCount() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("client error = %v, want context.Canceled", err)
		}
		if rec := waitRecords(t, s, 1)[0]; !rec.Cancelled {
			t.Errorf("record: cancelled = false, want true")
		}
	})
}

func TestFaultMalformedToolCalls(t *testing.T) {
	call := Turn{ToolCalls: []ScriptCall{{Name: "read", Arguments: json.RawMessage(`{"path": "main.go"}`)}}}
	s, url := start(t, Config{Script: []Turn{call, call}})
	s.Inject(Fault{MalformedToolCalls: true})
	b := with(body(user("go")), "tools", toolDefs("read"))
	bad := chatOK(t, url, b).Choices[0].Message.ToolCalls[0].Function.Arguments
	good := chatOK(t, url, b).Choices[0].Message.ToolCalls[0].Function.Arguments
	if json.Valid([]byte(bad)) || !strings.HasPrefix(`{"path":"main.go"}`, bad) {
		t.Errorf("malformed arguments = %q, want a cut-short prefix that is not JSON", bad)
	}
	if good != `{"path":"main.go"}` {
		t.Errorf("next arguments = %q, want them whole", good)
	}
}

func TestScriptTurnFault(t *testing.T) {
	turns, err := ParseScript([]byte(`[{"fault": {"status": 500}}, {"content": "recovered", "fault": {"latency": "1ms"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	s, url := start(t, Config{Script: turns})
	if status, _ := do(t, "POST", url+"/v1/chat/completions", body(user("hi"))); status != 500 {
		t.Errorf("first request = %d, want the turn's 500", status)
	}
	if got := chatOK(t, url, body(user("hi"))).content(); got != "recovered" {
		t.Errorf("second request = %q, want the next turn", got)
	}
	if s.ScriptLeft() != 0 {
		t.Errorf("turns left = %d, want 0", s.ScriptLeft())
	}
}

// TestCancelStopsGeneration: in realtime mode a client that goes away
// stops the generation; the slot keeps what was generated.
func TestCancelStopsGeneration(t *testing.T) {
	s, url := start(t, Config{Realtime: true, DecodeMSPerToken: 60000, PrefillMSPerToken: 0.001, Script: []Turn{longTurn}})
	ctx, cancel := context.WithCancel(context.Background())
	resp := openStream(t, ctx, url, streamBody())
	if _, err := nextEvent(bufio.NewReader(resp.Body)); err != nil {
		t.Fatal(err)
	}
	cancel()
	rec := waitRecords(t, s, 1)[0]
	if !rec.Cancelled || rec.SentTokens >= rec.CompletionTokens {
		t.Errorf("record: cancelled %v sent %d of %d, want the generation stopped", rec.Cancelled, rec.SentTokens, rec.CompletionTokens)
	}
}

func TestFaultValidation(t *testing.T) {
	for _, f := range []Fault{{Status: 200}, {Latency: -1}, {CutAfter: -2}, {Usage: "some"}, {PromptScale: -10}} {
		if _, err := New(Config{Faults: []FaultRule{{Fault: f}}}); err == nil {
			t.Errorf("New with fault %+v = nil error, want one", f)
		}
	}
}

// A fault's Retry-After goes out as written with its status or its HTML
// page; a script gives it as seconds or as a string (a date).
func TestFaultRetryAfter(t *testing.T) {
	turns, err := ParseScript([]byte(`[
	  {"fault": {"status": 429, "retry_after": 60}},
	  {"fault": {"status": 503, "retry_after": "Sun, 06 Nov 1994 08:49:37 GMT"}},
	  {"fault": {"html": true, "retry_after": "soon"}},
	  {"content": "recovered"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	wantTurns := []Fault{{Status: 429, RetryAfter: "60"}, {Status: 503, RetryAfter: "Sun, 06 Nov 1994 08:49:37 GMT"}, {HTML: true, RetryAfter: "soon"}}
	for i, want := range wantTurns {
		if turns[i].Fault == nil || *turns[i].Fault != want {
			t.Errorf("turn %d fault = %+v, want %+v", i+1, turns[i].Fault, want)
		}
		b, err := json.Marshal(want)
		var back Fault
		if err == nil {
			err = json.Unmarshal(b, &back)
		}
		if err != nil || back != want {
			t.Errorf("%+v through JSON (%s) = %+v, %v", want, b, back, err)
		}
	}
	s, url := start(t, Config{Script: turns})
	for i, want := range []struct {
		status int
		header string
	}{{429, "60"}, {503, "Sun, 06 Nov 1994 08:49:37 GMT"}, {502, "soon"}, {200, ""}} {
		resp, data := doResp(t, "POST", url+"/v1/chat/completions", body(user("hi")))
		if resp.StatusCode != want.status || resp.Header.Get("Retry-After") != want.header {
			t.Errorf("request %d = %d with Retry-After %q (%s), want %d with %q", i+1, resp.StatusCode, resp.Header.Get("Retry-After"), data, want.status, want.header)
		}
	}
	if got := waitRecords(t, s, 1)[0].Fault; got != `status=429 retry-after="60"` {
		t.Errorf("the first record's fault = %q, want the status and the header", got)
	}
	for _, bad := range []struct{ text, want string }{
		{`{"retry_after": 60}`, "needs a status"},
		{`{"status": 429, "retry_after": -1}`, "whole seconds"},
		{`{"status": 429, "retry_after": 1.5}`, "whole seconds"},
		{`{"status": 429, "retry_after": {"s": 1}}`, "whole seconds"},
		{`{"status": 429, "retry_after": "60\r\nX-Injected: 1"}`, "printable ASCII"},
	} {
		var f Fault
		if err := json.Unmarshal([]byte(bad.text), &f); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("fault %s = %v, want an error containing %q", bad.text, err, bad.want)
		}
	}
}

// A fault on the figures: the reply is the same, its usage (and, on
// llama.cpp, its timings) absent, all zero or its prompt count scaled;
// the record keeps the true count. Streamed replies carry the same.
func TestFaultMisreportedUsage(t *testing.T) {
	for _, flavor := range []Flavor{LlamaCpp, VLLM} {
		for _, tt := range []struct {
			fault  Fault
			prompt func(true int) int // the reported count, -1 for no usage object
			timing bool               // llama.cpp's timings are sent
		}{
			{Fault{}, func(n int) int { return n }, true},
			{Fault{Usage: UsageAbsent}, func(int) int { return -1 }, false},
			{Fault{Usage: UsageZero}, func(int) int { return 0 }, true},
			{Fault{PromptScale: 10}, func(n int) int { return 10 * n }, true},
		} {
			t.Run(fmt.Sprintf("%s %v", flavor, tt.fault), func(t *testing.T) {
				s, url := start(t, Config{Flavor: flavor})
				s.Inject(tt.fault, tt.fault)
				_, data := do(t, "POST", url+"/v1/chat/completions", body(user("count me")))
				stream := with(body(user("count me")), "stream", true, "stream_options", map[string]any{"include_usage": true})
				resp := openStream(t, context.Background(), url, stream)
				evs := events(t, resp.Body)
				recs := waitRecords(t, s, 2)
				for i, raw := range [][]byte{data, []byte(strings.Join(evs, "\n"))} {
					want := tt.prompt(recs[i].PromptTokens)
					hasUsage := strings.Contains(string(raw), `"usage":{`)
					if hasUsage != (want >= 0) {
						t.Errorf("reply %d carries usage = %v, want %v: %s", i+1, hasUsage, want >= 0, raw)
					}
					if want >= 0 && !strings.Contains(string(raw), fmt.Sprintf(`"prompt_tokens":%d,`, want)) {
						t.Errorf("reply %d = %s, want prompt_tokens %d (the engine counted %d)", i+1, raw, want, recs[i].PromptTokens)
					}
					if got := strings.Contains(string(raw), `"timings":`); got != (tt.timing && flavor == LlamaCpp) {
						t.Errorf("reply %d carries timings = %v, want %v", i+1, got, tt.timing && flavor == LlamaCpp)
					}
					if recs[i].PromptTokens == 0 || recs[i].Fault != tt.fault.String() {
						t.Errorf("record %d: %d prompt tokens, fault %q; want the true count and %q", i+1, recs[i].PromptTokens, recs[i].Fault, tt.fault)
					}
				}
			})
		}
	}
}
