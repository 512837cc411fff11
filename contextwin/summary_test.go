package contextwin

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// A summary golden file holds payload.json and content, the tool result;
// summary is what Summarize makes of it, its first line the keep verdict.
func TestSummaryGolden(t *testing.T) {
	golden(t, "summary", func(t *testing.T, a *archive) map[string]string {
		var p testPayload
		a.json(t, "payload.json", &p)
		m := Message{Role: Tool, Content: a.text("content"), Payload: p.payload(t)}
		s, keep := Summarize(m)
		if len(s) > maxSummary {
			t.Errorf("len(Summarize(%s)) = %d, want at most %d", a.path, len(s), maxSummary)
		}
		return map[string]string{"summary": withNewline(fmt.Sprintf("keep: %v\n%s", keep, s))}
	})
}

func TestSummarizeKeep(t *testing.T) {
	big := strings.Repeat("x", 4000)
	for _, tc := range []struct {
		name string
		m    Message
		want bool
	}{
		{"not a tool result", Message{Role: Assistant, Content: big}, true},
		{"empty", Message{Role: Tool}, true},
		{"under 300 bytes", Message{Role: Tool, Content: strings.Repeat("y", 299), Payload: Payload{Kind: Command}}, true},
		{"large output", Message{Role: Tool, Content: big, Payload: Payload{Kind: Command}}, false},
		{"task payload", Message{Role: Tool, Content: big, Payload: Payload{Kind: Fetch, Task: true}}, true},
		// The opening of another result is 300 bytes: a 400-byte result
		// would shrink by too little to be worth it.
		{"summary near its size", Message{Role: Tool, Content: strings.Repeat("z", 400)}, true},
		{"summary well under its size", Message{Role: Tool, Content: strings.Repeat("z", 1200)}, false},
	} {
		s, keep := Summarize(tc.m)
		if keep != tc.want {
			t.Errorf("Summarize(%s) keep = %v, want %v (summary %d bytes of %d)", tc.name, keep, tc.want, len(s), len(tc.m.Content))
		}
		if tc.m.Role != Tool && s != "" {
			t.Errorf("Summarize(%s) = %q, want \"\"", tc.name, s)
		}
		if !keep && len(s)*100 >= len(tc.m.Content)*keepPercent {
			t.Errorf("Summarize(%s) shed a result to %d bytes of %d, want under %d%%", tc.name, len(s), len(tc.m.Content), keepPercent)
		}
	}
}

func TestNumbered(t *testing.T) {
	for _, tc := range []struct {
		line     string
		n        int
		code     string
		numbered bool
	}{
		{"     12\tfunc main() {", 12, "func main() {", true},
		{"12\t\treturn nil", 12, "\treturn nil", true},
		{"7: # Title", 7, "# Title", true},
		{"   3→class A:", 3, "class A:", true},
		{"    40\t", 40, "", true},
		{"12:30 the meeting", 0, "", false},
		{"func main() {", 0, "", false},
		{"", 0, "", false},
	} {
		n, code, ok := numbered(tc.line)
		if n != tc.n || code != tc.code || ok != tc.numbered {
			t.Errorf("numbered(%q) = %d, %q, %v, want %d, %q, %v", tc.line, n, code, ok, tc.n, tc.code, tc.numbered)
		}
	}
}

func TestLineNumbering(t *testing.T) {
	for _, tc := range []struct {
		content string
		want    bool
	}{
		{"     1\tpackage a\n     2\t\n", true},
		{"1: a\n2: b\n", true},
		{"1\tonly line\n", true},
		{"1: a\n3: b\n", false}, // not consecutive: a YAML map, say
		{"42\n", false},
		{"package a\n", false},
		{"", false},
	} {
		if got := lineNumbering(tc.content); got != tc.want {
			t.Errorf("lineNumbering(%q) = %v, want %v", tc.content, got, tc.want)
		}
	}
}

// Each line is the first line of a file of the given name; want says
// whether the outline lists it.
func TestOutlineDecl(t *testing.T) {
	for _, tc := range []struct {
		path, line string
		want       bool
	}{
		{"a.go", "func (c *Client) Chat(ctx context.Context) error {", true},
		{"a.go", "type Budget struct {", true},
		{"a.go", "var (", true},
		{"a.go", "package contextwin", false},
		{"a.go", "import \"fmt\"", false},
		{"a.go", "\treturn nil", false},
		{"a.go", "// Chat sends a request.", false},
		{"a.go", "}", false},
		{"a.py", "async def fetch(url):", true},
		{"a.py", "class Session(Base):", true},
		{"a.py", "@dataclass", false},
		{"a.py", "    def method(self):", false},
		{"a.py", "if __name__ == \"__main__\":", false},
		{"a.ts", "export const X = 1;", true},
		{"a.ts", "export default activate;", true},
		{"a.ts", "interface Props {", true},
		{"a.ts", "const handler = async () => {", true},
		{"a.ts", "declare module \"x\" {", true},
		{"a.ts", "import * as fs from \"fs\";", false},
		{"a.ts", "describe(\"x\", () => {", false},
		{"a.js", "module.exports = { run };", false},
		{"a.rs", "pub(crate) fn merge(a: &[Span]) -> Vec<Span> {", true},
		{"a.rs", "impl<T: Display> fmt::Display for Wrapper<T> {", true},
		{"a.rs", "unsafe impl Send for Handle {}", true},
		{"a.rs", "macro_rules! span {", true},
		{"a.rs", "#[derive(Debug)]", false},
		{"a.rs", "use std::fmt;", false},
		{"a.c", "static int parse(const char *s, size_t n)", true},
		{"a.c", "#define MAX_SPANS 8", true},
		{"a.c", "int x = compute(3);", false},
		{"a.c", "if (x) {", false},
		{"A.java", "public final class Budget {", true},
		{"a.kt", "data class Span(val from: Int)", true},
		{"a.md", "## Install", true},
		{"a.md", "#hashtag", false},
		{"a.md", "Some text", false},
		{"a.yaml", "jobs:", true},
		{"a.yaml", "  build:", false},
		{"a.yaml", "- item", false},
		{"a.toml", "[profile.laptop]", true},
		{"a.toml", "window = 16384", false},
		{"a.json", "{\"type\": 1}", false},
		{"notes.txt", "type the command", false},
	} {
		o := outliner{kind: outlineFor(tc.path)}
		if got := o.decl(tc.line); got != tc.want {
			t.Errorf("decl(%s, %q) = %v, want %v", tc.path, tc.line, got, tc.want)
		}
	}
}

