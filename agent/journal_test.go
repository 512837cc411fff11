package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/agent/transcript"
	"github.com/reika-lsp/reika/contextwin"
)

// Write-ahead: when a call runs, the reply that made it and the results
// of the calls before it are on disk (the results of applied edits
// among them), not in a buffer a crash would lose.
func TestToolCallsWriteAhead(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(sim.Turn{ToolCalls: []sim.ScriptCall{
		{Name: "edit", Arguments: []byte(`{"path":"a.txt"}`)},
		{Name: "bash", Arguments: []byte(`{"command":"sleep 30"}`)},
	}}, sim.Turn{Content: "done"})
	var s *Session
	var onDisk [][]string
	box := &agenttest.Toolbox{Names: []string{"edit", "bash"}, Answer: func(c engine.ToolCall) tools.Result {
		recs, err := transcript.Load(s.TranscriptPath())
		if err != nil {
			t.Errorf("reading the transcript while %s runs: %v", c.Name, err)
		}
		var kinds []string
		for _, r := range recs {
			if r.Kind == transcript.KindMessage {
				kinds = append(kinds, r.Message.Role+":"+strings.Join(callNames(r.Message.ToolCalls), "+"))
			}
		}
		onDisk = append(onDisk, kinds)
		return tools.Result{Content: c.Name + " ok"}
	}}
	var err error
	s, err = newSession(sessionConfig{Engine: client, Tools: box, TranscriptDir: t.TempDir(), Context: contextwin.Config{Window: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Run(context.Background(), "edit then wait", nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"user:|assistant:edit+bash", "user:|assistant:edit+bash|tool:"}
	for i, w := range want {
		if i >= len(onDisk) || strings.Join(onDisk[i], "|") != w {
			t.Errorf("on disk when call %d ran: %q, want %q", i+1, onDisk, want)
			break
		}
	}
}

func callNames(calls []transcript.ToolCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Name)
	}
	return out
}

// crashedTranscript is a transcript whose server was killed while the
// second call of a reply ran: the edit's result is on disk, the command's
// is not.
func crashedTranscript(t *testing.T) string {
	t.Helper()
	w, err := transcript.Create(t.TempDir(), transcript.Meta{Workspace: "/ws"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []transcript.Message{
		{Role: "user", Content: "edit then wait"},
		{Role: "assistant", ToolCalls: []transcript.ToolCall{
			{ID: "c1", Name: "edit", Arguments: `{"path":"notes.txt"}`},
			{ID: "c2", Name: "bash", Arguments: `{"command":"sleep 30"}`},
			{ID: "c3", Name: "edit", Arguments: `{"path":"b.txt"}`},
		}},
		{Role: "tool", ToolCallID: "c1", Content: "applied"},
	} {
		w.Append(transcript.Record{Kind: transcript.KindMessage, Message: &m})
	}
	w.Close()
	return w.Path()
}

// A resume after a crash mid-call runs nothing again: each call without a
// result gets one that says it was interrupted (an edit: check the
// file), recorded, so that a second resume finds them answered.
func TestResumeTellsInterruptedCalls(t *testing.T) {
	path := crashedTranscript(t)
	_, client := simEngine(t, sim.Config{Ctx: 8192})
	box := &agenttest.Toolbox{Names: []string{"edit", "bash"}}
	for round := 1; round <= 2; round++ {
		s, err := newSession(sessionConfig{Engine: client, Tools: box, Resume: path, Context: contextwin.Config{Window: 8192}})
		if err != nil {
			t.Fatalf("resume %d: %v", round, err)
		}
		msgs := s.Messages()
		s.Close()
		if len(msgs) != 5 {
			t.Fatalf("resume %d: %d messages, want 5 (the two calls answered once)", round, len(msgs))
		}
		for i, want := range []string{interruptedText, interruptedText + " Read b.txt"} {
			if m := msgs[3+i]; m.Role != contextwin.Tool || !strings.HasPrefix(m.Content, want) {
				t.Errorf("resume %d: message %d = %s %q, want a result starting %q", round, 4+i, m.Role, m.Content, want)
			}
		}
		notes := len(s.resumeNotes)
		if round == 1 && (notes != 1 || !strings.Contains(s.resumeNotes[0].Text, "2 tool calls had not finished") ||
			!strings.Contains(s.resumeNotes[0].Text, "(bash, edit b.txt)")) {
			t.Errorf("resume 1: notes %v, want one naming bash and edit b.txt", s.resumeNotes)
		}
		if round == 2 && notes != 0 {
			t.Errorf("resume 2: notes %v, want none", s.resumeNotes)
		}
	}
	if calls := box.Calls(); len(calls) != 0 {
		t.Errorf("resumes ran %d calls, want none", len(calls))
	}
}

// A state folder where no transcript can be made never stops the work:
// the run answers, and the user hears once where the transcript is not
// kept; once the folder can be made the transcript is written.
func TestRunWithoutATranscriptFolder(t *testing.T) {
	srv, client := simEngine(t, sim.Config{Ctx: 8192})
	srv.AppendScript(sim.Turn{Content: "one"}, sim.Turn{Content: "two"})
	state := filepath.Join(t.TempDir(), "state")
	os.WriteFile(state, nil, 0o600)
	dir := filepath.Join(state, "sessions")
	s, err := newSession(sessionConfig{Engine: client, Tools: &agenttest.Toolbox{}, TranscriptDir: dir, Context: contextwin.Config{Window: 8192}})
	if err != nil {
		t.Fatalf("newSession with a state folder that cannot be made: %v", err)
	}
	defer s.Close()
	var warned []string
	report := func(e Event) {
		if e.Kind == Warning {
			warned = append(warned, e.Text)
		}
	}
	if res, err := s.Run(context.Background(), "first", report); err != nil || res.Answer != "one" {
		t.Fatalf("Run = %q, %v; want the answer", res.Answer, err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], dir) {
		t.Errorf("warnings = %q, want one naming %s", warned, dir)
	}
	os.Remove(state)
	warned = nil
	if _, err := s.Run(context.Background(), "second", report); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "written again") {
		t.Errorf("warnings once the folder can be made = %q, want one saying it is written again", warned)
	}
	recs, err := transcript.Load(s.TranscriptPath())
	n := 0
	for _, r := range recs {
		if r.Kind == transcript.KindMessage {
			n++
		}
	}
	if err != nil || n != 4 {
		t.Errorf("the transcript holds %d messages (%v), want all 4", n, err)
	}
}

// snapshot is an Engine that copies the transcript, as a kill -9 would
// leave it, when the first note round's request goes out (a fold under
// way), then passes every request on.
type snapshot struct {
	inner Engine
	from  func() string
	to    string
	taken bool
}

func (e *snapshot) Chat(ctx context.Context, req engine.Request, onDelta func(engine.Delta)) (*engine.Response, error) {
	if req.ToolChoice == "none" && !e.taken {
		e.taken = true
		data, err := os.ReadFile(e.from())
		if err == nil {
			err = os.WriteFile(e.to, data, 0o600)
		}
		if err != nil {
			return nil, err
		}
	}
	return e.inner.Chat(ctx, req, onDelta)
}

// A crash during a fold's note round: the transcript holds the plan that
// asked for the note and not the note. It resumes, runs, and resumes
// again.
func TestResumeAfterACrashDuringAFold(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	_, client := simEngine(t, sim.Config{Ctx: 8192, Root: root, PolicyRounds: 30})
	ts, err := tools.New(tools.Config{Folders: []string{root}, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	crash := filepath.Join(t.TempDir(), "crash.jsonl")
	var s *Session
	eng := &snapshot{inner: client, from: func() string { return s.TranscriptPath() }, to: crash}
	s, err = newSession(sessionConfig{Engine: eng, Tools: ts, TranscriptDir: t.TempDir(), Context: contextwin.Config{Window: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(context.Background(), "Survey the project, rounds=30.", nil)
	s.Close()
	if !eng.taken {
		t.Fatal("no note round in 30 rounds at 8192 tokens: no fold to crash in")
	}
	for round := 1; round <= 2; round++ {
		r, err := newSession(sessionConfig{Engine: client, Tools: ts, Resume: crash, Context: contextwin.Config{Window: 8192}})
		if err != nil {
			t.Fatalf("resume %d: %v", round, err)
		}
		if strings.Contains(r.resumed, "differs") {
			t.Errorf("resume %d: %s", round, r.resumed)
		}
		if len(r.Messages()) == 0 {
			t.Errorf("resume %d: no messages", round)
		}
		if _, err := r.Run(context.Background(), "go on, rounds=2.", nil); err != nil {
			t.Errorf("resume %d: the run after it: %v", round, err)
		}
		r.Close()
	}
	if _, skipped, err := transcript.Read(crash); err != nil || len(skipped) != 0 {
		t.Errorf("the resumed transcript: %v, skipped %v", err, skipped)
	}
}
