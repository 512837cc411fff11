package synth

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// sayRead sets one of the assistant's lines that announce a read.
func (b *builder) sayRead() {
	b.say("%s", b.pick([]string{
		"Reading the file to see how it is put together.",
		"I'll read this file whole before changing anything.",
		"Let me look at the implementation.",
		"The tests for this live in the next file; reading it.",
		"Checking how this file handles it.",
	}))
}

// readTarget picks a file to read: the focus package most of the time.
func (b *builder) readTarget() string {
	var pool []string
	if b.rng.Float64() < 0.7 {
		pool = b.src.goFiles(b.spec.focus, true)
	} else {
		pool = b.src.goFiles("", true)
	}
	var fit []string
	for _, p := range pool {
		if n := strings.Count(b.files[p], "\n"); n >= 100 {
			fit = append(fit, p)
		}
	}
	return b.pick(fit)
}

// readFile reads a file whole, or its first 1000 lines when it is longer.
func (b *builder) readFile(n int, p string) {
	lines := fileLines(b.files[p])
	total := len(lines)
	args := map[string]any{"path": p}
	if total > 1000 {
		lines = lines[:1000]
		args["offset"], args["limit"] = 1, 1000
	}
	if !slices.Contains(b.read, p) {
		b.read = append(b.read, p)
	}
	b.call(n, "read", args, numbered(lines, 1), contextwin.Payload{Kind: contextwin.Read, Path: p, From: 1, To: len(lines), Total: total})
}

// readRange reads 40–160 lines of a file read before.
func (b *builder) readRange(n int) {
	p := b.readTarget()
	if len(b.read) > 0 {
		p = b.read[b.rng.IntN(len(b.read))]
	}
	lines := fileLines(b.files[p])
	count := min(len(lines), 40+b.rng.IntN(120))
	from := 1 + b.rng.IntN(len(lines)-count+1)
	b.call(n, "read", map[string]any{"path": p, "offset": from, "limit": count}, numbered(lines[from-1:from-1+count], from),
		contextwin.Payload{Kind: contextwin.Read, Path: p, From: from, To: from + count - 1, Total: len(lines)})
}

// identRe matches camel-case identifiers, the targets of small greps.
var identRe = regexp.MustCompile(`\b[a-z]+[A-Z][A-Za-z]+\b|\b[A-Z][a-z]+[A-Z][A-Za-z]+\b`)

// grepSmall searches for an identifier of a file read: a few matches.
func (b *builder) grepSmall(n int) {
	src := b.files[b.readTarget()]
	ids := identRe.FindAllString(src, -1)
	pattern := "Plan"
	for range 20 * min(len(ids), 1) { // none to pick from a file without one
		pattern = b.pick(ids)
		if c := len(b.grep(pattern, "", 1000)); c >= 2 && c <= 40 {
			break
		}
	}
	b.call(n, "grep", map[string]any{"pattern": pattern}, b.grepText(pattern, ""), contextwin.Payload{Kind: contextwin.Search, Path: pattern})
}

// floods are the patterns of grep floods: hundreds of matches each.
var floods = []string{`err != nil`, `return `, `func \(`, `:= `, `t\.Errorf`, `if `, `json:"`, `fmt\.`, `strings\.`, `\bs\.`}

// grepFlood searches for something everywhere: hundreds of matches.
func (b *builder) grepFlood(n int) {
	pattern := b.pick(floods)
	dir := ""
	if b.rng.Float64() < 0.5 {
		dir = b.spec.focus
	}
	args := map[string]any{"pattern": pattern}
	if dir != "" {
		args["path"] = dir
	}
	b.call(n, "grep", args, b.grepText(pattern, dir), contextwin.Payload{Kind: contextwin.Search, Path: pattern})
}

// grep lists the matches of pattern in the Go and Markdown files under dir
// ("" for all) as path:line:text, at most limit. No pattern matches across
// a line end (none has \s, \n or (?s)).
func (b *builder) grep(pattern, dir string, limit int) []string {
	re := regexp.MustCompile(pattern)
	var out []string
	for _, p := range b.src.paths {
		if dir != "" && !strings.HasPrefix(p, dir+"/") {
			continue
		}
		if !strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, ".md") {
			continue
		}
		// A file no line of which matches is skipped whole: the patterns
		// never match across a line end, so the file matches only if a
		// line does.
		if !re.MatchString(b.files[p]) {
			continue
		}
		for i, l := range fileLines(b.files[p]) {
			if re.MatchString(l) {
				out = append(out, fmt.Sprintf("%s:%d:%s", p, i+1, l))
				if len(out) == limit {
					return out
				}
			}
		}
	}
	return out
}

