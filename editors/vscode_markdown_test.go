package editors

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestVSCodeMarkdown runs the panel's Markdown renderer (src/markdown.ts,
// compiled; it needs Node alone) on answers a model could write: what it
// renders, and that nothing of the model's becomes markup the page runs
// or follows — no element but the renderer's own, no attribute of the
// model's, a link only as data (a workspace file, or an http(s) page).
func TestVSCodeMarkdown(t *testing.T) {
	ext := vscodeExtension(t)
	node := need(t, "node")
	render := func(md string) string {
		t.Helper()
		out, err := exec.Command(node, "-e", `process.stdout.write(require(process.argv[1]).render(process.argv[2]))`,
			filepath.Join(ext, "out", "markdown.js"), md).CombinedOutput()
		if err != nil {
			t.Fatalf("node: %v\n%s", err, out)
		}
		return string(out)
	}
	for md, want := range map[string]string{
		"## Done\n\n- one\n- two":               "<h3>Done</h3>\n<ul><li>one</li><li>two</li></ul>",
		"1. a\n2. b":                            "<ol><li>a</li><li>b</li></ol>",
		"See `main.go:12`.":                     `<p>See <a class="file" href="#" data-path="main.go" data-line="12" title="Open main.go at line 12"><code>main.go:12</code></a>.</p>`,
		"**bold** and snake_case_name and *it*": "<p><strong>bold</strong> and snake_case_name and <em>it</em></p>",
		"```go\nreturn 42 // answer\n```":       `<pre class="code" data-lang="go"><code><span class="tok-k">return</span> <span class="tok-n">42</span> <span class="tok-c">// answer</span></code></pre>`,
		"[docs](https://example.test/?a=1&b=2)": `<p><a class="ext" href="#" data-href="https://example.test/?a=1&amp;b=2" title="https://example.test/?a=1&amp;b=2">docs</a></p>`,
	} {
		if got := render(md); got != want {
			t.Errorf("render(%q) =\n%s\nwant\n%s", md, got, want)
		}
	}
	// The renderer's own tags and attributes, and nothing else.
	tag := regexp.MustCompile(`<(/?)([a-z0-9]+)((?:\s+[a-z-]+="[^"]*")*)\s*>`)
	allowed := map[string]bool{"h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "p": true, "br": true, "ul": true, "ol": true, "li": true,
		"pre": true, "code": true, "span": true, "strong": true, "em": true, "a": true, "blockquote": true, "hr": true}
	attr := regexp.MustCompile(`([a-z-]+)="([^"]*)"`)
	for _, md := range []string{
		`<script>alert(1)</script>`,
		`<img src=x onerror="alert(1)">`,
		"[x](javascript:alert(1))",
		"[x](command:workbench.action.terminal.new)",
		`[x](https://a.test/"onmouseover="alert(1))`,
		"`<b>` and **<i onclick=1>x</i>**",
		"```html\n<script>alert(1)</script>\n```",
		"# <svg onload=alert(1)>",
		"- [a](\"><script>x</script>)",
		"> <iframe src=//a.test></iframe>",
		`[f](../../etc/passwd:1)`,
	} {
		html := render(md)
		rest := tag.ReplaceAllStringFunc(html, func(m string) string {
			p := tag.FindStringSubmatch(m)
			if !allowed[p[2]] {
				t.Errorf("render(%q) made a <%s>: %s", md, p[2], html)
			}
			for _, a := range attr.FindAllStringSubmatch(p[3], -1) {
				switch a[1] {
				case "class", "title", "data-path", "data-line", "data-lang":
				case "href":
					if a[2] != "#" {
						t.Errorf("render(%q) made an href %q: %s", md, a[2], html)
					}
				case "data-href":
					if !strings.HasPrefix(a[2], "https://") && !strings.HasPrefix(a[2], "http://") {
						t.Errorf("render(%q) made a link to %q: %s", md, a[2], html)
					}
				default:
					t.Errorf("render(%q) made an attribute %s: %s", md, a[1], html)
				}
			}
			return ""
		})
		if strings.ContainsAny(rest, "<>") {
			t.Errorf("render(%q) left markup outside its own tags: %s", md, html)
		}
	}
}
