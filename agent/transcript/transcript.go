// Package transcript keeps a session's conversation on disk: one JSONL
// file per session, append-only, a journal (see Writer), holding
// everything ever said — whatever was later shed or folded out of the
// requests. A session resumes from it after a crash or a restart: besides
// the messages it records every call that drove the context planner (the
// fixed prefix as sent, plans, notes, usages, overflows, compactions,
// recap edits), in order, so that the resumed session replays them and
// plans like the one it continues.
//
//	w, err := transcript.Create(transcript.Dir(os.Getenv), transcript.Meta{Workspace: root})
//	w.Append(transcript.Record{Kind: transcript.KindMessage, Message: &m})
//	w.Sync()
//
// A Writer is safe for concurrent use; one Writer at a time holds a
// transcript (a lock on the file).
package transcript

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reika-lsp/reika/contextwin"
)

// Kind is what a record holds.
type Kind string

const (
	KindMeta    Kind = "meta"    // the first record: what the session is
	KindMessage Kind = "message" // a message of the conversation
	KindNote    Kind = "note"    // the model's note before a fold
	KindEvent   Kind = "event"   // a shrink event, a run's end, …
	KindUsage   Kind = "usage"   // the engine's figures for a request

	// The records below drive the context planner: with the messages,
	// notes and usages they are every call the session made on it, in
	// order, so that a resumed session plans like the one it continues.
	KindPrefix    Kind = "prefix"     // the fixed prefix, when built or rebuilt
	KindPlan      Kind = "plan"       // a plan made before a request (Plan: its event)
	KindCompact   Kind = "compact"    // a fold the user asked for (reika.compact)
	KindAbandon   Kind = "abandon"    // a note round cancelled before its answer
	KindOverflow  Kind = "overflow"   // the engine refused a request as too long
	KindRecapEdit Kind = "recap-edit" // the user's edit of the recap (Text)
	KindMapUpdate Kind = "map-update" // what a fold asked the repo map had learnt (Text)
	KindWarmup    Kind = "warmup"     // the engine's count of the warm-up (Usage)
	// KindCheckpoint is the engine's figures for the checkpoint request
	// a fold's plan asked for (Usage).
	KindCheckpoint Kind = "checkpoint"
	// KindSlot records the engine slot the session pinned (Slot), and each
	// save of its cache there; a resume reads the last one.
	KindSlot Kind = "slot"
	// KindMode records the front end's mode for the session's runs (Text:
	// its id, "normal", "ask", "plan"); a resume reads the last one.
	KindMode Kind = "mode"
	// KindModel records a switch to another model the engine serves
	// (Text: its id, "" for the configured one; Model: what the planner
	// took of it); a resume reads the last one, and it drives the planner
	// (a cache event).
	KindModel Kind = "model"
)

// Record is one line of a transcript.
type Record struct {
	Kind Kind      `json:"kind"`
	At   time.Time `json:"at"`

	Meta    *Meta    `json:"meta,omitempty"`
	Message *Message `json:"message,omitempty"`
	// Text is a note's text or an event's description.
	Text  string `json:"text,omitempty"`
	Usage *Usage `json:"usage,omitempty"`
	// Prefix is a KindPrefix record's prefix, Overflow a KindOverflow
	// record's figures.
	Prefix   *Prefix   `json:"prefix,omitempty"`
	Overflow *Overflow `json:"overflow,omitempty"`
	Slot     *Slot     `json:"slot,omitempty"`
	// Model is a KindModel record's facts of the model, absent in the
	// transcripts written before a switch re-read them.
	Model *Model `json:"model,omitempty"`
	// Plan is a KindPlan record's plan; read it with PlanEvent, which
	// also reads the transcripts written before it.
	Plan *Plan `json:"plan,omitempty"`
}

// Plan is what a KindPlan record says of the plan: its event, as its
// identifier ("append", "fold", "emergency", …).
type Plan struct {
	Event contextwin.Event `json:"event"`
}

