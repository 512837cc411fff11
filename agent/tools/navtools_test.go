package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reika-lsp/reika/contextwin"
)

// fakeNav answers every question with ans (or err), and records what it
// was asked.
type fakeNav struct {
	ans   NavAnswer
	err   error
	asked []NavQuery
	paths []string
}

func (f *fakeNav) answer(q NavQuery) (NavAnswer, error) {
	f.asked = append(f.asked, q)
	return f.ans, f.err
}

func (f *fakeNav) Definition(_ context.Context, q NavQuery) (NavAnswer, error) { return f.answer(q) }
func (f *fakeNav) References(_ context.Context, q NavQuery) (NavAnswer, error) { return f.answer(q) }
func (f *fakeNav) Hover(_ context.Context, q NavQuery) (NavAnswer, error)      { return f.answer(q) }
func (f *fakeNav) Symbols(_ context.Context, q NavQuery) (NavAnswer, error)    { return f.answer(q) }
func (f *fakeNav) Diagnostics(_ context.Context, paths []string) (NavAnswer, error) {
	f.paths = paths
	return f.ans, f.err
}

// The navigation tools are offered with a Navigator, after the others,
// in one order and with the same bytes whatever the navigator answers.
func TestNavDefinitionsFixed(t *testing.T) {
	root := workspace(t, map[string]string{"main.go": "package main\n"})
	plain := newSet(t, root, Config{}).Definitions()
	for _, d := range plain {
		if navTool(d.Name) {
			t.Errorf("without a Navigator the tools offer %s", d.Name)
		}
	}
	answers := newSet(t, root, Config{Navigator: &fakeNav{ans: NavAnswer{Source: "gopls"}}}).Definitions()
	failing := newSet(t, root, Config{Navigator: &fakeNav{err: errors.New("down")}}).Definitions()
	if diff := cmp.Diff(answers, failing); diff != "" {
		t.Errorf("the definitions depend on the navigator (-answers +failing):\n%s", diff)
	}
	var names []string
	for _, d := range answers[len(plain):] {
		names = append(names, d.Name)
		var schema map[string]any
		if err := json.Unmarshal(d.Parameters, &schema); err != nil {
			t.Errorf("%s's parameters are not JSON: %v", d.Name, err)
		}
	}
	want := []string{DefinitionTool, ReferencesTool, SymbolsTool, HoverTool, DiagnosticsTool}
	if !cmp.Equal(names, want) {
		t.Errorf("navigation tools = %v, want %v after the others", names, want)
	}
	if diff := cmp.Diff(plain, answers[:len(plain)]); diff != "" {
		t.Errorf("a Navigator changed the other tools' definitions:\n%s", diff)
	}
	// Their bytes are pinned as the others' are (go test -update).
	var b bytes.Buffer
	for _, d := range answers[len(plain):] {
		b.WriteString(d.Name + "\n" + d.Description + "\n" + string(d.Parameters) + "\n\n")
	}
	golden := filepath.Join("testdata", "navdefinitions.golden")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile(golden); err != nil || !bytes.Equal(b.Bytes(), want) {
		t.Errorf("the navigation tools' definitions differ from %s (%v; go test -update if deliberate):\n%s", golden, err, b.String())
	}
}

// navLocs makes n locations in a.go, each with a snippet of lines lines.
func navLocs(n, lines int) []NavLocation {
	var src strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&src, "\tline %d of the declaration\n", i)
	}
	locs := make([]NavLocation, n)
	for i := range locs {
		locs[i] = NavLocation{Path: "a.go", Line: 10 * (i + 1), Column: 6, Snippet: NavSnippet(src.String(), 1, lines, 1)}
	}
	return locs
}

