package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/agent/transcript"
	"github.com/reika-lsp/reika/contextwin"
)

// simEngine serves a simulated engine on loopback and returns it with a
// client for it.
func simEngine(t *testing.T, cfg sim.Config) (*sim.Server, *engine.Client) {
	t.Helper()
	s, opts := simServer(t, cfg)
	return s, engine.NewClient(opts)
}

// simServer starts a simulator for the test, and returns the options
// that reach it.
func simServer(t *testing.T, cfg sim.Config) (*sim.Server, engine.Options) {
	t.Helper()
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { s.Close(); ts.Close() })
	return s, engine.Options{BaseURL: ts.URL + "/v1", Flavor: engine.LlamaCpp}
}

// recorded waits until the simulator has recorded n requests and returns
// them: it records a request when its handler returns, which may be after
// the client read the last byte and moved on.
func recorded(t *testing.T, srv *sim.Server, n int) []sim.RequestRecord {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(srv.Requests()) < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	// A request is recorded when its reply has gone out, and the reply's
	// last bytes can reach the client, which sends the next request,
	// before the record is made: the records in the order they came.
	recs := srv.Requests()
	slices.SortStableFunc(recs, func(a, b sim.RequestRecord) int { return a.Seq - b.Seq })
	return recs
}

// collect gathers a run's events.
type collect struct {
	mu     sync.Mutex
	events []Event
}

func (c *collect) add(e Event) {
	c.mu.Lock()
	c.events = append(c.events, e)
	c.mu.Unlock()
}

func (c *collect) kinds() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, e := range c.events {
		if e.Kind == Streamed || e.Kind == Reasoned {
			continue // as many as the engine's pieces (TestRunStreamsTextAndStartsTools)
		}
		out = append(out, e.Kind.String())
	}
	return out
}

func (c *collect) texts(k EventKind) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, e := range c.events {
		if e.Kind == k {
			out = append(out, e.Text)
		}
	}
	return out
}

func readTurn(path string) sim.Turn {
	return sim.Turn{Content: "Let me look.", ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: []byte(`{"path":"` + path + `"}`)}}}
}