// maxMatches is where the grep tool stops, as agents' search tools do.
const maxMatches = 400

// grepText is the grep tool's result: the matches, stopped at maxMatches.
func (b *builder) grepText(pattern, dir string) string {
	m := b.grep(pattern, dir, maxMatches+1)
	if len(m) == 0 {
		return "No matches found."
	}
	if len(m) > maxMatches {
		return strings.Join(m[:maxMatches], "\n") + fmt.Sprintf("\n[stopped after %d matches; narrow the pattern or the path to see the rest]\n", maxMatches)
	}
	return strings.Join(m, "\n") + "\n"
}

// listDir lists a directory as ls -la does.
func (b *builder) listDir(n int, dir string) {
	var entries []string
	seen := map[string]bool{}
	for _, p := range b.src.paths {
		rel := p
		if dir != "" {
			var ok bool
			if rel, ok = strings.CutPrefix(p, dir+"/"); !ok {
				continue
			}
		}
		name, _, isDir := strings.Cut(rel, "/")
		if seen[name] {
			continue
		}
		seen[name] = true
		if isDir {
			entries = append(entries, fmt.Sprintf("drwxr-xr-x  %2d dev dev  4096 Nov 29 21:17 %s", 2+b.rng.IntN(6), name))
		} else {
			entries = append(entries, fmt.Sprintf("-rw-r--r--   1 dev dev %5d Nov 29 21:17 %s", len(b.files[p]), name))
		}
	}
	out := fmt.Sprintf("total %d\ndrwxr-xr-x  %d dev dev  4096 Nov 29 21:17 .\ndrwxr-xr-x  9 dev dev  4096 Nov 29 21:17 ..\n",
		4*len(entries), 2+len(entries)) + strings.Join(entries, "\n") + "\n"
	cmd := "ls -la"
	if dir != "" {
		cmd += " " + dir
	}
	b.call(n, "bash", map[string]any{"command": cmd}, out, contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}

// readSmall reads 15–60 lines of a file of the focus package, fewer when
// the lines are long: never more than smallMax bytes.
func (b *builder) readSmall(n int) {
	var pool []string
	for _, p := range b.src.goFiles(b.spec.focus, true) {
		if strings.Count(b.files[p], "\n") >= 60 {
			pool = append(pool, p)
		}
	}
	p := b.pick(pool)
	lines := fileLines(b.files[p])
	count := 15 + b.rng.IntN(46)
	from := 1 + b.rng.IntN(len(lines)-count+1)
	text := numbered(lines[from-1:from-1+count], from)
	for len(text) > smallMax {
		count /= 2
		text = numbered(lines[from-1:from-1+count], from)
	}
	b.call(n, "read", map[string]any{"path": p, "offset": from, "limit": count}, text,
		contextwin.Payload{Kind: contextwin.Read, Path: p, From: from, To: from + count - 1, Total: len(lines)})
}

// grepTargeted searches for an identifier of the focus package with 2–25
// matches and a result under smallMax; false when none was found.
func (b *builder) grepTargeted(n int) bool {
	files := b.src.goFiles(b.spec.focus, true)
	for range 20 {
		ids := identRe.FindAllString(b.files[b.pick(files)], -1)
		if len(ids) == 0 {
			continue
		}
		pattern := b.pick(ids)
		dir := ""
		if b.rng.Float64() < 0.5 {
			dir = b.spec.focus
		}
		m := b.grep(pattern, dir, 26)
		if len(m) < 2 || len(m) > 25 {
			continue
		}
		text := b.grepText(pattern, dir)
		if len(text) > smallMax {
			continue
		}
		args := map[string]any{"pattern": pattern}
		if dir != "" {
			args["path"] = dir
		}
		b.call(n, "grep", args, text, contextwin.Payload{Kind: contextwin.Search, Path: pattern})
		return true
	}
	return false
}

// readWhole reads a file whole, however long: the file an unseen task
// names.
func (b *builder) readWhole(n int, p string) {
	lines := fileLines(b.files[p])
	if !slices.Contains(b.read, p) {
		b.read = append(b.read, p)
	}
	b.call(n, "read", map[string]any{"path": p}, numbered(lines, 1),
		contextwin.Payload{Kind: contextwin.Read, Path: p, From: 1, To: len(lines), Total: len(lines)})
}
