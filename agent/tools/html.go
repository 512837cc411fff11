package tools

import (
	"html"
	"net/url"
	"regexp"
	"strings"
)

// htmlToText turns an HTML page into readable text: scripts, styles and
// comments go, blocks become paragraphs, headings get #, list items -,
// and links keep their target in brackets after their text. It is a
// crude reader, not a parser: enough for documentation pages.
func htmlToText(src string, base *url.URL) string {
	r := htmlReader{base: base}
	for i := 0; i < len(src); {
		if src[i] != '<' {
			j := strings.IndexByte(src[i:], '<')
			if j < 0 {
				j = len(src) - i
			}
			r.w.text(html.UnescapeString(src[i:i+j]), r.pre > 0)
			i += j
			continue
		}
		rest := src[i:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			i += skipPast(rest, 4, "-->")
			continue
		case strings.HasPrefix(rest, "<!") || strings.HasPrefix(rest, "<?"):
			i += skipPast(rest, 2, ">")
			continue
		}
		j := 1
		closing := j < len(rest) && rest[j] == '/'
		if closing {
			j++
		}
		start := j
		for j < len(rest) && isNameByte(rest[j]) {
			j++
		}
		if j == start {
			r.w.text("<", r.pre > 0) // a lone '<' in the text
			i++
			continue
		}
		name := strings.ToLower(rest[start:j])
		end := tagEnd(rest, j)
		attrs := rest[j:end]
		i += min(end+1, len(rest))
		if !closing {
			switch name {
			case "script", "style", "noscript", "template", "svg", "iframe", "object":
				i += skipElement(src[i:], name)
				continue
			}
		}
		r.tag(name, attrs, closing)
	}
	return r.w.String()
}

// htmlReader is htmlToText's state: the text so far, and the elements
// open that change how text is written.
type htmlReader struct {
	w     textWriter
	base  *url.URL // what relative links resolve against; nil keeps them
	links []string // hrefs of the open <a> elements
	pre   int      // how many <pre> elements are open
}

// tag writes what the tag name (lower case) with its attributes, or its
// closing tag, means for the text: a break, a paragraph, a heading's #, a
// list item's -, an image's alt text, a link's target.
func (r *htmlReader) tag(name, attrs string, closing bool) {
	switch name {
	case "br":
		r.w.newline()
	case "p", "div", "section", "article", "header", "footer", "nav", "main", "aside", "table", "tr",
		"ul", "ol", "dl", "blockquote", "form", "figure", "figcaption", "hr", "title", "dt", "dd",
		"details", "summary", "body", "html":
		r.w.block()
	case "pre":
		r.w.block()
		if closing {
			r.pre = max(r.pre-1, 0)
		} else {
			r.pre++
		}
	case "h1", "h2", "h3", "h4", "h5", "h6":
		r.w.block()
		if !closing {
			r.w.raw(strings.Repeat("#", int(name[1]-'0')) + " ")
		}
	case "li":
		r.w.newline()
		if !closing {
			r.w.raw("- ")
		}
	case "td", "th":
		r.w.text(" ", false)
	case "img":
		if alt := attr(attrs, "alt"); alt != "" {
			r.w.text("[image: "+alt+"]", false)
		}
	case "a":
		if !closing {
			r.links = append(r.links, attr(attrs, "href"))
		} else if n := len(r.links); n > 0 {
			href := r.links[n-1]
			r.links = r.links[:n-1]
			if target := linkTarget(href, r.base); target != "" {
				r.w.text(" ["+target+"]", false)
			}
		}
	}
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == ':'
}

// skipPast returns the length of s up to and including the first sep
// after from, or all of s.
func skipPast(s string, from int, sep string) int {
	if k := strings.Index(s[from:], sep); k >= 0 {
		return from + k + len(sep)
	}
	return len(s)
}

// tagEnd finds the '>' that closes the tag whose attributes start at j,
// skipping quoted values.
func tagEnd(s string, j int) int {
	var quote byte
	for ; j < len(s); j++ {
		c := s[j]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return j
		}
	}
	return len(s)
}

// skipElement returns the length of s up to the end of the closing tag of
// name, or all of s.
func skipElement(s, name string) int {
	lower := strings.ToLower(s)
	k := strings.Index(lower, "</"+name)
	if k < 0 {
		return len(s)
	}
	return skipPast(s, k, ">")
}

var attrRe = regexp.MustCompile(`(?is)(?:^|\s)([a-z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))`)

// attr returns the value of the named attribute.
func attr(attrs, name string) string {
	for _, m := range attrRe.FindAllStringSubmatch(attrs, -1) {
		if strings.EqualFold(m[1], name) {
			return html.UnescapeString(m[2] + m[3] + m[4])
		}
	}
	return ""
}

// linkTarget resolves a link for the reader; in-page anchors and
// javascript: links are not worth showing.
func linkTarget(href string, base *url.URL) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
		return ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	return u.String()
}

// textWriter collects text, collapsing white space outside <pre> and
// turning block boundaries into blank lines.
type textWriter struct {
	b        strings.Builder
	newlines int  // pending line breaks
	space    bool // a pending space
}

func (w *textWriter) text(s string, pre bool) {
	if pre {
		w.flush()
		w.b.WriteString(s)
		return
	}
	for f := range strings.FieldsFuncSeq(s, isSpace) {
		if w.b.Len() > 0 && w.newlines == 0 && (w.space || startsSpace(s, f)) {
			w.b.WriteByte(' ')
		}
		w.space = false
		w.flush()
		w.b.WriteString(f)
		s = s[strings.Index(s, f)+len(f):]
	}
	if s != "" && strings.TrimFunc(s, isSpace) == "" {
		w.space = true
	}
}

func startsSpace(s, f string) bool {
	k := strings.Index(s, f)
	return k > 0
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\u00a0'
}

func (w *textWriter) raw(s string) {
	w.flush()
	w.b.WriteString(s)
}

func (w *textWriter) flush() {
	if w.b.Len() > 0 {
		for ; w.newlines > 0; w.newlines-- {
			w.b.WriteByte('\n')
		}
	}
	w.newlines = 0
}

func (w *textWriter) newline() { w.newlines = max(w.newlines, 1); w.space = false }
func (w *textWriter) block()   { w.newlines = 2; w.space = false }

func (w *textWriter) String() string {
	lines := strings.Split(w.b.String(), "\n")
	var out []string
	blank := 0
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			if blank++; blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
