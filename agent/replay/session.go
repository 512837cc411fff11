package replay

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/contextwin"
)

// Recording is a recorded agent session, one file of testdata/sessions:
// the fixed prefix it ran with and its rounds, in order. Its file format is
// described in testdata/sessions/README.md. (agent.Session is the live
// session a Recording was, or could have been, made from.)
type Recording struct {
	Name string
	// Source is the commit whose files the session's content was taken from.
	Source string
	// System is the system prompt without the repo map; RepoMap is the
	// whole map as recorded. A replay gives every strategy the map ours'
	// agent renders instead, of the files the session reads whole
	// (oursPrefix).
	System  string
	RepoMap string
	Tools   []engine.Tool
	// Facts are the facts planted in the session: lines "FACT key: value"
	// in user messages or tool results.
	Facts  []Fact
	Rounds []Round
}

// Fact is one planted fact and the round whose messages first carry it.
type Fact struct {
	Key, Value string
	Round      int
}

// Round is one model turn: the user's message before it (the task for the
// first round, empty for most others), the model's reply, and the results
// of the reply's tool calls.
type Round struct {
	User      string
	Assistant contextwin.Message
	Results   []contextwin.Message
	// Sub are the rounds of the subagent the reply's one call of the
	// subagent tool ran, in order, the last its report (a reply without
	// calls); nil for a round without one. The call's result (Results)
	// is that report.
	Sub []Round
}

// HasSubagents reports whether a round of s ran a subagent.
func (s *Recording) HasSubagents() bool {
	for _, r := range s.Rounds {
		if len(r.Sub) > 0 {
			return true
		}
	}
	return false
}

// Messages are the round's messages in conversation order.
func (r Round) Messages() []contextwin.Message {
	var out []contextwin.Message
	if r.User != "" {
		out = append(out, contextwin.Message{Role: contextwin.User, Content: r.User})
	}
	out = append(out, r.Assistant)
	return append(out, r.Results...)
}

// The wire form of a session file: one JSON object a line, the header
// first.

type headerLine struct {
	Type    string     `json:"type"` // "session"
	Name    string     `json:"name"`
	Source  string     `json:"source_rev"`
	System  string     `json:"system"`
	RepoMap string     `json:"repo_map"`
	Tools   []toolLine `json:"tools"`
	Facts   []factLine `json:"facts"`
}

type toolLine struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type factLine struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Round int    `json:"round"`
}

type roundLine struct {
	Type      string       `json:"type"` // "round"
	N         int          `json:"n"`
	User      string       `json:"user,omitempty"`
	Assistant replyLine    `json:"assistant"`
	Results   []resultLine `json:"results,omitempty"`
	// Sub are a subagent's rounds (Round.Sub), numbered from 1.
	Sub []roundLine `json:"sub,omitempty"`
}

type replyLine struct {
	Content string `json:"content"`
	// Reasoning is what a thinking model wrote before its content
	// (reasoning_content on the wire); empty for a model that does not think.
	Reasoning string     `json:"reasoning,omitempty"`
	ToolCalls []callLine `json:"tool_calls,omitempty"`
}

type callLine struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type resultLine struct {
	CallID  string      `json:"call_id"`
	Content string      `json:"content"`
	Payload payloadLine `json:"payload"`
}

type payloadLine struct {
	Kind  string `json:"kind"`
	Path  string `json:"path,omitempty"`
	From  int    `json:"from,omitempty"`
	To    int    `json:"to,omitempty"`
	Total int    `json:"total,omitempty"`
}

var kinds = map[string]contextwin.Kind{
	"other": contextwin.Other, "read": contextwin.Read, "diff": contextwin.Diff, "search": contextwin.Search,
	"command": contextwin.Command, "fetch": contextwin.Fetch, "report": contextwin.Report,
}

// LoadRecording reads a session file: JSONL, gzipped when its name ends in
// ".gz".
func LoadRecording(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	s, err := ReadRecording(r)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", path, err)
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".gz"), ".jsonl")
	}
	return s, nil
}