func TestNavAnswerCaps(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "package a\n"})
	for _, tc := range []struct {
		name       string
		locs       []NavLocation
		approx     bool
		shown      int // location lines listed
		more       string
		bareNotice bool
	}{
		{"one", navLocs(1, 3), true, 1, "", false},
		{"long snippets", navLocs(3, 60), false, 3, "", false},
		{"over the count", navLocs(25, 2), true, 20, "… and 5 more locations not shown", false},
		{"over the bytes", navLocs(20, 20), true, 20, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nav := &fakeNav{ans: NavAnswer{Locations: tc.locs, Approximate: tc.approx, Source: "repo map"}}
			s := newSet(t, root, Config{Navigator: nav})
			res := call(t, s, ReferencesTool, map[string]any{"symbol": "Open"})
			if res.Error {
				t.Fatalf("references failed: %s", res.Content)
			}
			lines := strings.Split(res.Content, "\n")
			if got := lines[0] == NavApproximate; got != tc.approx {
				t.Errorf("first line %q: approximate %v, want %v", lines[0], got, tc.approx)
			}
			if len(res.Content) > navBytes {
				t.Errorf("answer is %d bytes, over %d", len(res.Content), navBytes)
			}
			places, snippet, longest := 0, 0, 0
			for _, l := range lines {
				switch {
				case strings.HasPrefix(l, "a.go:"):
					places++
					snippet = 0
				case strings.HasPrefix(l, " "):
					snippet++
					longest = max(longest, snippet)
				}
			}
			if places != tc.shown {
				t.Errorf("%d locations listed, want %d:\n%s", places, tc.shown, res.Content)
			}
			if longest > NavSnippetLines+2 {
				t.Errorf("a snippet runs %d lines, over %d", longest, NavSnippetLines)
			}
			if tc.more != "" && !strings.Contains(res.Content, tc.more) {
				t.Errorf("answer lacks %q:\n%s", tc.more, res.Content)
			}
			if got := strings.Contains(res.Content, "without their lines"); got != tc.bareNotice {
				t.Errorf("says locations lost their lines: %v, want %v:\n%s", got, tc.bareNotice, res.Content)
			}
			if res.Payload.Kind != contextwin.Search || res.Payload.Path != "Open" {
				t.Errorf("payload = %+v, want a search of Open", res.Payload)
			}
		})
	}
}

// A question reaches the navigator resolved; a bad one, or a failing
// navigator, is a result the model can act on.
func TestNavQuestions(t *testing.T) {
	root := workspace(t, map[string]string{"pkg/a.go": "package a\n"})
	nav := &fakeNav{ans: NavAnswer{Locations: navLocs(1, 1)}}
	s := newSet(t, root, Config{Navigator: nav})
	res := call(t, s, DefinitionTool, map[string]any{"path": root + "/pkg/a.go", "line": "3", "column": 7})
	if res.Error || len(nav.asked) != 1 || nav.asked[0] != (NavQuery{Path: "pkg/a.go", Line: 3, Column: 7}) {
		t.Errorf("definition asked %+v (result %q), want pkg/a.go:3:7", nav.asked, res.Content)
	}
	if !strings.HasPrefix(res.Content, "definition of pkg/a.go:3:7: 1 location\n") {
		t.Errorf("a sure answer starts %q", res.Content)
	}
	res = call(t, s, DiagnosticsTool, map[string]any{"paths": "pkg/a.go"})
	if res.Error || !cmp.Equal(nav.paths, []string{"pkg/a.go"}) {
		t.Errorf("diagnostics with one path = %q, asked %v", res.Content, nav.paths)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{DefinitionTool, map[string]any{}, `needs "symbol"`},
		{ReferencesTool, map[string]any{"path": "pkg/a.go"}, `needs "line"`},
		{HoverTool, map[string]any{"path": "../x.go", "line": 1}, "outside the workspace"},
		{SymbolsTool, map[string]any{}, `needs "path"`},
		{DiagnosticsTool, map[string]any{}, `needs "paths"`},
		{DefinitionTool, map[string]any{"symbol": "x", "line": -1}, "1-based"},
	} {
		if res := call(t, s, tc.tool, tc.args); !res.Error || !strings.Contains(res.Content, tc.want) {
			t.Errorf("%s %v = %q, want an error with %q", tc.tool, tc.args, res.Content, tc.want)
		}
	}
	down := newSet(t, root, Config{Navigator: &fakeNav{err: errors.New("gopls exited")}})
	res = call(t, down, ReferencesTool, map[string]any{"symbol": "Open"})
	if !res.Error || !strings.Contains(res.Content, "gopls exited") || !strings.Contains(res.Content, "grep") {
		t.Errorf("a failing navigator gives %q, want its error and a way on", res.Content)
	}
	none := newSet(t, root, Config{Navigator: &fakeNav{ans: NavAnswer{Approximate: true}}})
	res = call(t, none, DefinitionTool, map[string]any{"symbol": "Nope"})
	if res.Error || !strings.Contains(res.Content, "no definition found") || !strings.Contains(res.Content, "grep") {
		t.Errorf("an empty approximate answer = %q", res.Content)
	}
	without := newSet(t, root, Config{})
	if res := call(t, without, DefinitionTool, map[string]any{"symbol": "Open"}); !res.Error || !strings.Contains(res.Content, "grep") {
		t.Errorf("definition without a navigator = %q, want refused with a way on", res.Content)
	}
}