func TestRunToAnAnswer(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(readTurn("a.go"), sim.Turn{Content: "Done: a.go is fine."})
	box := &agenttest.Toolbox{Names: []string{"read"}, Answer: func(c engine.ToolCall) tools.Result {
		return tools.Result{Content: "     1\tpackage a\n", Payload: contextwin.Payload{Kind: contextwin.Read, Path: "a.go", From: 1, To: 1, Total: 1}}
	}}
	dir := t.TempDir()
	s, err := newSession(sessionConfig{Engine: client, Tools: box, TranscriptDir: dir, Debug: true, Context: contextwin.Config{Window: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var c collect
	res, err := s.Run(context.Background(), "Check a.go", c.add)
	if err != nil || res.End != Answered || res.Answer != "Done: a.go is fine." || res.Rounds != 2 {
		t.Fatalf("Run = %+v, %v; want the answer after 2 rounds", res, err)
	}
	if calls := box.Calls(); len(calls) != 1 || calls[0].Name != "read" {
		t.Errorf("tool calls = %+v, want one read", calls)
	}
	want := "round debug chip tool started tool round debug chip finished"
	if got := strings.Join(c.kinds(), " "); got != want {
		t.Errorf("events = %s, want %s", got, want)
	}
	dbg := c.texts(Debug)
	if len(dbg) != 2 || !strings.HasPrefix(dbg[0], "prefix cache: first request") || !strings.HasPrefix(dbg[1], "prefix cache: append (+") {
		t.Errorf("debug lines = %q, want first request then append", dbg)
	}
	recs, err := transcript.Load(s.TranscriptPath())
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, r := range recs {
		if r.Kind == transcript.KindMessage {
			roles = append(roles, r.Message.Role)
		}
	}
	if got := strings.Join(roles, " "); got != "user assistant tool assistant" {
		t.Errorf("transcript roles = %s, want user assistant tool assistant", got)
	}
	// The second request began with the first one's bytes: the engine
	// reused them.
	// (The simulator records a request when its handler returns, which
	// may be after the client has moved on: wait for both.)
	reqs := recorded(t, srv, 2)
	if len(reqs) != 2 {
		t.Fatalf("%d requests recorded, want 2", len(reqs))
	}
	if reqs[1].CacheN < reqs[0].PromptTokens {
		t.Errorf("second request reused %d tokens of a %d-token first prompt; want all", reqs[1].CacheN, reqs[0].PromptTokens)
	}
}

func TestResume(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(readTurn("a.go"), sim.Turn{Content: "first answer"}, sim.Turn{Content: "second answer"})
	box := &agenttest.Toolbox{Names: []string{"read"}}
	dir := t.TempDir()
	s, _ := newSession(sessionConfig{Engine: client, Tools: box, TranscriptDir: dir, Context: contextwin.Config{Window: 8192}})
	if _, err := s.Run(context.Background(), "one", nil); err != nil {
		t.Fatal(err)
	}
	before := s.Messages()
	path := s.TranscriptPath()
	s.Close() // the process goes away

	s2, err := newSession(sessionConfig{Engine: client, Tools: box, Resume: path, Context: contextwin.Config{Window: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := s2.Messages(); len(got) != len(before) {
		t.Fatalf("resumed with %d messages, want %d", len(got), len(before))
	}
	res, err := s2.Run(context.Background(), "two", nil)
	if err != nil || res.Answer != "second answer" {
		t.Fatalf("Run after resume = %+v, %v", res, err)
	}
	reqs := recorded(t, srv, 3)
	last := reqs[len(reqs)-1]
	if !strings.Contains(string(last.Body), `"one"`) || !strings.Contains(string(last.Body), "first answer") {
		t.Errorf("the resumed session's request lost the earlier conversation")
	}
}

// An engine that refuses the request as too long gets one emergency fold
// and one retry.
func TestOverflowFoldsAndRetries(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 4096})
	box := scriptReads(srv, 12, 60)
	// The session believes the window is far larger than the engine's.
	s, _ := newSession(sessionConfig{Engine: client, Tools: box, Context: contextwin.Config{Window: 64000}})
	var c collect
	res, err := s.Run(context.Background(), "read them all", c.add)
	if err != nil || res.End != Answered {
		t.Fatalf("Run = %+v, %v; want an answer after the emergency fold", res, err)
	}
	st := s.Stats()
	if st.Overflows == 0 {
		t.Fatalf("no overflow happened: the test did not test anything")
	}
	if s.Budget().Window != 4096 {
		t.Errorf("window after the overflow = %d, want the engine's 4096", s.Budget().Window)
	}
	if !strings.Contains(strings.Join(c.texts(Warning), "\n"), "refused the request as too long") {
		t.Errorf("warnings = %q, want the overflow reported", c.texts(Warning))
	}
	// One warning, marked for the user, says what the emergency did.
	var told []string
	c.mu.Lock()
	for _, e := range c.events {
		if e.Kind == Warning && e.Emergency {
			told = append(told, e.Text)
		}
	}
	c.mu.Unlock()
	if len(told) != st.Overflows || !strings.Contains(told[0], "(") || !strings.Contains(told[0], "retrying once") {
		t.Errorf("emergency warnings = %q, want one per overflow with the engine's figures", told)
	}
}

func TestCancelStopsTheStream(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(sim.Turn{Content: strings.Repeat("word ", 2000), Fault: &sim.Fault{ChunkLatency: 20 * time.Millisecond}})
	s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Context: contextwin.Config{Window: 8192}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() {
		res, _ := s.Run(ctx, "talk", nil)
		done <- res
	}()
	for !s.Running() {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // well into the slow stream
	cancelled := time.Now()
	cancel()
	select {
	case res := <-done:
		if res.End != Canceled {
			t.Errorf("Run after cancel = %s, want canceled", res.End)
		}
		t.Logf("Run returned %v after the cancel", time.Since(cancelled))
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	// The engine saw the client go away.
	deadline := time.Now().Add(5 * time.Second)
	for {
		reqs := srv.Requests()
		if len(reqs) == 1 && reqs[0].Cancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the engine's request was not cancelled: %+v", reqs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBusy(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(sim.Turn{Content: "slow", Fault: &sim.Fault{Latency: 300 * time.Millisecond}})
	s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Context: contextwin.Config{Window: 8192}})
	first := make(chan struct{})
	go func() {
		defer close(first)
		s.Run(context.Background(), "first", nil)
	}()
	for !s.Running() {
		time.Sleep(time.Millisecond)
	}
	if _, err := s.Run(context.Background(), "second", nil); !errors.Is(err, ErrBusy) {
		t.Errorf("a second Run = %v, want ErrBusy", err)
	}
	<-first
}

func TestEngineFailureEndsTheRun(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192, Faults: []sim.FaultRule{{Fault: sim.Fault{Status: 500}}}})
	_ = srv
	s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Context: contextwin.Config{Window: 8192}})
	s.retryWait = [retries]time.Duration{time.Millisecond, time.Millisecond}
	var c collect
	res, err := s.Run(context.Background(), "x", c.add)
	if res.End != EngineFailed || !errors.Is(err, engine.Server) {
		t.Errorf("Run against a failing engine = %s, %v; want engine error", res.End, err)
	}
	if n := len(c.texts(Warning)); n != retries {
		t.Errorf("%d retry warnings, want %d", n, retries)
	}
	if got := s.Stats().Requests; got != 1+retries {
		t.Errorf("requests = %d, want %d", got, 1+retries)
	}
}

// A malformed tool call becomes a result that tells the model; the run
// goes on.
func TestMalformedToolCall(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	bad := readTurn("a.go")
	bad.Fault = &sim.Fault{MalformedToolCalls: true}
	srv.AppendScript(bad, sim.Turn{Content: "done"})
	box := &agenttest.Toolbox{Names: []string{"read"}}
	s, _ := newSession(sessionConfig{Engine: client, Tools: box, Context: contextwin.Config{Window: 8192}})
	res, err := s.Run(context.Background(), "x", nil)
	if err != nil || res.End != Answered {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if len(box.Calls()) != 0 {
		t.Errorf("the malformed call reached the tool")
	}
	msgs := s.Messages()
	if r := msgs[2]; r.Role != contextwin.Tool || !strings.Contains(r.Content, "not valid JSON") {
		t.Errorf("the result of a malformed call = %q, want it to say the arguments are not JSON", r.Content)
	}
}

func TestContinuation(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(sim.Turn{Content: "part one", FinishReason: "length"}, sim.Turn{Content: "part two"})
	s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Context: contextwin.Config{Window: 8192}})
	res, err := s.Run(context.Background(), "write a lot", nil)
	if err != nil || res.Answer != "part two" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	msgs := s.Messages()
	if len(msgs) != 4 || !msgs[1].Continuation || msgs[2].Content != continuePrompt {
		t.Errorf("messages = %+v, want the cut reply and the prompt to go on, marked as continuations", msgs)
	}
}

