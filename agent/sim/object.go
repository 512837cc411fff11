package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// obj is a JSON object that keeps its keys in the order they were written,
// so that responses carry the engines' own field order.
type obj []kv

type kv struct {
	k string
	v any
}

// MarshalJSON writes the object in order, without HTML escaping (the
// engines send "<|user|>" as is).
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(f.k))
		b.WriteByte(':')
		v, err := encode(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encode marshals v without HTML escaping and without a trailing newline.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// mustEncode is encode for values built by this package, which always
// marshal; a failure is reported as a JSON error value rather than a panic.
func mustEncode(v any) []byte {
	b, err := encode(v)
	if err != nil {
		b, _ = encode(obj{{"error", obj{{"message", "simulator could not encode its answer: " + err.Error()}}}})
	}
	return b
}

// writeJSON sends v with status and the flavour's content type.
func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	body := mustEncode(v)
	h := w.Header()
	h.Set("Content-Type", s.fl.jsonContentType())
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
