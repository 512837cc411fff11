package repomap

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// navFiles is a small project in three languages, each defining and
// using a name the others share, with the name also in comments and
// strings, where it is not a reference.
var navFiles = map[string]string{
	"store/store.go": `package store

// Open opens the store; "Open" in a comment is no use.
type Store struct{ path string }

func Open(path string) *Store {
	return &Store{path: path}
}

func (s *Store) Close() error {
	return nil
}
`,
	"cmd/main.go": `package main

import "example.com/store"

func main() {
	s := store.Open("Open")
	defer s.Close()
}
`,
	"py/store.py": `class Store:
    def close(self):
        """close the store"""
        return None


def open_store(path):
    # open_store is documented here
    s = Store()
    return s
`,
	"py/app.py": `from store import open_store

s = open_store("open_store")
s.close()
`,
	"web/store.ts": `export class Store {
  close(): void {
    // nothing to close
  }
}

export function openStore(path: string): Store {
  return new Store();
}
`,
	"web/app.ts": "import { openStore } from './store';\n\nconst s = openStore(`openStore`);\ns.close();\n",
}

func navMap(t *testing.T) *Map {
	t.Helper()
	m := New()
	t.Cleanup(m.Close)
	for p, src := range navFiles {
		m.Update(p, []byte(src))
	}
	return m
}

// where writes definitions as path:line-end kind name, for comparing.
func where(defs []Definition) []string {
	var out []string
	for _, d := range defs {
		out = append(out, fmt.Sprintf("%s:%d-%d %s %s", d.Path, d.Line, d.End, d.Kind, d.Name))
	}
	return out
}

func TestDefinitions(t *testing.T) {
	m := navMap(t)
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"Open", []string{"store/store.go:6-8 func Open"}},
		{"Store", []string{"py/store.py:1-4 class Store", "store/store.go:4-4 struct Store", "web/store.ts:1-5 class Store"}},
		{"Store.Close", []string{"store/store.go:10-12 method Close"}},
		{"(*Store).Close", []string{"store/store.go:10-12 method Close"}},
		{"store.Open", []string{"store/store.go:6-8 func Open"}},
		{"store.open_store", []string{"py/store.py:7-10 func open_store"}},
		{"Other.Open", []string{"store/store.go:6-8 func Open"}}, // no such parent: by name
		{"Store.close", []string{"py/store.py:2-4 method close", "web/store.ts:2-4 method close"}},
		{"open_store", []string{"py/store.py:7-10 func open_store"}},
		{"openStore", []string{"web/store.ts:7-9 func openStore"}},
		{"main", []string{"cmd/main.go:5-8 func main"}},
		{"missing", nil},
		{"", nil},
	} {
		if diff := cmp.Diff(tc.want, where(m.Definitions(tc.name))); diff != "" {
			t.Errorf("Definitions(%q) (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestMatchAndFile(t *testing.T) {
	m := navMap(t)
	got := where(m.Match("OPEN"))
	want := []string{"py/store.py:7-10 func open_store", "store/store.go:6-8 func Open", "web/store.ts:7-9 func openStore"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Match(OPEN) (-want +got):\n%s", diff)
	}
	f, ok := m.File("store/store.go")
	if !ok || len(f.Symbols) != 3 || f.Lang != "go" {
		t.Errorf("File(store/store.go) = %+v, %v; want its 3 Go symbols", f, ok)
	}
	if _, ok := m.File("nope.go"); ok {
		t.Errorf("File(nope.go) found a file the map does not hold")
	}
}

// References: the files that use a name, then its places in each, never
// in a comment or a string.
func TestReferences(t *testing.T) {
	m := navMap(t)
	for _, tc := range []struct {
		name  string
		users []string
		at    map[string][]Occurrence
	}{
		{"Open", []string{"cmd/main.go", "store/store.go"}, map[string][]Occurrence{
			"cmd/main.go":    {{6, 13}},
			"store/store.go": {{6, 6}},
		}},
		{"open_store", []string{"py/app.py", "py/store.py"}, map[string][]Occurrence{
			"py/app.py":   {{1, 19}, {3, 5}},
			"py/store.py": {{7, 5}},
		}},
		{"openStore", []string{"web/app.ts", "web/store.ts"}, map[string][]Occurrence{
			"web/app.ts":   {{1, 10}, {3, 11}},
			"web/store.ts": {{7, 17}},
		}},
	} {
		if diff := cmp.Diff(tc.users, m.Users(tc.name)); diff != "" {
			t.Errorf("Users(%q) (-want +got):\n%s", tc.name, diff)
		}
		for _, p := range tc.users {
			got := Occurrences(p, []byte(navFiles[p]), tc.name)
			if diff := cmp.Diff(tc.at[p], got); diff != "" {
				t.Errorf("Occurrences(%s, %q) (-want +got):\n%s", p, tc.name, diff)
			}
		}
	}
	if got := Occurrences("notes.txt", []byte("Open"), "Open"); got != nil {
		t.Errorf("Occurrences in a file of no language = %v, want nil", got)
	}
}

func TestIdentAt(t *testing.T) {
	for _, tc := range []struct {
		path         string
		line, column int
		want         string
	}{
		{"cmd/main.go", 6, 13, "store.Open"},
		{"cmd/main.go", 6, 16, "store.Open"},
		{"cmd/main.go", 6, 7, "store"},
		{"cmd/main.go", 6, 0, "s"},
		{"cmd/main.go", 6, 19, ""},   // inside the string
		{"store/store.go", 3, 5, ""}, // inside the comment
		{"py/app.py", 3, 6, "open_store"},
		{"web/app.ts", 4, 3, "s.close"},
		{"web/app.ts", 4, 1, "s"},
		{"web/app.ts", 9, 1, ""},
	} {
		src := []byte(navFiles[tc.path])
		if got := IdentAt(tc.path, src, tc.line, tc.column); got != tc.want {
			line := strings.Split(string(src), "\n")[min(tc.line, 4)-1]
			t.Errorf("IdentAt(%s, %d, %d) = %q, want %q (line %q)", tc.path, tc.line, tc.column, got, tc.want, line)
		}
	}
}

// End follows an edit: a symbol after it moves with its whole range.
func TestEndAfterEdit(t *testing.T) {
	m := navMap(t)
	src := navFiles["store/store.go"]
	m.Update("store/store.go", []byte(strings.Replace(src, "type Store", "// one\n// two\ntype Store", 1)))
	got := where(m.Definitions("Store.Close"))
	if want := []string{"store/store.go:12-14 method Close"}; !cmp.Equal(want, got) {
		t.Errorf("after an edit, Definitions(Store.Close) = %v, want %v", got, want)
	}
}