func TestWarmup(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(sim.Turn{Content: "warm"}, sim.Turn{Content: "answer"})
	s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read", "grep"}}, Context: contextwin.Config{Window: 8192}})
	reqs := warmThenAsk(t, s, srv)
	// The first real request found the fixed prefix in the cache.
	if reqs[1].CacheN < reqs[0].PromptTokens-8 { // all but the warm-up's own user turn
		t.Errorf("the first ask reused %d tokens of the %d-token warm-up", reqs[1].CacheN, reqs[0].PromptTokens)
	}
}

// scriptReads scripts n reads of f0.go, f1.go, … and then the answer
// "done", and returns the toolbox that answers each read with lines
// lines of code.
func scriptReads(srv *sim.Server, n, lines int) *agenttest.Toolbox {
	var turns []sim.Turn
	for i := 0; i < n; i++ {
		turns = append(turns, readTurn(fmt.Sprintf("f%d.go", i)))
	}
	srv.AppendScript(append(turns, sim.Turn{Content: "done"})...)
	body := strings.Repeat("\tvalue = compute(value, 1)\n", lines)
	return &agenttest.Toolbox{Names: []string{"read"}, Answer: func(c engine.ToolCall) tools.Result {
		return tools.Result{Content: body, Payload: contextwin.Payload{Kind: contextwin.Read, Path: "f.go"}}
	}}
}