func TestOutlineMarkdownFences(t *testing.T) {
	o := outliner{kind: outlineMarkdown}
	var got []string
	for _, l := range strings.Split("# A\n```sh\n# not a heading\n```\n## B\n~~~\n# no\n~~~\n### C", "\n") {
		if o.decl(l) {
			got = append(got, l)
		}
	}
	if want := []string{"# A", "## B", "### C"}; !slices.Equal(got, want) {
		t.Errorf("Markdown outline = %q, want %q", got, want)
	}
}

// Whatever the content, a summary stays within maxSummary and says where
// the result went.
func TestSummarizeBounded(t *testing.T) {
	long := strings.Repeat("ä", 10000)
	var decls, hunks, lines strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&decls, "%d\tfunc F%d_%s() {\n", i+1, i, strings.Repeat("x", i%300))
		fmt.Fprintf(&hunks, "--- a/f%d.go\n+++ b/f%d.go\n@@ -%d,3 +%d,4 @@ %s\n+x\n", i, i, i, i, long[:i%200*2])
		fmt.Fprintf(&lines, "%s %d\n", long[:i%500*2], i)
	}
	for _, kind := range []Kind{Other, Read, Diff, Search, Command, Fetch, Report} {
		for _, content := range []string{decls.String(), hunks.String(), lines.String(), long, strings.Repeat("\n", 5000)} {
			m := Message{Role: Tool, Content: content, Payload: Payload{Kind: kind, Path: long, Spill: long}}
			s, _ := Summarize(m)
			if len(s) > maxSummary || !utf8.ValidString(s) || !strings.HasSuffix(s, "]") {
				t.Errorf("Summarize(%v, %d bytes) = %d bytes ending %q, want at most %d bytes of UTF-8 ending with the marker", kind, len(content), len(s), tailUpTo(s, 40), maxSummary)
			}
		}
	}
}

func FuzzSummarize(f *testing.F) {
	f.Add("     1\tpackage a\n     2\tfunc F() {}\n", uint8(Read), "a.go", 0, 0, 0, "")
	f.Add("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", uint8(Diff), "", 0, 0, 0, "")
	f.Add("x.go:1:a\nx.go:2:b\n", uint8(Search), "a", 0, 0, 0, "/tmp/s")
	f.Add("ok\nFAIL\n", uint8(Command), "go test", 0, 0, 0, "")
	f.Add("\xff\xfe# T\n\n", uint8(Report), "", 1, 2, 3, "")
	f.Fuzz(func(t *testing.T, content string, kind uint8, path string, from, to, total int, spill string) {
		m := Message{Role: Tool, Content: content, Payload: Payload{Kind: Kind(kind % 8), Path: path, From: from, To: to, Total: total, Spill: spill}}
		s, keep := Summarize(m)
		if len(s) > maxSummary {
			t.Errorf("len(Summarize) = %d, want at most %d", len(s), maxSummary)
		}
		if !utf8.ValidString(s) {
			t.Errorf("Summarize = %q, not valid UTF-8", s)
		}
		if s2, keep2 := Summarize(m); s2 != s || keep2 != keep {
			t.Errorf("Summarize twice = %q, %v and %q, %v, want the same", s, keep, s2, keep2)
		}
		if !keep && (len(content) < keepBelow || len(s)*100 >= len(content)*keepPercent) {
			t.Errorf("Summarize(%d bytes) = %d bytes, keep false, want keep", len(content), len(s))
		}
	})
}

// A megabyte-long read of Go code, numbered cat -n style.
func BenchmarkSummarizeRead1MB(b *testing.B) {
	var sb strings.Builder
	for i := 1; sb.Len() < 1<<20; i++ {
		switch i % 10 {
		case 0:
			fmt.Fprintf(&sb, "%6d\tfunc (s *Server) Handle%d(ctx context.Context, req *Request) (*Response, error) {\n", i, i)
		case 9:
			fmt.Fprintf(&sb, "%6d\t}\n", i)
		default:
			fmt.Fprintf(&sb, "%6d\t\tif err := s.step(ctx, %d); err != nil { return nil, err }\n", i, i)
		}
	}
	m := Message{Role: Tool, Content: sb.String(), Payload: Payload{Kind: Read, Path: "server.go"}}
	b.SetBytes(int64(len(m.Content)))
	for b.Loop() {
		Summarize(m)
	}
}