// The navigation tools only read: a plan-mode run has them.
func TestNavPlanMode(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "package a\n"})
	s := newSet(t, root, Config{Navigator: &fakeNav{ans: NavAnswer{Locations: navLocs(1, 1)}}})
	ctx := WithRun(context.Background(), Plan)
	for _, tool := range []string{DefinitionTool, ReferencesTool, SymbolsTool, HoverTool, DiagnosticsTool} {
		args := map[string]any{"symbol": "a", "path": "a.go", "paths": []string{"a.go"}}
		if res := runTool(t, s, ctx, tool, args); res.Error {
			t.Errorf("plan mode refused %s: %s", tool, res.Content)
		}
	}
}

func TestNavSnippet(t *testing.T) {
	var src strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&src, "l%d\n", i)
	}
	for _, tc := range []struct {
		from, to, at int
		want         string // the line numbers shown, . for a gap
	}{
		{5, 7, 6, "5 6 7"},
		{1, 20, 0, "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"},
		{1, 40, 3, "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 ."},
		{1, 40, 30, "1 2 3 4 5 6 7 8 9 10 11 . 26 27 28 29 30 31 32 33 34 ."},
		{1, 40, 40, "1 2 3 4 5 6 7 8 9 10 11 . 36 37 38 39 40"},
		{98, 120, 0, "98 99 100"},
		{50, 10, 0, ""},
	} {
		var got []string
		for l := range strings.Lines(NavSnippet(src.String(), tc.from, tc.to, tc.at)) {
			n, _, _ := strings.Cut(strings.TrimSpace(l), "\t")
			if n == "…" {
				n = "."
			}
			got = append(got, n)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("NavSnippet(%d, %d, %d) shows %q, want %q", tc.from, tc.to, tc.at, g, tc.want)
		}
	}
}

func TestNavUseSnippet(t *testing.T) {
	var src strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&src, "l%d\n", i)
	}
	for _, tc := range []struct {
		from, to, at int
		want         string
	}{
		{10, 40, 30, "10 . 29 30 31"},
		{10, 40, 11, "10 11 12"},
		{10, 40, 12, "10 11 12 13"},
		{10, 40, 10, "10 11"},
		{10, 40, 40, "10 . 39 40"},
		{30, 30, 30, "30"},
		{1, 50, 60, ""},
	} {
		var got []string
		for l := range strings.Lines(NavUseSnippet(src.String(), tc.from, tc.to, tc.at)) {
			n, _, _ := strings.Cut(strings.TrimSpace(l), "\t")
			if n == "…" {
				n = "."
			}
			got = append(got, n)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("NavUseSnippet(%d, %d, %d) shows %q, want %q", tc.from, tc.to, tc.at, g, tc.want)
		}
	}
}

func TestNavSubject(t *testing.T) {
	for _, tc := range []struct {
		q    NavQuery
		want string
	}{
		{NavQuery{Symbol: "Open"}, "Open"},
		{NavQuery{Symbol: "Open", Path: "a.go"}, "Open in a.go"},
		{NavQuery{Symbol: "Open", Path: "a.go", Line: 6}, "Open at a.go:6"},
		{NavQuery{Path: "a.go", Line: 6, Column: 2}, "a.go:6:2"},
	} {
		if got := navSubject(tc.q); got != tc.want {
			t.Errorf("navSubject(%+v) = %q, want %q", tc.q, got, tc.want)
		}
	}
}