// warmThenAsk sends the session's warm-up, then runs "a task", and
// returns the two requests the engine saw: the warm-up, with max_tokens
// 1, and the run's. The warm-up never enters the conversation.
func warmThenAsk(t *testing.T, s *Session, srv *sim.Server) []sim.RequestRecord {
	t.Helper()
	if err := s.Warmup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "a task", nil); err != nil {
		t.Fatal(err)
	}
	reqs := recorded(t, srv, 2)
	if len(reqs) != 2 || reqs[0].MaxTokens != 1 {
		t.Fatalf("requests = %d, first max_tokens %d; want the warm-up with max_tokens 1", len(reqs), reqs[0].MaxTokens)
	}
	if s.Messages()[0].Content != "a task" {
		t.Errorf("the warm-up entered the conversation")
	}
	return reqs
}

func TestDivergence(t *testing.T) {
	for _, tc := range []struct {
		prev, cur string
		starts    []int
		want      string
	}{
		{"", "abc", []int{0}, "first request"},
		{"abc", "abcdef", []int{0, 3}, "append (+3 bytes)"},
		{"[t]{m0}{m1}", "[t]{m0}{mX}", []int{3, 7}, "diverged at message 1 byte 2"},
		{"[t]{m0}", "[u]{m0}", []int{3}, "diverged in the tool definitions at byte 1"},
	} {
		var prev []byte
		if tc.prev != "" {
			prev = []byte(tc.prev)
		}
		if got := divergence(prev, []byte(tc.cur), tc.starts); got != tc.want {
			t.Errorf("divergence(%q, %q) = %q, want %q", tc.prev, tc.cur, got, tc.want)
		}
	}
}

func TestCompact(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 32768})
	box := scriptReads(srv, 30, 70)
	s, _ := newSession(sessionConfig{Engine: client, Tools: box, Context: contextwin.Config{Window: 32768}})
	if _, _, err := s.Compact(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "nothing to fold") {
		t.Errorf("Compact on an empty session = %v, want nothing to fold", err)
	}
	if _, err := s.Run(context.Background(), "read", nil); err != nil {
		t.Fatal(err)
	}
	var c collect
	before, after, err := s.Compact(context.Background(), c.add)
	if err != nil || after >= before {
		t.Fatalf("Compact = %d → %d, %v; want a smaller request", before, after, err)
	}
	if got := strings.Join(c.kinds(), " "); !strings.Contains(got, "note") || !strings.Contains(got, "fold") {
		t.Errorf("Compact's events = %s, want a note and a fold", got)
	}
	if s.Recap() == nil || !s.EditRecap("my recap") {
		t.Fatalf("no recap to edit after Compact")
	}
	noWindow, _ := newSession(sessionConfig{Engine: client, Tools: box})
	if _, _, err := noWindow.Compact(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "no known window") {
		t.Errorf("Compact with no window = %v, want no known window", err)
	}
}

// The user is told in one line what an emergency shrink did, in words
// that match it: shed only, folded only, both, or neither.
func TestEmergencyText(t *testing.T) {
	shed := []contextwin.Removed{{What: "read a.go"}, {What: "read b.go"}, {What: "grep x"}, {What: "read c.go"}}
	for _, tc := range []struct {
		name          string
		tokens, win   int
		plan          contextwin.Plan
		want, notWant string
	}{
		{"shed only", 13392, 8192, contextwin.Plan{Shed: shed},
			"the engine refused the request as too long (13392 tokens, window 8192): shed 4 results, retrying once", "fold"},
		{"fold only", 13392, 8192, contextwin.Plan{Folded: 30},
			"the engine refused the request as too long (13392 tokens, window 8192): folded 30 messages, retrying once", "shed"},
		{"both", 13392, 8192, contextwin.Plan{Shed: shed, Folded: 30},
			"the engine refused the request as too long (13392 tokens, window 8192): shed 4 results and folded 30 messages, retrying once", ""},
		{"neither, no figures", 0, 0, contextwin.Plan{},
			"the engine refused the request as too long: cut the newest results, retrying once", "fold"},
		{"one of each", 0, 4096, contextwin.Plan{Shed: shed[:1], Folded: 1},
			"the engine refused the request as too long (window 4096): shed 1 result and folded 1 message, retrying once", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := emergencyText(tc.tokens, tc.win, tc.plan)
			if got != tc.want {
				t.Errorf("emergencyText = %q, want %q", got, tc.want)
			}
			if tc.notWant != "" && strings.Contains(got, tc.notWant) {
				t.Errorf("emergencyText = %q says %q", got, tc.notWant)
			}
		})
	}
}

