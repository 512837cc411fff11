package tools

import (
	"fmt"
	"strings"
	"testing"
)

func TestMatchSegment(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "main.go.bak", false},
		{"*", "", true},
		{"*", "anything", true},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"?.txt", "a.txt", true},
		{"?.txt", "ab.txt", false},
		{"?", "é", true},
		{"[abc].go", "b.go", true},
		{"[abc].go", "d.go", false},
		{"[a-c]x", "bx", true},
		{"[!a-c]x", "bx", false},
		{"[^a-c]x", "dx", true},
		{"[]]", "]", true},
		{"[", "[", true},
		{"[a", "[a", true},
		{`\*`, "*", true},
		{`\*`, "a", false},
		{`\!important`, "!important", true},
		{`foo\ `, "foo ", true},
		{"**", "x", true},
		{"*.[ch]", "x.h", true},
	}
	for _, tt := range tests {
		if got := matchSegment(tt.pattern, tt.name); got != tt.want {
			t.Errorf("matchSegment(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestGlobPattern(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"*.go", "a/b.go", false},
		{"cmd/*/main.go", "cmd/reika/main.go", true},
		{"cmd/*/main.go", "cmd/a/b/main.go", false},
		{"src/**/*.{ts,tsx}", "src/a/b.tsx", true},
		{"src/**/*.{ts,tsx}", "src/b.ts", true},
		{"src/**/*.{ts,tsx}", "src/b.js", false},
		{"{a,b/{c,d}}/x", "b/d/x", true},
		{"a/**", "a/b/c", true},
		{"./a/*.txt", "a/x.txt", true},
		{"a//b", "a/b", true},
	}
	for _, tt := range tests {
		if got := compileGlob(tt.pattern).match(tt.path); got != tt.want {
			t.Errorf("glob %q match %q = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
	prune := []struct {
		pattern, dir string
		want         bool
	}{
		{"cmd/*/main.go", "cmd", true},
		{"cmd/*/main.go", "cmd/x", true},
		{"cmd/*/main.go", "cmd/x/y", false},
		{"cmd/*/main.go", "internal", false},
		{"**/*.go", "any/where", true},
		{"*.go", "sub", false},
	}
	for _, tt := range prune {
		if got := compileGlob(tt.pattern).mayContain(tt.dir); got != tt.want {
			t.Errorf("glob %q mayContain %q = %v, want %v", tt.pattern, tt.dir, got, tt.want)
		}
	}
	if n := len(expandBraces(strings.Repeat("{a,b,c,d}", 10), 0)); n > maxBraceAlternatives {
		t.Errorf("expandBraces(10 groups) = %d alternatives, want at most %d", n, maxBraceAlternatives)
	}
}

// TestGitignore checks the matcher against cases from git's documentation
// (gitignore(5)) and its behaviour.
func TestGitignore(t *testing.T) {
	type check struct {
		path  string
		dir   bool
		order bool // want ignored
	}
	tests := []struct {
		name   string
		files  map[string]string // base dir → .gitignore text
		checks []check
	}{
		{"comments and blank lines", map[string]string{"": "# a comment\n\n   \n\\#hash\n"}, []check{
			{"# a comment", false, false}, {"#hash", false, true}, {"a", false, false},
		}},
		{"basename anywhere", map[string]string{"": "*.log\nbuild\n"}, []check{
			{"x.log", false, true}, {"a/b/x.log", false, true}, {"x.log.txt", false, false},
			{"build", true, true}, {"src/build", true, true}, {"src/build", false, true},
			{"src/build/x.go", false, true},
		}},
		{"trailing slash is for directories", map[string]string{"": "out/\n"}, []check{
			{"out", true, true}, {"out", false, false}, {"a/out", true, true}, {"out/x", false, true},
		}},
		{"leading slash anchors", map[string]string{"": "/todo\n"}, []check{
			{"todo", false, true}, {"a/todo", false, false},
		}},
		{"inner slash anchors", map[string]string{"": "doc/frotz\n"}, []check{
			{"doc/frotz", false, true}, {"a/doc/frotz", false, false},
		}},
		{"negation", map[string]string{"": "*.txt\n!keep.txt\n"}, []check{
			{"a.txt", false, true}, {"keep.txt", false, false}, {"d/keep.txt", false, false},
		}},
		{"the last rule wins", map[string]string{"": "!keep.txt\n*.txt\n"}, []check{
			{"keep.txt", false, true},
		}},
		{"no re-inclusion under an ignored directory", map[string]string{"": "/out/\n!/out/keep\n"}, []check{
			{"out/keep", false, true},
		}},
		{"dir/** ignores the contents, not the directory", map[string]string{"": "abc/**\n!abc/keep\n"}, []check{
			{"abc", true, false}, {"abc/x", false, true}, {"abc/d/x", false, true}, {"abc/keep", false, false},
		}},
		{"leading **/", map[string]string{"": "**/foo\n**/foo/bar\n"}, []check{
			{"foo", false, true}, {"a/b/foo", true, true}, {"x/foo/bar", false, true},
		}},
		{"inner /**/", map[string]string{"": "a/**/b\n"}, []check{
			{"a/b", false, true}, {"a/x/b", false, true}, {"a/x/y/b", false, true}, {"c/a/b", false, false},
		}},
		{"wildcards do not cross slashes", map[string]string{"": "foo/*\n"}, []check{
			{"foo/test.json", false, true}, {"foo/bar", true, true}, {"foo/bar/hello.c", false, true},
			{"a/foo/x", false, false},
		}},
		{"? and classes", map[string]string{"": "file?.[ch]\n"}, []check{
			{"file1.c", false, true}, {"file1.h", false, true}, {"file12.c", false, false}, {"file1.o", false, false},
		}},
		{"escaped trailing space", map[string]string{"": "a\\ \nb  \n"}, []check{
			{"a ", false, true}, {"b", false, true}, {"b  ", false, false},
		}},
		{"nested files apply to their directory", map[string]string{"": "*.tmp\n", "sub": "/local\n!keep.tmp\n"}, []check{
			{"x.tmp", false, true}, {"sub/x.tmp", false, true}, {"sub/keep.tmp", false, false},
			{"keep.tmp", false, true}, {"sub/local", false, true}, {"local", false, false},
			{"sub/deeper/local", false, false},
		}},
		{"CRLF lines", map[string]string{"": "*.o\r\n"}, []check{
			{"x.o", false, true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st ignoreStack
			for _, base := range []string{"", "sub"} {
				if text, ok := tt.files[base]; ok {
					st = append(st, parseIgnore(base, []byte(text)))
				}
			}
			for _, c := range tt.checks {
				if got := st.excludes(c.path, c.dir); got != c.order {
					t.Errorf("ignored(%q, dir=%v) = %v, want %v", c.path, c.dir, got, c.order)
				}
			}
		})
	}
}

// TestWalkHonoursGitignore checks the walk that glob and grep share:
// nested .gitignore files, .git/info/exclude, .git itself skipped.
func TestWalkHonoursGitignore(t *testing.T) {
	root := workspace(t, map[string]string{
		".gitignore":        "*.log\n/vendor/\n",
		".git/HEAD":         "ref: refs/heads/main\n",
		".git/info/exclude": "secret.txt\n",
		"main.go":           "",
		"x.log":             "",
		"secret.txt":        "",
		"vendor/v.go":       "",
		"sub/.gitignore":    "gen/\n!keep.log\n",
		"sub/a.go":          "",
		"sub/keep.log":      "",
		"sub/other.log":     "",
		"sub/gen/g.go":      "",
		"sub/deep/vendor/x": "",
	})
	s := newSet(t, root, Config{})
	var got []string
	if _, err := s.walk(t.Context(), 0, "", nil, func(rel, _ string) { got = append(got, rel) }); err != nil {
		t.Fatal(err)
	}
	want := ".gitignore main.go sub/.gitignore sub/a.go sub/deep/vendor/x sub/keep.log"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("walk = %s, want %s", g, want)
	}
	// A walk that starts below the root still applies the root's rules.
	got = nil
	if _, err := s.walk(t.Context(), 0, "sub", nil, func(rel, _ string) { got = append(got, rel) }); err != nil {
		t.Fatal(err)
	}
	if g, w := fmt.Sprint(got), "[sub/.gitignore sub/a.go sub/deep/vendor/x sub/keep.log]"; g != w {
		t.Errorf("walk(sub) = %s, want %s", g, w)
	}
}

// excludes reports whether rel or one of its parent directories is ignored.
func (st ignoreStack) excludes(rel string, isDir bool) bool {
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' && st.ignored(rel[:i], true) {
			return true
		}
	}
	return st.ignored(rel, isDir)
}
