package contextwin

import (
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected sections of the golden files under contextwin/testdata")

// golden runs check on each txtar archive in dir. check returns the
// expected sections as they come out (name → text); with -update they are
// written back into the archive, otherwise they must match it.
func golden(t *testing.T, dir string, check func(t *testing.T, a *archive) map[string]string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files in contextwin/testdata/%s (%v)", dir, err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			a := &archive{ar: ar, path: path}
			got := check(t, a)
			if *update {
				for _, name := range slices.Sorted(maps.Keys(got)) {
					a.set(name, got[name])
				}
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, name := range slices.Sorted(maps.Keys(got)) {
				want, ok := a.section(name)
				if !ok {
					t.Errorf("%s: no -- %s -- section (run go test ./contextwin -run Golden -update)", path, name)
					continue
				}
				if got[name] != want {
					t.Errorf("%s: %s =\n%s\nwant\n%s", path, name, got[name], want)
				}
			}
		})
	}
}

// archive is a golden file: input sections and expected ones.
type archive struct {
	ar   *txtar.Archive
	path string
}

func (a *archive) section(name string) (string, bool) {
	for _, f := range a.ar.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// text is an input section; a missing one is "".
func (a *archive) text(name string) string {
	s, _ := a.section(name)
	return s
}

// json decodes an input section into v, when the archive has it.
func (a *archive) json(t *testing.T, name string, v any) bool {
	t.Helper()
	s, ok := a.section(name)
	if !ok {
		return false
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%s: section %s: %v", a.path, name, err)
	}
	return true
}

func (a *archive) set(name, data string) {
	if data != "" && !strings.HasSuffix(data, "\n") {
		data += "\n"
	}
	for i := range a.ar.Files {
		if a.ar.Files[i].Name == name {
			a.ar.Files[i].Data = []byte(data)
			return
		}
	}
	a.ar.Files = append(a.ar.Files, txtar.File{Name: name, Data: []byte(data)})
}

// testPayload is a Payload as the golden files write it.
type testPayload struct {
	Kind  string `json:"kind"`
	Path  string `json:"path"`
	From  int    `json:"from"`
	To    int    `json:"to"`
	Total int    `json:"total"`
	Spill string `json:"spill"`
	Task  bool   `json:"task"`
}

func (p testPayload) payload(t *testing.T) Payload {
	t.Helper()
	k := -1
	for i, n := range kindNames {
		if n == p.Kind || p.Kind == "" && i == 0 {
			k = i
		}
	}
	if k < 0 {
		t.Fatalf("payload kind %q: want one of %v", p.Kind, kindNames)
	}
	return Payload{Kind: Kind(k), Path: p.Path, From: p.From, To: p.To, Total: p.Total, Spill: p.Spill, Task: p.Task}
}

// withNewline ends s with a newline, as an archive's sections are.
func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
