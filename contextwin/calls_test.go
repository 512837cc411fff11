package contextwin

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"unicode/utf8"
)

func TestKindOfTool(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Kind
	}{
		{"read_file", Read}, {"Read", Read}, {"view", Read},
		{"str_replace_editor", Diff}, {"MultiEdit", Diff}, {"apply_patch", Diff}, {"write_to_file", Diff},
		{"grep", Search}, {"Glob", Search}, {"codebase_search", Search}, {"WebSearch", Search},
		{"bash", Command}, {"run_terminal_cmd", Command},
		{"fetch_url", Fetch}, {"WebFetch", Fetch},
		{"Task", Report}, {"spawn_agent", Report},
		{"list_dir", Other}, {"merge", Other}, {"truncate", Other}, {"", Other},
	} {
		if got := kindOfTool(tc.name); got != tc.want {
			t.Errorf("kindOfTool(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestJSONFields(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`{"path": "a.go", "offset": 10, "limit": 5}`, []string{"path=a.go", "offset#10", "limit#5"}},
		{`{"nested": {"path": "x"}, "list": [1, "y", {"z": "}"}], "ok": true, "n": null, "path": "b"}`, []string{"path=b"}},
		{`{"command": "echo \"hi\"\n\u00e9\ud83d\ude00 \/"}`, []string{"command=echo \"hi\"\né😀 /"}},
		{`{"path": "a.go", "offset": `, []string{"path=a.go"}},
		{`{"path": "a.go" "limit": 3}`, []string{"path=a.go"}},
		{`not json`, nil},
		{`["path", "a"]`, nil},
		{``, nil},
	} {
		var got []string
		jsonFields(tc.in, func(k, v string, isString bool) {
			sep := "#"
			if isString {
				sep = "="
			}
			got = append(got, k+sep+v)
		})
		if !slices.Equal(got, tc.want) {
			t.Errorf("jsonFields(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// jsonFields reads the string members of a well-formed object as
// encoding/json does.
func FuzzJSONFields(f *testing.F) {
	f.Add(`{"path": "a.go", "offset": 10}`)
	f.Add(`{"a": {"b": [1, "}"]}, "c": "\ud83d\ude00\u00e9\n"}`)
	f.Add(`{"x": "\ud800", "y": true}`)
	f.Fuzz(func(t *testing.T, s string) {
		got := map[string]string{}
		jsonFields(s, func(k, v string, isString bool) {
			if isString {
				got[k] = v
			} else {
				delete(got, k)
			}
		})
		var ref map[string]any
		if !utf8.ValidString(s) || json.Unmarshal([]byte(s), &ref) != nil {
			return
		}
		want := map[string]string{}
		for k, v := range ref {
			if str, ok := v.(string); ok {
				want[k] = str
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("jsonFields(%q) = %q, want %q", s, got, want)
		}
	})
}
