package lsptest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// record appends an event and wakes the waiters; it returns its index.
func (e *Editor) record(method string, params json.RawMessage, line string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, Event{Seq: len(e.events), At: time.Now(), Method: method, Params: params, Line: line})
	close(e.changed)
	e.changed = make(chan struct{})
	return len(e.events) - 1
}

// Note adds a line of the test's own to the record, between what the
// server sent (a step, what the user did).
func (e *Editor) Note(format string, args ...any) {
	e.record("", nil, fmt.Sprintf(format, args...))
}

// messageTypes name the MessageType values as the record shows them.
var messageTypes = map[int]string{1: "error", 2: "warning", 3: "info", 4: "log"}

// messageType is the type field of a showMessage or logMessage.
func messageType(params json.RawMessage) int {
	var p struct {
		Type int `json:"type"`
	}
	json.Unmarshal(params, &p)
	return p.Type
}

// describe is the one-line form of a notification the user would see.
func describe(method string, params json.RawMessage) string {
	switch method {
	case "window/showMessage", "window/logMessage":
		var p struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		json.Unmarshal(params, &p)
		name := "showMessage"
		if method == "window/logMessage" {
			name = "logMessage"
		}
		return fmt.Sprintf("%s %s: %s", name, messageTypes[p.Type], p.Message)
	case "$/progress":
		var p struct {
			Value struct {
				Kind    string `json:"kind"`
				Title   string `json:"title"`
				Message string `json:"message"`
			} `json:"value"`
		}
		json.Unmarshal(params, &p)
		v := p.Value
		if v.Kind == "begin" {
			return fmt.Sprintf("progress begin %q: %s", v.Title, v.Message)
		}
		return fmt.Sprintf("progress %s: %s", v.Kind, v.Message)
	}
	return ""
}

// --- requests the editor sends ---

// Mark is the index of the next event: wait for what comes after it.
func (e *Editor) Mark() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.events)
}

// Events returns everything recorded so far.
func (e *Editor) Events() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.events...)
}

// Transcript is what the user saw, one line per event, with the test's
// notes.
func (e *Editor) Transcript() []string {
	var out []string
	for _, ev := range e.Events() {
		if ev.Line != "" {
			out = append(out, ev.Line)
		}
	}
	return out
}

// WaitFor waits (bounded) for an event at or after index from for which
// ok is true; on timeout the test fails with everything received.
func (e *Editor) WaitFor(what string, from int, ok func(Event) bool) Event {
	e.t.Helper()
	deadline := time.NewTimer(e.timeout)
	defer deadline.Stop()
	for {
		e.mu.Lock()
		for i := from; i < len(e.events); i++ {
			if ok(e.events[i]) {
				ev := e.events[i]
				e.mu.Unlock()
				return ev
			}
		}
		ch := e.changed
		e.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			e.t.Fatalf("waited %v for %s; received:\n%s", e.timeout, what, e.Dump())
			return Event{}
		}
	}
}

// WaitLine waits for an event whose line matches the regular expression.
func (e *Editor) WaitLine(from int, re string) Event {
	e.t.Helper()
	rx := regexp.MustCompile(re)
	return e.WaitFor(fmt.Sprintf("a line matching /%s/", re), from, func(ev Event) bool {
		return ev.Method != "" && rx.MatchString(ev.Line)
	})
}

// WaitProgress waits for a $/progress of kind ("begin", "report", "end").
func (e *Editor) WaitProgress(from int, kind string) Event {
	e.t.Helper()
	return e.WaitFor("$/progress "+kind, from, func(ev Event) bool {
		return ev.Method == "$/progress" && strings.HasPrefix(ev.Line, "progress "+kind)
	})
}

// runEnd matches the message that closes every run: the answer (one line
// that ends with the chip), "finished" (the answer opened as a document),
// or "stopped".
var runEnd = regexp.MustCompile(`^showMessage \w+: (Reika: .* · ctx [^ ]+ \(\d+% of [^ ]+\)$|Reika finished: |Reika stopped)`)

// WaitRunEnd waits for the message that ends a run.
func (e *Editor) WaitRunEnd(from int) Event {
	e.t.Helper()
	return e.WaitFor("the end of the run (its final showMessage)", from, func(ev Event) bool {
		return ev.Method == "window/showMessage" && runEnd.MatchString(ev.Line)
	})
}

// ProgressToken is the last work-done progress token the server created.
func (e *Editor) ProgressToken() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.tokens) == 0 {
		return ""
	}
	return e.tokens[len(e.tokens)-1]
}

// Shown are the files the server opened with showDocument, in order.
func (e *Editor) Shown() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.shown...)
}

// ServerLog is what the server wrote to its log.
func (e *Editor) ServerLog() string { return e.serverLog.String() }

// Dump describes everything received, for a failure message.
func (e *Editor) Dump() string {
	var b strings.Builder
	b.WriteString("--- from the server ---\n")
	for _, ev := range e.Events() {
		switch {
		case ev.Method == "":
			fmt.Fprintf(&b, "  # %s\n", ev.Line)
		case ev.Line != "":
			fmt.Fprintf(&b, "  %s\n", ev.Line)
		default:
			fmt.Fprintf(&b, "  %s %.300s\n", ev.Method, ev.Params)
		}
	}
	e.mu.Lock()
	for _, v := range e.violations {
		fmt.Fprintf(&b, "  PROTOCOL: %s\n", v)
	}
	e.mu.Unlock()
	b.WriteString("--- the engine ---\n")
	b.WriteString(e.Engine.Describe())
	log := e.serverLog.String()
	if ls := slices.Collect(strings.Lines(log)); len(ls) > 40 {
		log = strings.Join(ls[len(ls)-40:], "")
	}
	if log != "" {
		b.WriteString("--- the server's log ---\n" + strings.TrimSuffix(log, "\n") + "\n")
	}
	return b.String()
}

// --- requests the server sends ---
