package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// mixedModules is how many files the mixed tree has per language, and
// mixedFuncs how many functions each defines.
const (
	mixedModules = 50
	mixedFuncs   = 20
)

// mixedLanguages generate one file of the mixed tree: module i's
// functions, each calling function j of module k (another module).
var mixedLanguages = []struct {
	path string // with %d for the module
	head string // with %d for the module
	fn   string // with %[1]d the module, %[2]d the function, %[3]d the module called
	tail string
}{
	{"go/m%d/m.go", "package m%d\n\n", "// F%[1]d_%[2]d counts down.\nfunc F%[1]d_%[2]d(n int) int {\n\tif n > 0 {\n\t\treturn F%[3]d_%[2]d(n - 1)\n\t}\n\treturn n\n}\n\n", ""},
	{"py/m%d.py", "\"\"\"Module %d.\"\"\"\n\n", "def f%[1]d_%[2]d(n):\n    \"\"\"Counts down.\"\"\"\n    return f%[3]d_%[2]d(n - 1) if n else 0\n\n\n", ""},
	{"js/m%d.js", "// Module %d.\n\n", "/** Counts down. */\nexport function f%[1]d_%[2]d(n) {\n  return n ? f%[3]d_%[2]d(n - 1) : 0;\n}\n\n", ""},
	{"ts/m%d.ts", "// Module %d.\n\n", "/** Counts down. */\nexport function f%[1]d_%[2]d(n: number): number {\n  return n ? f%[3]d_%[2]d(n - 1) : 0;\n}\n\n", ""},
	{"rs/m%d.rs", "//! Module %d.\n\n", "/// Counts down.\npub fn f%[1]d_%[2]d(n: u32) -> u32 {\n    if n > 0 { f%[3]d_%[2]d(n - 1) } else { 0 }\n}\n\n", ""},
	{"java/M%d.java", "package mixed;\n\n/** Module %[1]d. */\npublic final class M%[1]d {\n", "    /** Counts down. */\n    public static int f%[1]d_%[2]d(int n) {\n        return n > 0 ? M%[3]d.f%[3]d_%[2]d(n - 1) : 0;\n    }\n\n", "}\n"},
	{"c/m%d.c", "/* Module %d. */\n#include \"mixed.h\"\n\n", "/* Counts down. */\nint\nf%[1]d_%[2]d(int n)\n{\n    return n > 0 ? f%[3]d_%[2]d(n - 1) : 0;\n}\n\n", ""},
	{"c/m%d.h", "/* Module %d. */\n#pragma once\n\n", "int f%[1]d_%[2]d(int n);\n", ""},
	{"cpp/m%d.cpp", "// Module %d.\n#include \"mixed.hpp\"\n\nnamespace mixed {\n\n", "// Counts down.\nint C::f%[1]d_%[2]d(int n) const {\n    return n > 0 ? C().f%[3]d_%[2]d(n - 1) : 0;\n}\n\n", "} // namespace mixed\n"},
	{"cs/M%d.cs", "// Module %d.\nnamespace Mixed\n{\n    public static partial class C\n    {\n", "        /// <summary>Counts down.</summary>\n        public static int F%[1]d_%[2]d(int n) => n > 0 ? F%[3]d_%[2]d(n - 1) : 0;\n\n", "    }\n}\n"},
	{"rb/m%d.rb", "# Module %d.\nmodule Mixed\n", "  # Counts down.\n  def self.f%[1]d_%[2]d(n)\n    n > 0 ? f%[3]d_%[2]d(n - 1) : 0\n  end\n\n", "end\n"},
	{"php/m%d.php", "<?php\n// Module %d.\n\n", "/** Counts down. */\nfunction f%[1]d_%[2]d(int $n): int\n{\n    return $n > 0 ? f%[3]d_%[2]d($n - 1) : 0;\n}\n\n", ""},
	{"sh/m%d.sh", "#!/bin/sh\n# Module %d.\n\n", "# Counts down.\nf%[1]d_%[2]d() {\n    [ \"$1\" -gt 0 ] && f%[3]d_%[2]d $(( $1 - 1 ))\n}\n\n", ""},
}

// writeMixedTree writes a tree of files in every language the map
// parses, the same bytes every time: mixedModules generated modules per
// language whose functions call each other's, with the golden inputs of
// repomap's extraction tests (real code of each language) and the
// projects of testdata/map beside them. It returns the number of files
// and bytes.
func writeMixedTree(b *testing.B, dir string) (files, size int) {
	b.Helper()
	write := func(name string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		files++
		size += len(data)
	}
	for _, l := range mixedLanguages {
		for i := range mixedModules {
			var s strings.Builder
			fmt.Fprintf(&s, l.head, i)
			for j := range mixedFuncs {
				fmt.Fprintf(&s, l.fn, i, j, (i*7+j+1)%mixedModules)
			}
			s.WriteString(l.tail)
			write(fmt.Sprintf(l.path, i), []byte(s.String()))
		}
	}
	for _, pattern := range []string{"../../repomap/testdata/extract/*.txtar", "testdata/map/*.txtar"} {
		paths, err := filepath.Glob(pattern)
		if err != nil || len(paths) == 0 {
			b.Fatalf("no archives %s (%v)", pattern, err)
		}
		for _, path := range paths {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				b.Fatal(err)
			}
			base := "real/" + filepath.Base(filepath.Dir(path)) + "-" + strings.TrimSuffix(filepath.Base(path), ".txtar")
			for _, f := range ar.Files {
				if f.Name != "symbols" && f.Name != "want" {
					write(base+"/"+f.Name, f.Data)
				}
			}
		}
	}
	return files, size
}

// `map` on a large tree in thirteen languages: every file read, parsed
// and ranked, the map rendered at the default budget.
func BenchmarkMapMixedTree(b *testing.B) {
	dir := b.TempDir()
	files, size := writeMixedTree(b, dir)
	// Whole, the map has the definitions of every language's modules.
	var whole strings.Builder
	if code := mapMain(context.Background(), []string{"--budget", "100000000", dir}, noEnv, &whole, io.Discard); code != 0 {
		b.Fatalf("map: exit %d", code)
	}
	for _, l := range mixedLanguages {
		file := filepath.ToSlash(filepath.Join(dir, fmt.Sprintf(l.path, 3))) + "\n"
		at := strings.Index(whole.String(), file)
		if at < 0 || !strings.HasPrefix(whole.String()[at+len(file):], "  ") {
			b.Fatalf("the map of the mixed tree lacks %s or its definitions", file)
		}
	}
	for b.Loop() {
		if code := mapMain(context.Background(), []string{dir}, noEnv, io.Discard, io.Discard); code != 0 {
			b.Fatalf("map: exit %d", code)
		}
	}
	b.ReportMetric(float64(files), "files")
	b.ReportMetric(float64(size)/float64(files), "src-B/file")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(files), "ns/file")
}