// PlanEvent is the event of a KindPlan record: its Plan's, or in a
// transcript written before plan records held a Plan, the one its Text
// names (the event's display text then).
func (r Record) PlanEvent() (contextwin.Event, error) {
	if r.Plan != nil {
		return r.Plan.Event, nil
	}
	var e contextwin.Event
	err := e.UnmarshalText([]byte(r.Text))
	return e, err
}

// Slot is the llama.cpp slot a session pinned its requests to and, after a
// save, the file the engine wrote it to and the hash of the prompt it held
// (the last one sent).
type Slot struct {
	ID     int    `json:"id"`
	File   string `json:"file,omitempty"`
	Hash   string `json:"hash,omitempty"`
	Tokens int    `json:"tokens,omitempty"`
}

// Prefix is the fixed start of every request: the system prompt and the
// tool definitions, as sent, and its size as the planner counts it. A
// resumed session sends it as it was, whatever changed since.
type Prefix struct {
	System string          `json:"system"`
	Tools  json.RawMessage `json:"tools"`
	Chars  int             `json:"chars"`
	Map    string          `json:"map,omitempty"` // the repo map the system prompt carries
}

// Overflow is the engine's figures when it refused a request as too long.
type Overflow struct {
	PromptTokens int `json:"prompt_tokens,omitempty"`
	Window       int `json:"window,omitempty"`
}

// Model is what the planner took of a model switched to: its window in
// tokens (0: the engine gave none, and the window planned in was kept),
// its output limit, and how the engine reuses its cache for it.
type Model struct {
	Window      int `json:"window,omitempty"`
	OutputLimit int `json:"output_limit,omitempty"`
	Cache       struct {
		Class       contextwin.CacheClass `json:"class,omitempty"`
		SWA         int                   `json:"swa,omitempty"`
		Checkpoints int                   `json:"checkpoints,omitempty"`
		MinStep     int                   `json:"min_step,omitempty"`
		Ubatch      int                   `json:"ubatch,omitempty"`
		Block       int                   `json:"block,omitempty"`
	} `json:"cache"`
}

// NewModel is the record of a model's window, output limit and cache.
func NewModel(window, outputLimit int, c contextwin.CacheModel) *Model {
	m := &Model{Window: window, OutputLimit: outputLimit}
	m.Cache.Class, m.Cache.SWA, m.Cache.Checkpoints = c.Class, c.SWA, c.Checkpoints
	m.Cache.MinStep, m.Cache.Ubatch, m.Cache.Block = c.MinStep, c.Ubatch, c.Block
	return m
}

// CacheModel is the cache the record keeps.
func (m *Model) CacheModel() contextwin.CacheModel {
	c := m.Cache
	return contextwin.CacheModel{Class: c.Class, SWA: c.SWA, Checkpoints: c.Checkpoints, MinStep: c.MinStep, Ubatch: c.Ubatch, Block: c.Block}
}

// Meta describes a session.
type Meta struct {
	ID        string `json:"id"`
	Workspace string `json:"workspace,omitempty"`
	Endpoint  string `json:"endpoint,omitempty"`
	Model     string `json:"model,omitempty"`
	Window    int    `json:"window,omitempty"`
}