// A transcript that records only its messages (written before the
// planner's records) still resumes, best effort, and says so; one that
// records them resumes the planner, and its next request is an append of
// the last one.
func TestResumeOldAndNewTranscripts(t *testing.T) {
	dir := t.TempDir()
	w, err := transcript.Create(dir, transcript.Meta{Workspace: "/ws"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []transcript.Message{{Role: "user", Content: "old question"}, {Role: "assistant", Content: "old answer"}} {
		w.Append(transcript.Record{Kind: transcript.KindMessage, Message: &m})
	}
	w.Close()
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(sim.Turn{Content: "answer one"}, sim.Turn{Content: "answer two"})
	box := &agenttest.Toolbox{Names: []string{"read"}}
	s, err := newSession(sessionConfig{Engine: client, Tools: box, Resume: w.Path(), Context: contextwin.Config{Window: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.resumed, "best effort") || len(s.Messages()) != 2 {
		t.Errorf("an old transcript resumed %d messages saying %q, want 2, best effort", len(s.Messages()), s.resumed)
	}
	if _, err := s.Run(context.Background(), "new question", nil); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// Written by this session, the transcript now records the planner.
	s2, err := newSession(sessionConfig{Engine: client, Tools: box, Resume: w.Path(), Context: contextwin.Config{Window: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if !strings.Contains(s2.resumed, "replaying how they were sent") || strings.Contains(s2.resumed, "differs") {
		t.Errorf("the second resume says %q", s2.resumed)
	}
	if _, err := s2.Run(context.Background(), "another question", nil); err != nil {
		t.Fatal(err)
	}
	reqs := recorded(t, srv, 2)
	var prev, cur struct {
		Messages []json.RawMessage `json:"messages"`
	}
	json.Unmarshal(reqs[len(reqs)-2].Body, &prev)
	json.Unmarshal(reqs[len(reqs)-1].Body, &cur)
	if len(cur.Messages) != len(prev.Messages)+2 {
		t.Fatalf("the request after the resume has %d messages, want %d", len(cur.Messages), len(prev.Messages)+2)
	}
	for i, m := range prev.Messages {
		if !bytes.Equal(m, cur.Messages[i]) {
			t.Errorf("message %d changed across the resume: %s, then %s", i, m, cur.Messages[i])
		}
	}
}

// A silent engine is told to the user within seconds, before the answer
// begins and whatever the timeouts; the first-byte wait scales with the
// prompt and the measured prefill speed.
func TestSilenceIsReported(t *testing.T) {
	quietAfter, quietEvery, quietTick = 150*time.Millisecond, 150*time.Millisecond, 10*time.Millisecond
	t.Cleanup(func() { quietAfter, quietEvery, quietTick = 20*time.Second, 10*time.Second, time.Second })
	_, client := simEngine(t, sim.Config{Ctx: 8192, Script: []sim.Turn{{Content: "late", Fault: &sim.Fault{Latency: 600 * time.Millisecond}}}})
	s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Context: contextwin.Config{Window: 8192}})
	if d := s.firstByte(10000); d != 0 {
		t.Errorf("firstByte before any measure = %v, want 0 (the idle timeout)", d)
	}
	var c collect
	if res, err := s.Run(context.Background(), "x", c.add); err != nil || res.End != Answered {
		t.Fatalf("Run = %s, %v", res.End, err)
	}
	waits := c.texts(Waiting)
	if len(waits) < 2 || !strings.Contains(waits[0], "waiting for the engine: no data for 0 s (it is reading a prompt of about") {
		t.Errorf("waiting events = %q, want at least two, the first about the prompt being read", waits)
	}

	s.mu.Lock()
	s.stats.Prefilled, s.stats.PromptMS = 4000, 8000 // 2 ms a token
	s.mu.Unlock()
	if d := s.firstByte(10000); d != 90*time.Second { // 10000 × 2 ms × 3, plus 30 s
		t.Errorf("firstByte(10000) at 2 ms a token = %v, want 90s", d)
	}
	if d := s.firstByte(10); d != minFirstByte {
		t.Errorf("firstByte(10) = %v, want the floor %v", d, minFirstByte)
	}
	if d := s.firstByte(10_000_000); d != maxFirstByte {
		t.Errorf("firstByte(10M) = %v, want the cap %v", d, maxFirstByte)
	}
}

// The user's instruction is on disk before the first request leaves: a
// crash while the engine stalls loses nothing the user said.
func TestInstructionOnDiskBeforeTheRequest(t *testing.T) {
	srv, err := sim.New(sim.Config{Ctx: 8192, Script: []sim.Turn{{Content: "late", Fault: &sim.Fault{Latency: 5 * time.Second}}}})
	if err != nil {
		t.Fatal(err)
	}
	arrived := make(chan struct{}, 8)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			arrived <- struct{}{}
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); ts.Close() })
	client := engine.NewClient(engine.Options{BaseURL: ts.URL + "/v1", Flavor: engine.LlamaCpp})
	s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, TranscriptDir: t.TempDir(), Context: contextwin.Config{Window: 8192}})
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, "an instruction worth keeping", nil); close(done) }()
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the request never reached the engine")
	}
	data, err := os.ReadFile(s.TranscriptPath())
	cancel()
	<-done
	if err != nil || !strings.Contains(string(data), "an instruction worth keeping") {
		t.Errorf("while the request waits, the transcript holds %q (%v); want the instruction", data, err)
	}
}

