package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"testing"

	"github.com/reika-lsp/reika/agent/replay"
)

// The plot is valid XML with a panel per session and window, a polyline
// per strategy in each, and a mark on every answered request that does
// not extend the previous turn request: circles for turn requests,
// squares for side calls.
func TestWritePlot(t *testing.T) {
	reqs := func(spec string) []replay.Request {
		// spec: one letter a request: a append, e event, s side call
		// extending, S side call not extending, r refused.
		var out []replay.Request
		for i, c := range spec {
			q := replay.Request{Round: i + 1, PromptTokens: 1000 * (i + 1), Extends: c == 'a' || c == 's'}
			q.Side = c == 's' || c == 'S'
			q.Refused = c == 'r'
			out = append(out, q)
		}
		return out
	}
	res := func(session string, window int, strategy, spec string) replay.Result {
		return replay.Result{Row: replay.Row{Strategy: strategy, Window: window, Session: session}, Requests: reqs(spec)}
	}
	results := []replay.Result{
		res("one", 16000, "ours", "aaeaSaae"),
		res("one", 16000, "sliding", "aeeraeaa"),
		res("one", 32000, "ours", "aaaa"),
		res("one", 32000, "sliding", "aaea"),
		res("two", 16000, "ours", "asSSe"),
		res("two", 16000, "sliding", "aaaaa"),
	}
	var buf bytes.Buffer
	if err := writePlot(&buf, results); err != nil {
		t.Fatal(err)
	}
	type count struct{ panels, polylines, events, sides int }
	var got count
	perPanel := map[int]int{}
	dec := xml.NewDecoder(&buf)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("writePlot wrote invalid XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		class := ""
		for _, a := range se.Attr {
			if a.Name.Local == "class" {
				class = a.Value
			}
		}
		switch {
		case se.Name.Local == "g" && class == "panel":
			got.panels++
		case se.Name.Local == "polyline":
			got.polylines++
			perPanel[got.panels]++
		case class == "event":
			got.events++
		case class == "side":
			got.sides++
		}
	}
	want := count{panels: 3, polylines: 6, events: 2 + 3 + 0 + 1 + 1 + 0, sides: 1 + 2}
	if got != want {
		t.Errorf("writePlot: %+v, want %+v", got, want)
	}
	for p, n := range perPanel {
		if n != 2 {
			t.Errorf("panel %d has %d polylines, want 2 (one per strategy)", p, n)
		}
	}
}