// Message is a message as the transcript keeps it: everything, reasoning
// included.
type Message struct {
	Role      string `json:"role"`
	Content   string `json:"content,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
	// ReasoningSent says the session's message carried the reasoning, so
	// that requests sent it back; a resume puts it back on the message.
	// Older transcripts, which never sent it, lack it.
	ReasoningSent bool               `json:"reasoning_sent,omitempty"`
	ToolCalls     []ToolCall         `json:"tool_calls,omitempty"`
	ToolCallID    string             `json:"tool_call_id,omitempty"`
	Payload       contextwin.Payload `json:"payload,omitzero"`
	Continuation  bool               `json:"continuation,omitempty"`
	// Images are the pictures the user attached, whole: a resume sends
	// them again as they were sent.
	Images []contextwin.Image `json:"images,omitempty"`
}

// ToolCall is one call of an assistant message.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage is the engine's figures for one request.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens"`
	// CachedKnown is set when the engine gave CachedTokens; older
	// transcripts do not say, and their figures are not learned from.
	CachedKnown bool    `json:"cached_known,omitempty"`
	PromptMS    float64 `json:"prompt_ms,omitempty"`
	// PrimerTokens is the warm-up's primer's length in the engine's
	// tokens; 0 for a warm-up of one short message.
	PrimerTokens int `json:"primer_tokens,omitempty"`
	// Event is the event of the plan the request was sent under; nil for
	// a request no plan made (the warm-up).
	Event        *contextwin.Event `json:"event,omitempty"`
	FinishReason string            `json:"finish_reason,omitempty"`
}

// Dir is where transcripts live: $XDG_STATE_HOME/reika/sessions, else
// ~/.local/state/reika/sessions.
func Dir(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "reika", "sessions")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(os.TempDir(), "reika", "sessions")
	}
	return filepath.Join(home, ".local", "state", "reika", "sessions")
}

// Latest returns the path of the most recent transcript in dir for the
// workspace that holds at least one message, leaving out the paths in
// skip (the session under way), or "" when there is none.
func Latest(dir, workspace string, skip ...string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	for _, name := range names {
		p := filepath.Join(dir, name)
		if slices.Contains(skip, p) {
			continue
		}
		if ws, messages := peek(p); ws == workspace && messages {
			return p
		}
	}
	return ""
}

// Summary is a transcript as a list of sessions shows it.
type Summary struct {
	Path, ID  string
	Workspace string
	// Title is the first line of the session's first message of the
	// user's, clipped.
	Title string
	// Updated is when the transcript was last written.
	Updated time.Time
}

// maxTitle bounds a Summary's title, in bytes.
const maxTitle = 80

// List summarizes the transcripts in dir that hold a message, of
// workspace ("": every workspace), newest first.
func List(dir, workspace string) []Summary {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Summary
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		ws, title, ok := peekTitle(p)
		info, err := e.Info()
		if !ok || err != nil || workspace != "" && ws != workspace {
			continue
		}
		out = append(out, Summary{Path: p, ID: strings.TrimSuffix(e.Name(), ".jsonl"), Workspace: ws, Title: title, Updated: info.ModTime()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out
}

// peekTitle reads a transcript's workspace and the first line of its
// first message, the user's; ok is false when it holds no message.
func peekTitle(path string) (workspace, title string, ok bool) {
	workspace, first := head(path)
	if first == nil {
		return workspace, "", false
	}
	if first.Role == "user" {
		title, _, _ = strings.Cut(strings.TrimSpace(first.Content), "\n")
		if len(title) > maxTitle {
			title = strings.ToValidUTF8(title[:maxTitle], "") + "…"
		}
	}
	return workspace, title, true
}

// Workspace is the workspace a transcript was written in, "" when its
// first lines do not say.
func Workspace(path string) string {
	ws, _ := peek(path)
	return ws
}

// peek reads a transcript's workspace and whether it holds a message,
// from its first lines.
func peek(path string) (workspace string, messages bool) {
	workspace, first := head(path)
	return workspace, first != nil
}

// head reads a transcript's first lines: its workspace and its first
// message, nil when they hold none.
func head(path string) (workspace string, first *Message) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for i := 0; i < 64; i++ {
		line, err := r.ReadBytes('\n')
		var rec Record
		if json.Unmarshal(line, &rec) == nil {
			switch {
			case rec.Meta != nil:
				workspace = rec.Meta.Workspace
			case rec.Kind == KindMessage && rec.Message != nil:
				return workspace, rec.Message
			}
		}
		if err != nil {
			break
		}
	}
	return workspace, nil
}
