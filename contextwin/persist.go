package contextwin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// What goes to disk (the agent's transcripts, the replay's session files)
// names a Kind and an Event by a stable lowercase identifier, never by the
// constant's position or by its display text: the constants may be
// reordered and renamed, the identifiers may not.

// kindIDs are the identifiers of the kinds on disk; they are also what
// Kind.String says.
var kindIDs = map[Kind]string{
	Other: "other", Read: "read", Diff: "diff", Search: "search",
	Command: "command", Fetch: "fetch", Report: "report",
}

// MarshalText gives the kind's identifier ("read", "search", …).
func (k Kind) MarshalText() ([]byte, error) {
	id, ok := kindIDs[k]
	if !ok {
		return nil, fmt.Errorf("contextwin: no identifier for kind %d", int(k))
	}
	return []byte(id), nil
}

// UnmarshalText reads a kind's identifier; any other text is an error.
func (k *Kind) UnmarshalText(text []byte) error {
	for kind, id := range kindIDs {
		if id == string(text) {
			*k = kind
			return nil
		}
	}
	return fmt.Errorf("contextwin: unknown kind %q", text)
}

// kindV1 reads the integers that transcripts written before the
// identifiers held: the constants' positions as they were then. The table
// fixes them, so the constants may move.
var kindV1 = [...]Kind{0: Other, 1: Read, 2: Diff, 3: Search, 4: Command, 5: Fetch, 6: Report}

// UnmarshalJSON reads a kind's identifier as a JSON string, or the integer
// that transcripts written before the identifiers held (kindV1: 0 other,
// 1 read, 2 diff, 3 search, 4 command, 5 fetch, 6 report). A JSON null
// leaves the kind as it is.
func (k *Kind) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		return nil
	}
	if len(data) > 0 && data[0] == '"' {
		var id string
		if err := json.Unmarshal(data, &id); err != nil {
			return err
		}
		return k.UnmarshalText([]byte(id))
	}
	n, err := strconv.Atoi(string(data))
	if err != nil {
		return fmt.Errorf("contextwin: kind %s is neither an identifier nor a number", data)
	}
	if n < 0 || n >= len(kindV1) {
		return fmt.Errorf("contextwin: unknown kind %d", n)
	}
	*k = kindV1[n]
	return nil
}

// eventIDs are the identifiers of the events on disk. They differ from
// Event.String, the display text, only where the text is not one word.
var eventIDs = map[Event]string{
	Append: "append", Note: "note", Shed: "shed", Fold: "fold", Emergency: "emergency",
}

// MarshalText gives the event's identifier ("append", "fold",
// "emergency", …).
func (e Event) MarshalText() ([]byte, error) {
	id, ok := eventIDs[e]
	if !ok {
		return nil, fmt.Errorf("contextwin: no identifier for event %d", int(e))
	}
	return []byte(id), nil
}

// eventTextV1 is the display text transcripts held before the
// identifiers, where it differs from the identifier.
var eventTextV1 = map[string]Event{"emergency fold": Emergency}

// UnmarshalText reads an event's identifier, or the display text that
// transcripts written before the identifiers held ("emergency fold");
// any other text is an error.
func (e *Event) UnmarshalText(text []byte) error {
	if ev, ok := eventTextV1[string(text)]; ok {
		*e = ev
		return nil
	}
	for ev, id := range eventIDs {
		if id == string(text) {
			*e = ev
			return nil
		}
	}
	return fmt.Errorf("contextwin: unknown event %q", text)
}