// A silent engine is retried once, not twice: the wait was long already.
func TestSilentEngineRetriedOnce(t *testing.T) {
	srv, err := sim.New(sim.Config{Ctx: 8192, Faults: []sim.FaultRule{{Fault: sim.Fault{Latency: time.Minute}}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	client := engine.NewClient(engine.Options{BaseURL: ts.URL + "/v1", Flavor: engine.LlamaCpp,
		Timeouts: engine.Timeouts{Idle: 100 * time.Millisecond}})
	s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}}, Context: contextwin.Config{Window: 8192}})
	s.retryWait = [retries]time.Duration{time.Millisecond, time.Millisecond}
	_, err = s.Run(context.Background(), "x", nil)
	if !errors.Is(err, engine.Timeout) {
		t.Fatalf("Run against a silent engine = %v, want a timeout", err)
	}
	if got := s.Stats().Requests; got != 2 {
		t.Errorf("requests = %d, want 2 (one retry)", got)
	}
}

// An emergency fold's retry on an engine that restarts from checkpoints is
// sent after the checkpoint requests its plan asks for, as any fold's
// request is: without them the next fold restarts far before its change.
func TestOverflowRetrySendsItsCheckpoints(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 4096, Cache: sim.CacheModel{Kind: sim.CacheRecurrent}})
	box := scriptReads(srv, 12, 60)
	s, _ := newSession(sessionConfig{Engine: client, Tools: box, Context: contextwin.Config{
		Window: 64000, Cache: contextwin.CacheModel{Class: contextwin.CacheCheckpointed}}})
	res, err := s.Run(context.Background(), "read them all", nil)
	if err != nil || res.End != Answered || s.Stats().Overflows == 0 {
		t.Fatalf("Run = %+v, %v, %d overflows; want an answer after an emergency fold", res, err, s.Stats().Overflows)
	}
	recs := recorded(t, srv, s.Stats().Requests)
	refused := slices.IndexFunc(recs, func(r sim.RequestRecord) bool { return r.Status >= 400 })
	if refused < 0 || refused+1 >= len(recs) {
		t.Fatalf("no refused request followed by another among %d", len(recs))
	}
	var after []string
	for _, r := range recs[refused+1:] {
		after = append(after, fmt.Sprintf("%s/%d", r.ToolChoice, r.MaxTokens))
	}
	if next := recs[refused+1]; next.ToolChoice != "none" || next.MaxTokens != 1 {
		t.Errorf("after the refusal came %v, want the emergency fold's checkpoint requests (none/1) before its retry", after)
	}
}

