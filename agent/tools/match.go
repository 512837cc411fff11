package tools

import (
	"strings"
	"unicode/utf8"
)

// matchSegment reports whether name matches the wildcard pattern of one
// path segment: * matches any run of characters, ? one character,
// [abc], [a-z], [!a] and [^a] one character of (or not of) a class, and a
// backslash makes the next character literal. A class without its closing
// ] is taken literally. Neither pattern nor name contains a slash.
func matchSegment(pattern, name string) bool {
	// Backtracking over the last star is enough: a later star can absorb
	// whatever an earlier one would have.
	px, nx := 0, 0
	starP, starN := -1, -1
	for px < len(pattern) || nx < len(name) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				for px < len(pattern) && pattern[px] == '*' {
					px++
				}
				starP, starN = px, nx
				continue
			case '?':
				if nx < len(name) {
					_, w := utf8.DecodeRuneInString(name[nx:])
					px++
					nx += w
					continue
				}
			case '[':
				if nx < len(name) {
					r, w := utf8.DecodeRuneInString(name[nx:])
					if ok, plen, valid := matchClass(pattern[px:], r); valid {
						if ok {
							px += plen
							nx += w
							continue
						}
						break
					}
				}
				// Not a class: a literal '['.
				if nx < len(name) && name[nx] == '[' {
					px++
					nx++
					continue
				}
			case '\\':
				if px+1 < len(pattern) {
					if nx < len(name) && name[nx] == pattern[px+1] {
						px += 2
						nx++
						continue
					}
					break
				}
				fallthrough // a trailing backslash is literal
			default:
				if nx < len(name) && name[nx] == c {
					px++
					nx++
					continue
				}
			}
		}
		if starP >= 0 && starN < len(name) {
			_, w := utf8.DecodeRuneInString(name[starN:])
			starN += w
			px, nx = starP, starN
			continue
		}
		return false
	}
	return true
}

// matchClass matches r against the class at the start of p ("[...]"). It
// returns whether r is in it, the class's length in p, and whether p
// starts with a complete class at all.
func matchClass(p string, r rune) (ok bool, n int, valid bool) {
	i := 1
	negate := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negate = true
		i++
	}
	first := true
	for i < len(p) {
		if p[i] == ']' && !first {
			return ok != negate, i + 1, true
		}
		first = false
		lo, w := classChar(p, i)
		if w == 0 {
			return false, 0, false
		}
		i += w
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			hi, w = classChar(p, i+1)
			if w == 0 {
				return false, 0, false
			}
			i += 1 + w
		}
		if lo <= r && r <= hi {
			ok = true
		}
	}
	return false, 0, false
}

// classChar decodes the (possibly escaped) character at p[i].
func classChar(p string, i int) (rune, int) {
	if p[i] == '\\' {
		if i+1 >= len(p) {
			return 0, 0
		}
		r, w := utf8.DecodeRuneInString(p[i+1:])
		return r, 1 + w
	}
	r, w := utf8.DecodeRuneInString(p[i:])
	return r, w
}

// matchSegments matches a slash-split path against slash-split pattern
// segments, where a "**" segment matches any number of path segments: at
// least one when trailingNeedsOne is set and it is the last segment
// (gitignore's "dir/**" matches what is inside dir, not dir), otherwise
// zero or more.
func matchSegments(pat, path []string, trailingNeedsOne bool) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return !trailingNeedsOne || len(path) > 0
			}
			for i := 0; i <= len(path); i++ {
				if matchSegments(rest, path[i:], trailingNeedsOne) {
					return true
				}
			}
			return false
		}
		if len(path) == 0 || !matchSegment(pat[0], path[0]) {
			return false
		}
		pat, path = pat[1:], path[1:]
	}
	return len(path) == 0
}

// globPattern is a compiled glob: the brace alternatives of one pattern,
// each split into segments.
type globPattern struct {
	alts [][]string
}

// compileGlob expands {a,b} alternatives (nested ones too) and splits the
// pattern into segments; empty segments ("a//b", a trailing "/") vanish.
func compileGlob(pattern string) globPattern {
	var g globPattern
	for _, alt := range expandBraces(pattern, 0) {
		var segs []string
		for s := range strings.SplitSeq(alt, "/") {
			if s != "" && s != "." {
				segs = append(segs, s)
			}
		}
		g.alts = append(g.alts, segs)
	}
	return g
}

// match reports whether the slash-separated relative path matches.
func (g globPattern) match(rel string) bool {
	segs := strings.Split(rel, "/")
	for _, a := range g.alts {
		if matchSegments(a, segs, false) {
			return true
		}
	}
	return false
}

// mayContain reports whether files below the directory dir (relative,
// slash-separated; "" for the root) could match, to prune a walk.
func (g globPattern) mayContain(dir string) bool {
	if dir == "" {
		return true
	}
	segs := strings.Split(dir, "/")
	for _, a := range g.alts {
		if prefixMatch(a, segs) {
			return true
		}
	}
	return false
}

func prefixMatch(pat, dir []string) bool {
	for len(dir) > 0 {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			return true
		}
		if !matchSegment(pat[0], dir[0]) {
			return false
		}
		pat, dir = pat[1:], dir[1:]
	}
	return len(pat) > 0
}

// maxBraceAlternatives bounds the expansion of {a,b}{c,d}… patterns.
const maxBraceAlternatives = 256

// expandBraces expands the first top-level {…,…} group of p, recursively.
// A group without a comma, or unbalanced, stays literal.
func expandBraces(p string, depth int) []string {
	start, end := -1, -1
	level := 0
	commas := []int(nil)
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if level == 0 {
				start = i
				commas = commas[:0]
			}
			level++
		case ',':
			if level == 1 {
				commas = append(commas, i)
			}
		case '}':
			if level > 0 {
				level--
				if level == 0 {
					if len(commas) > 0 {
						end = i
					} else {
						start = -1
					}
				}
			}
		}
		if end >= 0 {
			break
		}
	}
	if start < 0 || end < 0 || depth > 8 {
		return []string{p}
	}
	var parts []string
	prev := start + 1
	for _, c := range commas {
		parts = append(parts, p[prev:c])
		prev = c + 1
	}
	parts = append(parts, p[prev:end])
	var out []string
	for _, part := range parts {
		for _, e := range expandBraces(p[:start]+part+p[end+1:], depth+1) {
			if len(out) >= maxBraceAlternatives {
				return out
			}
			out = append(out, e)
		}
	}
	return out
}