// ReadRecording decodes a session from its JSONL form.
func ReadRecording(r io.Reader) (*Recording, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	s := &Recording{}
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if line == 1 {
			var h headerLine
			if err := strictUnmarshal(text, &h); err != nil || h.Type != "session" {
				return nil, fmt.Errorf("line 1: want the session header (type \"session\"): %v", err)
			}
			s.Name, s.Source, s.System, s.RepoMap = h.Name, h.Source, h.System, h.RepoMap
			for _, t := range h.Tools {
				s.Tools = append(s.Tools, engine.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
			}
			for _, f := range h.Facts {
				s.Facts = append(s.Facts, Fact(f))
			}
			continue
		}
		var rl roundLine
		if err := strictUnmarshal(text, &rl); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if rl.Type != "round" || rl.N != len(s.Rounds)+1 {
			return nil, fmt.Errorf("line %d: want round %d, got %s %d", line, len(s.Rounds)+1, rl.Type, rl.N)
		}
		rd, err := rl.round()
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		s.Rounds = append(s.Rounds, rd)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(s.Rounds) == 0 {
		return nil, errors.New("no rounds")
	}
	if s.Rounds[0].User == "" {
		return nil, errors.New("round 1 has no user message: the task")
	}
	return s, nil
}

func (rl roundLine) round() (Round, error) {
	r := Round{User: rl.User, Assistant: contextwin.Message{Role: contextwin.Assistant, Content: rl.Assistant.Content, Reasoning: rl.Assistant.Reasoning}}
	ids := map[string]bool{}
	for _, c := range rl.Assistant.ToolCalls {
		if c.ID == "" || c.Name == "" || !json.Valid([]byte(c.Arguments)) {
			return r, fmt.Errorf("tool call %q %q: want an id, a name and JSON arguments", c.ID, c.Name)
		}
		ids[c.ID] = true
		r.Assistant.ToolCalls = append(r.Assistant.ToolCalls, contextwin.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	if len(rl.Results) != len(rl.Assistant.ToolCalls) {
		return r, fmt.Errorf("%d results for %d tool calls", len(rl.Results), len(rl.Assistant.ToolCalls))
	}
	for _, res := range rl.Results {
		k, ok := kinds[res.Payload.Kind]
		if !ok || !ids[res.CallID] {
			return r, fmt.Errorf("result for %q: unknown kind %q or call", res.CallID, res.Payload.Kind)
		}
		r.Results = append(r.Results, contextwin.Message{
			Role: contextwin.Tool, ToolCallID: res.CallID, Content: res.Content,
			Payload: contextwin.Payload{Kind: k, Path: res.Payload.Path, From: res.Payload.From, To: res.Payload.To, Total: res.Payload.Total},
		})
	}
	for i, sl := range rl.Sub {
		if sl.Type != "round" || sl.N != i+1 || len(sl.Sub) > 0 {
			return r, fmt.Errorf("subagent round %d: want round %d, and no subagent of its own", i+1, i+1)
		}
		sr, err := sl.round()
		if err != nil {
			return r, fmt.Errorf("subagent round %d: %w", i+1, err)
		}
		r.Sub = append(r.Sub, sr)
	}
	if len(r.Sub) > 0 && (len(r.Assistant.ToolCalls) != 1 || len(r.Sub[len(r.Sub)-1].Assistant.ToolCalls) > 0) {
		return r, errors.New("a round with a subagent makes exactly one call, and the subagent's last round makes none")
	}
	return r, nil
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// WriteRecording encodes s in its JSONL form, the form ReadRecording
// reads: ReadRecording(WriteRecording(s)) equals s.
func WriteRecording(w io.Writer, s *Recording) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	h := headerLine{Type: "session", Name: s.Name, Source: s.Source, System: s.System, RepoMap: s.RepoMap}
	for _, t := range s.Tools {
		h.Tools = append(h.Tools, toolLine{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	for _, f := range s.Facts {
		h.Facts = append(h.Facts, factLine(f))
	}
	if err := enc.Encode(h); err != nil {
		return err
	}
	for i, r := range s.Rounds {
		if err := enc.Encode(lineOf(i+1, r)); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// lineOf is round r, numbered n, in its wire form.
func lineOf(n int, r Round) roundLine {
	rl := roundLine{Type: "round", N: n, User: r.User, Assistant: replyLine{Content: r.Assistant.Content, Reasoning: r.Assistant.Reasoning}}
	for _, c := range r.Assistant.ToolCalls {
		rl.Assistant.ToolCalls = append(rl.Assistant.ToolCalls, callLine{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	for _, m := range r.Results {
		p := m.Payload
		rl.Results = append(rl.Results, resultLine{CallID: m.ToolCallID, Content: m.Content,
			Payload: payloadLine{Kind: p.Kind.String(), Path: p.Path, From: p.From, To: p.To, Total: p.Total}})
	}
	for i, sr := range r.Sub {
		rl.Sub = append(rl.Sub, lineOf(i+1, sr))
	}
	return rl
}
