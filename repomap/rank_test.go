package repomap

import (
	"testing"
)

// score is a symbol's score in a map of files (path → content), with
// focus.
func score(t *testing.T, files map[string]string, focus []string, path, name string) float64 {
	t.Helper()
	m := New()
	defer m.Close()
	for p, c := range files {
		m.Update(p, []byte(c))
	}
	m.SetFocus(focus...)
	fs := m.sorted()
	_, sc := rank(fs, m.focus)
	for i, f := range fs {
		if f.path != path {
			continue
		}
		for j, s := range f.syms {
			if s.Name == name {
				return sc[i][j]
			}
		}
	}
	t.Fatalf("no symbol %s in %s", name, path)
	return 0
}

// Each case compares two symbols' scores: hi must outrank lo.
func TestRanking(t *testing.T) {
	type sym struct{ path, name string }
	for _, tc := range []struct {
		name   string
		files  map[string]string
		focus  []string
		hi, lo sym
	}{{
		name: "used by more files ranks higher",
		files: map[string]string{
			"lib/lib.go": "package lib\nfunc Popular() {}\nfunc Rare() {}\n",
			"a/a.go":     "package a\nfunc A() { lib.Popular(); lib.Rare() }\n",
			"b/b.go":     "package b\nfunc B() { lib.Popular() }\n",
			"c/c.go":     "package c\nfunc C() { lib.Popular() }\n",
		},
		hi: sym{"lib/lib.go", "Popular"}, lo: sym{"lib/lib.go", "Rare"},
	}, {
		name: "used ranks above unused",
		files: map[string]string{
			"lib.py": "def used(): pass\ndef unused(): pass\n",
			"app.py": "from lib import used\nused()\n",
		},
		hi: sym{"lib.py", "used"}, lo: sym{"lib.py", "unused"},
	}, {
		name: "a function counts calls, not mentions",
		files: map[string]string{
			"lib.go":  "package p\nfunc window() int { return 1 }\nfunc budget() int { return 2 }\n",
			"user.go": "package p\nfunc f(window int) int { return budget() + window + window }\n",
		},
		hi: sym{"lib.go", "budget"}, lo: sym{"lib.go", "window"},
	}, {
		name: "a type counts every mention",
		files: map[string]string{
			"types.ts": "export interface Shape {}\nexport interface Unused {}\n",
			"use.ts":   "let s: Shape;\n",
		},
		hi: sym{"types.ts", "Shape"}, lo: sym{"types.ts", "Unused"},
	}, {
		name: "an unexported Go name links only its own package",
		files: map[string]string{
			"p/p.go":   "package p\nfunc Exported() {}\nfunc helper() {}\n",
			"q/q.go":   "package q\nfunc Q() { helper() }\n",
			"r/r.go":   "package r\nfunc R() { helper() }\n",
			"p/use.go": "package p\nfunc U() { Exported() }\n",
		},
		hi: sym{"p/p.go", "Exported"}, lo: sym{"p/p.go", "helper"},
	}, {
		name: "a Go test file's names are not used by the package",
		files: map[string]string{
			"p/p_test.go":     "package p\nfunc fixture() {}\nfunc Fixture2() {}\n",
			"p/other_test.go": "package p\nfunc T() { Fixture2() }\n",
			"p/p.go":          "package p\nfunc F() { fixture(); fixture(); fixture(); fixture() }\n",
		},
		hi: sym{"p/p_test.go", "Fixture2"}, lo: sym{"p/p_test.go", "fixture"},
	}, {
		name: "a focus file's symbols rise above others' unused ones",
		files: map[string]string{
			"focus.py": "def mine(): pass\n",
			"other.py": "def theirs(): pass\n",
		},
		focus: []string{"focus.py"},
		hi:    sym{"focus.py", "mine"}, lo: sym{"other.py", "theirs"},
	}, {
		name: "a focus file's symbols rise above others' used ones",
		files: map[string]string{
			"focus.py": "def mine(): pass\ndef also_mine(): pass\n",
			"lib.py":   "def used(): pass\n",
			"a.py":     "used()\n",
			"b.py":     "used()\n",
		},
		focus: []string{"focus.py"},
		hi:    sym{"focus.py", "also_mine"}, lo: sym{"lib.py", "used"},
	}, {
		name: "what a focus file uses rises",
		files: map[string]string{
			"focus.rs": "fn main() { helper(); }\n",
			"a.rs":     "pub fn helper() {}\n",
			"b.rs":     "pub fn other() {}\n",
			"c.rs":     "fn c() { other(); }\n",
		},
		focus: []string{"focus.rs"},
		hi:    sym{"a.rs", "helper"}, lo: sym{"b.rs", "other"},
	}} {
		hi := score(t, tc.files, tc.focus, tc.hi.path, tc.hi.name)
		lo := score(t, tc.files, tc.focus, tc.lo.path, tc.lo.name)
		if hi <= lo {
			t.Errorf("%s: score(%s %s) = %g, not above score(%s %s) = %g", tc.name, tc.hi.path, tc.hi.name, hi, tc.lo.path, tc.lo.name, lo)
		}
	}
}

// Ranks are a probability distribution: they add up to 1.
func TestRankSumsToOne(t *testing.T) {
	files := corpus(t)
	m := build(files)
	defer m.Close()
	for _, focus := range [][]string{nil, {files[0].Name}} {
		m.SetFocus(focus...)
		r, _ := rank(m.sorted(), m.focus)
		sum := 0.0
		for _, x := range r {
			sum += x
		}
		if sum < 0.999999 || sum > 1.000001 {
			t.Errorf("focus %v: ranks add up to %v, want 1", focus, sum)
		}
	}
}