// On an engine that restarts from checkpoints the warm-up is the primer,
// sized by the engine's own counts: the slot's first checkpoint then
// stands just before the first message's text, where the first request
// changes from it (with the one short message it stands a micro-batch
// before the warm-up's end, deep in the fixed prefix).
func TestWarmupPrimesTheCheckpoints(t *testing.T) {
	for _, counted := range []bool{true, false} {
		t.Run(fmt.Sprintf("counted=%v", counted), func(t *testing.T) {
			srv, opts := simServer(t, sim.Config{Ctx: 8192, Cache: sim.CacheModel{Kind: sim.CacheRecurrent}})
			client := engine.NewClient(opts)
			srv.AppendScript(sim.Turn{Content: "warm"}, sim.Turn{Content: "answer"})
			s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read", "grep"}},
				Context: contextwin.Config{Window: 8192, Cache: contextwin.CacheModel{Class: contextwin.CacheCheckpointed}}})
			if counted {
				s.countPrimer(context.Background(), opts)
			}
			reqs := warmThenAsk(t, s, srv)
			first := reqs[1]
			lost := first.Common - first.CacheN
			t.Logf("warm-up of %d tokens; the first request changes at %d, restarts at %d", reqs[0].PromptTokens, first.Common, first.CacheN)
			if counted && (first.CacheN == 0 || lost > sim.DefaultUbatch/8) {
				t.Errorf("the first request restarted at %d for a change at %d: want the primer's checkpoint just before it", first.CacheN, first.Common)
			}
			if !counted && lost < sim.DefaultUbatch/2 {
				t.Errorf("without the engine's counts the warm-up was not its one short message: restart at %d for a change at %d", first.CacheN, first.Common)
			}
			s.mu.Lock()
			notes := s.takeFigureNotes()
			s.mu.Unlock()
			if len(notes) > 0 {
				t.Errorf("the warm-up's count was not taken: %q", notes)
			}
		})
	}
}

// A checkpoint request ending in an assistant message that the engine
// refuses (llama.cpp does for a template that thinks) turns such requests
// off for the session; one it answers, or another refusal, does not.
func TestRefusedPrefillTurnsThemOff(t *testing.T) {
	for _, tc := range []struct {
		name      string
		noPrefill bool
		last      contextwin.Role
		want      bool // prefills still asked for
	}{
		{"refused", true, contextwin.Assistant, false},
		{"answered", false, contextwin.Assistant, true},
		{"refused, not a prefill", true, contextwin.User, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, client := simEngine(t, sim.Config{Ctx: 8192, NoPrefill: tc.noPrefill, Cache: sim.CacheModel{Kind: sim.CacheRecurrent}})
			s, _ := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{Names: []string{"read"}},
				Context: contextwin.Config{Window: 8192, Cache: contextwin.CacheModel{Class: contextwin.CacheCheckpointed}}})
			if tc.name == "refused, not a prefill" {
				srv.Inject(sim.Fault{Status: 400})
			}
			msgs := []contextwin.Message{{Role: contextwin.User, Content: "the recap's steady part"}, {Role: tc.last, Content: "the rest"}}
			r := &run{s: s}
			r.checkpoint(context.Background(), msgs, false)
			s.mu.Lock()
			got := s.cw.Prefills()
			s.mu.Unlock()
			if got != tc.want {
				t.Errorf("after the request the planner asks for prefills: %v, want %v", got, tc.want)
			}
		})
	}
}

