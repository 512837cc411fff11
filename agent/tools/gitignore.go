package tools

import (
	"bytes"
	"strings"
)

// ignoreRule is one pattern line of a .gitignore file.
type ignoreRule struct {
	segs     []string // the pattern, split at slashes
	negate   bool     // "!pattern" re-includes what an earlier rule excluded
	dirOnly  bool     // "pattern/" matches directories only
	anchored bool     // a slash at the start or inside ties it to the file's directory
}

// ignoreFile holds the rules of one .gitignore (or .git/info/exclude).
type ignoreFile struct {
	base  string // its directory, slash-separated, relative to the folder; "" for the root
	rules []ignoreRule
}

// parseIgnore reads gitignore rules: blank lines and # comments are
// skipped, trailing spaces are dropped unless escaped with a backslash, a
// leading backslash escapes # and !.
func parseIgnore(base string, data []byte) *ignoreFile {
	f := &ignoreFile{base: base}
	for raw := range bytes.SplitSeq(data, []byte("\n")) {
		line := strings.TrimSuffix(string(raw), "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		var r ignoreRule
		if line != "" && line[0] == '!' {
			r.negate = true
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored = true
			line = strings.TrimLeft(line, "/")
		}
		for s := range strings.SplitSeq(line, "/") {
			if s != "" {
				r.segs = append(r.segs, s)
			}
		}
		if len(r.segs) == 0 {
			continue
		}
		f.rules = append(f.rules, r)
	}
	return f
}

// match reports whether a rule of f matches rel (relative to the folder,
// slash-separated) and, if so, whether the last such rule ignores it.
func (f *ignoreFile) match(rel string, isDir bool) (matched, ignored bool) {
	sub := rel
	if f.base != "" {
		var ok bool
		if sub, ok = strings.CutPrefix(rel, f.base+"/"); !ok {
			return false, false
		}
	}
	var segs []string
	for i := len(f.rules) - 1; i >= 0; i-- {
		r := &f.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		var hit bool
		if r.anchored {
			if segs == nil {
				segs = strings.Split(sub, "/")
			}
			hit = matchSegments(r.segs, segs, true)
		} else {
			hit = matchSegment(r.segs[0], sub[strings.LastIndexByte(sub, '/')+1:])
		}
		if hit {
			return true, !r.negate
		}
	}
	return false, false
}

// ignoreStack is the ignore files that apply in a directory, the root's
// first: a deeper file overrides a higher one, and .git/info/exclude
// (when present) comes before them all.
type ignoreStack []*ignoreFile

// ignored reports whether rel itself is ignored by the stack. A walk never
// enters an ignored directory, so what lies below one is ignored too,
// whatever a negation says (as in git).
func (st ignoreStack) ignored(rel string, isDir bool) bool {
	for i := len(st) - 1; i >= 0; i-- {
		if m, ign := st[i].match(rel, isDir); m {
			return ign
		}
	}
	return false
}
