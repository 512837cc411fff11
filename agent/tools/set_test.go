package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/engine"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestDefinitionsGolden pins the bytes of the tool definitions: they are
// part of the prompt prefix the engine caches, so any change must be
// deliberate (go test -update rewrites the file).
func TestDefinitionsGolden(t *testing.T) {
	s := newSet(t, t.TempDir(), Config{FetchEnabled: true})
	var b bytes.Buffer
	for _, d := range s.Definitions() {
		b.WriteString(d.Name + "\n" + d.Description + "\n" + string(d.Parameters) + "\n\n")
	}
	golden := filepath.Join("testdata", "definitions.golden")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("Definitions() differ from %s (run go test -update if the change is deliberate):\n%s", golden, b.String())
	}
}

func TestDefinitions(t *testing.T) {
	names := func(defs []engine.Tool) []string {
		var out []string
		for _, d := range defs {
			out = append(out, d.Name)
		}
		return out
	}
	off := newSet(t, t.TempDir(), Config{})
	on := newSet(t, t.TempDir(), Config{FetchEnabled: true, BashTimeout: 90 * time.Second})
	if got, want := names(off.Definitions()), []string{"read", "glob", "grep", "edit", "write", "bash"}; !slices.Equal(got, want) {
		t.Errorf("Definitions() = %v, want %v", got, want)
	}
	if got, want := names(on.Definitions()), []string{"read", "glob", "grep", "edit", "write", "bash", "fetch_url"}; !slices.Equal(got, want) {
		t.Errorf("Definitions(fetch) = %v, want %v", got, want)
	}
	if d := on.Definitions()[5].Description; !strings.Contains(d, "after 90 seconds") {
		t.Errorf("bash description = %q, want the configured time limit", d)
	}

	// The same bytes every time, even if a caller scribbles on a result.
	first := off.Definitions()
	first[0].Parameters[0] = 'X'
	again, _ := json.Marshal(off.Definitions())
	want, _ := json.Marshal(newSet(t, t.TempDir(), Config{}).Definitions())
	if !bytes.Equal(again, want) {
		t.Errorf("Definitions() changed between calls")
	}

	// Each schema is compact JSON: an object with described, typed
	// properties, required ones among them; the argument names are the
	// ones the simulated engine's policy uses.
	wantProps := map[string][]string{
		"read": {"path", "offset", "limit"}, "glob": {"pattern"}, "grep": {"pattern", "path"},
		"edit": {"path", "old_text", "new_text", "diff"}, "write": {"path", "content"}, "bash": {"command", "network", "outside_sandbox"}, "fetch_url": {"url"},
	}
	for _, d := range on.Definitions() {
		var compact bytes.Buffer
		if err := json.Compact(&compact, d.Parameters); err != nil || !bytes.Equal(compact.Bytes(), d.Parameters) {
			t.Errorf("%s parameters are not compact JSON: %v", d.Name, err)
			continue
		}
		var schema struct {
			Type       string `json:"type"`
			Properties map[string]struct {
				Type        string `json:"type"`
				Description string `json:"description"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		dec := json.NewDecoder(bytes.NewReader(d.Parameters))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&schema); err != nil {
			t.Errorf("%s parameters: %v", d.Name, err)
			continue
		}
		if schema.Type != "object" || len(schema.Required) == 0 {
			t.Errorf("%s schema type %q, required %v; want an object with required fields", d.Name, schema.Type, schema.Required)
		}
		var props []string
		for name, p := range schema.Properties {
			props = append(props, name)
			if (p.Type != "string" && p.Type != "integer" && p.Type != "boolean") || p.Description == "" {
				t.Errorf("%s.%s = %+v, want a type and a description", d.Name, name, p)
			}
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s requires %q, which is not a property", d.Name, r)
			}
		}
		slices.Sort(props)
		want := slices.Sorted(slices.Values(wantProps[d.Name]))
		if !slices.Equal(props, want) {
			t.Errorf("%s properties = %v, want %v", d.Name, props, want)
		}
		if d.Description == "" || strings.Contains(d.Description, "\n") {
			t.Errorf("%s description = %q, want one line", d.Name, d.Description)
		}
	}
}

type panicky struct{}

func (panicky) Open(string) (string, int32, bool) { panic("boom") }

func TestRunErrors(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "x\n"})
	s := newSet(t, root, Config{})
	tests := []struct {
		name, tool, args string
		want             string
		err              bool
	}{
		{"unknown tool", "delete", `{}`, `there is no tool named "delete"; the tools are read, glob, grep, edit, write, bash`, true},
		{"not JSON", "read", `{"path": "a.go"`, `the arguments of read are not a JSON object (unexpected end of JSON input); send them as an object, such as {"path":"main.go"}`, true},
		{"an array", "glob", `["*.go"]`, `the arguments of glob are not a JSON object (json: cannot unmarshal array into Go value of type map[string]json.RawMessage); send them as an object, such as {"pattern":"**/*.go"}`, true},
		{"null", "read", `null`, `the arguments of read are not a JSON object (got null)`, true},
		{"no arguments", "read", ``, `read needs "path"`, true},
		{"encoded twice", "read", `"{\"path\":\"a.go\"}"`, "     1\tx", false},
		{"a field of the wrong type", "grep", `{"pattern": 3}`, `the "pattern" argument of grep must be a string, not a JSON number; for example {"pattern":"func main"}`, true},
	}
	for _, tt := range tests {
		res := s.Run(context.Background(), engine.ToolCall{Name: tt.tool, Arguments: tt.args})
		if res.Error != tt.err || !strings.HasPrefix(res.Content, tt.want) {
			t.Errorf("%s: Run(%s %s) = %q (error %v), want %q (error %v)", tt.name, tt.tool, tt.args, res.Content, res.Error, tt.want, tt.err)
		}
	}
	// A panic inside a tool becomes an error result.
	s = newSet(t, root, Config{Buffers: panicky{}})
	res := s.Run(context.Background(), engine.ToolCall{Name: "read", Arguments: `{"path":"a.go"}`})
	if !res.Error || !strings.Contains(res.Content, "the read tool failed on an internal error (boom)") {
		t.Errorf("Run(read) with a panicking buffer = %q, want an error result", res.Content)
	}
}