// On an engine that restarts from checkpoints, a fold that starts a
// middle recap where the slot keeps no checkpoint starts the slot over:
// its first checkpoint request goes without the prompt cache
// (cache_prompt false), so the engine prefills it from token 0 and its
// first checkpoint stands just before the recap; the folds after it
// restart there, a few tokens before their change.
func TestResetStartsTheSlotOver(t *testing.T) {
	srv, opts := simServer(t, sim.Config{Ctx: 16384, Cache: sim.CacheModel{Kind: sim.CacheRecurrent}})
	client := engine.NewClient(opts)
	box := scriptReads(srv, 150, 12)
	s, _ := newSession(sessionConfig{Engine: client, Tools: box, Context: contextwin.Config{
		Window: 16384, Cache: contextwin.CacheModel{Class: contextwin.CacheCheckpointed}}})
	s.countPrimer(context.Background(), opts)
	if res, err := s.Run(context.Background(), "read them all", nil); err != nil || res.End != Answered {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	recs := recorded(t, srv, s.Stats().Requests)
	fresh := -1
	for i, r := range recs {
		if strings.Contains(string(r.Body), `"cache_prompt":false`) {
			if fresh >= 0 {
				t.Errorf("requests %d and %d both start the slot over", fresh, i)
			}
			fresh = i
		}
	}
	if fresh < 0 || fresh+1 >= len(recs) {
		t.Fatalf("no request of %d started the slot over", len(recs))
	}
	if r := recs[fresh]; r.CacheN != 0 || r.MaxTokens != 1 {
		t.Errorf("the fresh request reused %d tokens with max_tokens %d; want 0, a checkpoint request", r.CacheN, r.MaxTokens)
	}
	folds := 0
	for _, r := range recs[fresh+1:] {
		if r.Restart == sim.RestartAtChange || r.MaxTokens == 1 {
			continue
		}
		folds++
		if lost := r.Common - r.CacheN; lost > sim.DefaultUbatch/8 {
			t.Errorf("a request after the reset restarted at %d for a change at %d", r.CacheN, r.Common)
		}
	}
	t.Logf("reset at request %d of %d; %d requests after it restarted at a checkpoint before their change", fresh, len(recs), folds)
}

// REIKA_DEBUG prints a line for every request the engine processes: on a
// checkpointed engine the warm-up (the primer), the notes and the
// checkpoint requests as well as the rounds' own, each named, so that the
// lines account for every token the engine prefilled.
func TestDebugLineForEveryRequest(t *testing.T) {
	srv, opts := simServer(t, sim.Config{Ctx: 16384, Cache: sim.CacheModel{Kind: sim.CacheRecurrent}})
	client := engine.NewClient(opts)
	box := scriptReads(srv, 150, 12)
	s, _ := newSession(sessionConfig{Engine: client, Tools: box, Debug: true, Context: contextwin.Config{
		Window: 16384, Cache: contextwin.CacheModel{Class: contextwin.CacheCheckpointed}}})
	s.countPrimer(context.Background(), opts)
	if err := s.Warmup(context.Background()); err != nil {
		t.Fatal(err)
	}
	var c collect
	if res, err := s.Run(context.Background(), "read them all", c.add); err != nil || res.End != Answered {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	recs := recorded(t, srv, s.Stats().Requests)
	lines := c.texts(Debug)
	if len(lines) != len(recs) {
		t.Fatalf("%d debug lines for %d requests the engine processed:\n%s", len(lines), len(recs), strings.Join(lines, "\n"))
	}
	prefilled := 0
	kinds := map[string]int{}
	for i, l := range lines {
		var what string
		if h, _, ok := strings.Cut(l, ":"); ok {
			what = strings.TrimPrefix(h, "prefix cache")
		}
		kinds[what]++
		var n, reused int
		var secs float64
		if _, err := fmt.Sscanf(l[strings.Index(l, "engine reprocessed"):], "engine reprocessed %d tokens, reused %d, %f s", &n, &reused, &secs); err != nil {
			t.Fatalf("line %d %q: %v", i, l, err)
		}
		if n != recs[i].PromptTokens-recs[i].CacheN {
			t.Errorf("line %d says %d reprocessed; the engine prefilled %d", i, n, recs[i].PromptTokens-recs[i].CacheN)
		}
		prefilled += n
	}
	if kinds[" (warm-up)"] != 1 || kinds[" (note)"] == 0 || kinds[" (checkpoint)"]+kinds[" (checkpoint, without the prompt cache)"] == 0 || kinds[""] == 0 {
		t.Errorf("lines by kind = %v; want the warm-up, notes, checkpoint requests and rounds", kinds)
	}
	if st := s.Stats(); prefilled != st.Prefilled {
		t.Errorf("the lines add up to %d prefilled tokens; the session counted %d", prefilled, st.Prefilled)
	}
}
