package contextwin

import (
	"encoding/json"
	"testing"
)

// Every kind and event goes to disk as its identifier and comes back as
// itself; the old forms (a kind's integer, an event's display text) are
// read too.
func TestPersistedEnums(t *testing.T) {
	for k := Other; k <= Report; k++ {
		data, err := json.Marshal(Payload{Kind: k, Path: "p"})
		if err != nil {
			t.Fatalf("Marshal(%v): %v", k, err)
		}
		var back Payload
		if err := json.Unmarshal(data, &back); err != nil || back.Kind != k {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", data, back.Kind, err, k)
		}
	}
	for _, tc := range []struct {
		in   string
		want Kind
	}{{`{"kind":"search"}`, Search}, {`{"kind":1}`, Read}, {`{"kind":3}`, Search}, {`{"kind":6}`, Report}, {`{}`, Other}} {
		var p Payload
		if err := json.Unmarshal([]byte(tc.in), &p); err != nil || p.Kind != tc.want {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", tc.in, p.Kind, err, tc.want)
		}
	}
	if data, _ := json.Marshal(Payload{Kind: Search}); string(data) != `{"kind":"search"}` {
		t.Errorf("Marshal(search payload) = %s, want the identifier", data)
	}
	for _, bad := range []string{`{"kind":"grep"}`, `{"kind":7}`, `{"kind":-1}`, `{"kind":1.5}`, `{"kind":true}`} {
		var p Payload
		if err := json.Unmarshal([]byte(bad), &p); err == nil {
			t.Errorf("Unmarshal(%s) = %v, want an error", bad, p.Kind)
		}
	}
	for e := Append; e <= Emergency; e++ {
		text, err := e.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%v): %v", e, err)
		}
		var back Event
		if err := back.UnmarshalText(text); err != nil || back != e {
			t.Errorf("UnmarshalText(%s) = %v, %v; want %v", text, back, err, e)
		}
	}
	for in, want := range map[string]Event{"emergency": Emergency, "emergency fold": Emergency, "fold": Fold, "append": Append} {
		var e Event
		if err := e.UnmarshalText([]byte(in)); err != nil || e != want {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", in, e, err, want)
		}
	}
	var e Event
	if err := e.UnmarshalText([]byte("folded")); err == nil {
		t.Errorf("UnmarshalText(folded) = %v, want an error", e)
	}
	if _, err := Kind(99).MarshalText(); err == nil {
		t.Errorf("MarshalText(kind 99) gave an identifier")
	}
}
