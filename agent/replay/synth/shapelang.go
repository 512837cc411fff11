package synth

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The languages of the shaped sessions (shapes.go): a codebase that is
// not Go, its test runner's logs and its stack traces. Python's is the
// standard library's sources with pytest logs, JavaScript's npm's own
// sources (lib and its bundled node_modules) with node's TAP logs.

// lang is what a shaped session needs to know of its codebase's language.
type lang struct {
	name    string // "python", "javascript"
	ext     string // the source files' suffix
	comment string // a line comment's marker
	// funcRe matches a function's definition, its name in the first
	// non-empty group.
	funcRe *regexp.Regexp
	// version is the interpreter a log names.
	version string
	system  string
}

var python = &lang{
	name: "python", ext: ".py", comment: "# ", version: "Python 3.11.2",
	funcRe: regexp.MustCompile(`(?m)^\s*(?:async\s+)?def ([a-z_][a-z0-9_]{2,})\(`),
	system: strings.ReplaceAll(systemPromptStd, "You work in the Go distribution's source tree (GOROOT/src): the standard library and the go command.",
		"You work in a Python 3.11 codebase: a package of the standard library, tested with pytest.") + pyConventions,
}

var javascript = &lang{
	name: "javascript", ext: ".js", comment: "// ", version: "Node.js v20",
	funcRe: regexp.MustCompile(`(?m)(?:function\s+([A-Za-z_]\w{2,})\s*\(|^\s*(?:async\s+)?([a-z_]\w{2,})\s*\([^)]*\)\s*\{)`),
	system: strings.ReplaceAll(systemPromptStd, "You work in the Go distribution's source tree (GOROOT/src): the standard library and the go command.",
		"You work in a JavaScript codebase (Node.js 20, CommonJS): npm's own sources and the packages it bundles, tested with node --test (TAP).") + jsConventions,
}

const pyConventions = `
- Python: PEP 8, type hints on new public functions, pytest tests named test_*.`

const jsConventions = `
- JavaScript: 'use strict' CommonJS, standard style, tests under test/ run by node --test.`

// PythonRoot is the directory of Python's standard library sources, from
// the python3 on PATH.
func PythonRoot() (string, error) {
	out, err := exec.Command("python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])").Output()
	if err != nil {
		return "", fmt.Errorf("python3 (for its standard library's sources): %w", err)
	}
	root := strings.TrimSpace(string(out))
	if _, err := os.Stat(filepath.Join(root, "json", "decoder.py")); err != nil {
		return "", fmt.Errorf("python3's standard library sources: %w", err)
	}
	return root, nil
}

// NpmRoot is the directory of npm's sources, from npm root -g (where node
// installs global packages: /usr/lib/node_modules on Debian's and
// NodeSource's packages).
func NpmRoot() (string, error) {
	out, err := exec.Command("npm", "root", "-g").Output()
	if err != nil {
		return "", fmt.Errorf("npm root -g (for npm's own sources): %w", err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "npm")
	if _, err := os.Stat(filepath.Join(root, "lib", "npm.js")); err != nil {
		return "", fmt.Errorf("npm's sources: %w", err)
	}
	return root, nil
}

// langTrees lists the directories of root a shaped session may work in:
// for Python the packages of the standard library, for JavaScript npm's
// lib and the packages it bundles; each of minTree to 3 MB of source.
func langTrees(l *lang, root string) ([]string, error) {
	var dirs []string
	switch l {
	case python:
		top, err := os.ReadDir(root)
		if err != nil {
			return nil, err
		}
		for _, e := range top {
			if n := e.Name(); e.IsDir() && n != "test" && n != "site-packages" && n != "dist-packages" && n != "idlelib" &&
				n != "lib2to3" && n != "pydoc_data" && !strings.HasPrefix(n, "__") && !strings.HasPrefix(n, "config-") {
				dirs = append(dirs, n)
			}
		}
	default:
		dirs = append(dirs, "lib")
		mods, err := os.ReadDir(filepath.Join(root, "node_modules"))
		if err != nil {
			return nil, err
		}
		for _, e := range mods {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(e.Name(), "@") {
				dirs = append(dirs, "node_modules/"+e.Name())
			}
		}
	}
	var out []string
	for _, d := range dirs {
		if n := langSize(l, filepath.Join(root, d)); n >= minTree && n <= 3<<20 {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("no %s tree of %d KB to 3 MB in %s", l.name, minTree>>10, root)
	}
	return out, nil
}

// langSize is the size of the source files of l under dir.
func langSize(l *lang, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, l.ext) {
			if info, err := d.Info(); err == nil && info.Size() <= maxTreeFile {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// sources are the files of src in l, of lines lines or more.
func (l *lang) sources(src *Source, lines int) []string {
	var out []string
	for _, p := range src.paths {
		if strings.HasSuffix(p, l.ext) && !strings.HasSuffix(p, ".min.js") && strings.Count(src.files[p], "\n") >= lines {
			out = append(out, p)
		}
	}
	return out
}

// funcs are the function names defined in text.
func (l *lang) funcs(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range l.funcRe.FindAllStringSubmatch(text, -1) {
		for _, g := range m[1:] {
			if g != "" && !seen[g] && g != "function" && g != "constructor" && g != "if" && g != "for" && g != "while" && g != "switch" && g != "catch" {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	return out
}

// testFile is where the tests of the module p live.
func (l *lang) testFile(p string) string {
	stem := strings.TrimSuffix(path.Base(p), l.ext)
	if l == python {
		return "tests/test_" + strings.TrimPrefix(stem, "_") + ".py"
	}
	return "test/" + stem + ".js"
}

// testID names one test of module p's function fn.
func (l *lang) testID(p, fn, case_ string) string {
	if l == python {
		return fmt.Sprintf("%s::test_%s_%s", l.testFile(p), fn, case_)
	}
	return fmt.Sprintf("%s > %s %s", l.testFile(p), fn, strings.ReplaceAll(case_, "_", " "))
}

// caseWords name the cases of the generated tests.
var caseWords = []string{"empty", "unicode", "large_input", "nested", "eof", "crlf", "none", "zero", "negative", "duplicate",
	"timeout", "closed", "reentrant", "symlink", "windows_path", "bom", "quoted", "trailing_comma", "deep", "concurrent"}

// failure is one failing test a log or a paste shows.
type failure struct {
	file, fn, test string
	line           int
	got, want      string
}

// logTail writes the end of a test log: the failing test's block, with
// the lines of facts inside it, then the runner's coverage and summary,
// so that the facts sit 8 to 14 lines above the log's end. passed is the
// number of tests that passed.
func (l *lang) logTail(rng *rand.Rand, f failure, facts []string, passed int) []string {
	var out []string
	if l == python {
		rule := strings.Repeat("_", 20)
		out = append(out, strings.Repeat("=", 35)+" FAILURES "+strings.Repeat("=", 35),
			rule+" "+path.Base(strings.SplitN(f.test, "::", 2)[1])+" "+rule, "",
			"    def "+strings.SplitN(f.test, "::", 2)[1]+"():",
			fmt.Sprintf("        result = %s(load_case(%q))", f.fn, path.Base(f.test)),
			fmt.Sprintf(">       assert result == %s", f.want),
			fmt.Sprintf("E       AssertionError: assert %s == %s", f.got, f.want),
			fmt.Sprintf("E        +  where %s = %s(...)", f.got, f.fn), "",
			fmt.Sprintf("%s:%d: AssertionError", l.testFile(f.file), f.line),
			strings.Repeat("-", 29)+" Captured stdout call "+strings.Repeat("-", 29))
		out = append(out, facts...)
		out = append(out, "---------- coverage: platform linux, python 3.11.2-final-0 -----------",
			"Name                                   Stmts   Miss  Cover", strings.Repeat("-", 58))
		for range 3 - len(facts) + rng.IntN(2) {
			out = append(out, fmt.Sprintf("%-38s %5d %6d %5d%%", f.file, 100+rng.IntN(900), rng.IntN(90), 60+rng.IntN(40)))
		}
		stmts := 2000 + rng.IntN(20000)
		out = append(out, fmt.Sprintf("%-38s %5d %6d %5d%%", "TOTAL", stmts, rng.IntN(stmts/5), 70+rng.IntN(29)),
			strings.Repeat("=", 27)+" short test summary info "+strings.Repeat("=", 28),
			fmt.Sprintf("FAILED %s - AssertionError: assert %s == %s", f.test, f.got, f.want),
			fmt.Sprintf("%s 1 failed, %d passed, %d skipped in %d.%02ds %s", strings.Repeat("=", 17), passed, rng.IntN(30), 5+rng.IntN(200), rng.IntN(100), strings.Repeat("=", 17)))
		return out
	}
	out = append(out, fmt.Sprintf("not ok %d - %s", passed+1, f.test), "  ---",
		fmt.Sprintf("  duration_ms: %d.%03d", rng.IntN(90), rng.IntN(1000)),
		"  failureType: 'testCodeFailure'",
		fmt.Sprintf("  error: 'Expected values to be strictly equal:\\n\\n%s !== %s\\n'", f.got, f.want),
		"  code: 'ERR_ASSERTION'", "  stack: |-",
		fmt.Sprintf("    TestContext.<anonymous> (%s:%d:%d)", l.testFile(f.file), f.line, 3+rng.IntN(30)))
	for range 3 - len(facts) {
		out = append(out, fmt.Sprintf("    %s (%s:%d:%d)", f.fn, f.file, 10+rng.IntN(900), 3+rng.IntN(40)))
	}
	out = append(out, facts...)
	out = append(out, "  ...", fmt.Sprintf("1..%d", passed+1), fmt.Sprintf("# tests %d", passed+1), "# suites 0",
		fmt.Sprintf("# pass %d", passed), "# fail 1", "# cancelled 0", "# skipped 0", "# todo 0",
		fmt.Sprintf("# duration_ms %d.%03d", 3000+rng.IntN(90000), rng.IntN(1000)))
	return out
}

// passLine is one passing test's line of a long log: the nth of a run.
func (l *lang) passLine(rng *rand.Rand, test string, nth, total int) string {
	if l == python {
		return fmt.Sprintf("%-70s PASSED [%3d%%]", test, 100*nth/max(total, 1))
	}
	return fmt.Sprintf("ok %d - %s # time=%d.%03dms", nth, test, rng.IntN(40), rng.IntN(1000))
}

// logHead is a test log's first lines after its head facts: the runner's
// banner.
func (l *lang) logHead(rng *rand.Rand, total int) []string {
	if l == python {
		return []string{strings.Repeat("=", 29) + " test session starts " + strings.Repeat("=", 30),
			"platform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0 -- /usr/bin/python3",
			"cachedir: .pytest_cache", "rootdir: /work/src, configfile: pyproject.toml",
			"plugins: cov-4.0.0, xdist-3.1.0, timeout-2.1.0", fmt.Sprintf("collected %d items", total), ""}
	}
	return []string{fmt.Sprintf("> npm test -- --test-reporter=tap (node v20.%d.%d)", 10+rng.IntN(9), rng.IntN(4)), "TAP version 13"}
}

// stackTrace is a traceback of depth frames through files of the tree,
// ending in err.
func (l *lang) stackTrace(rng *rand.Rand, frames []failure, err string) []string {
	var out []string
	if l == python {
		out = append(out, "Traceback (most recent call last):")
		for i, f := range frames {
			code := "raise"
			if i+1 < len(frames) {
				code = fmt.Sprintf("return %s(%s)", frames[i+1].fn, strings.Repeat("x, ", rng.IntN(3))+"ctx")
			}
			out = append(out, fmt.Sprintf("  File \"/work/src/%s\", line %d, in %s", f.file, f.line, f.fn), "    "+code)
		}
		return append(out, err)
	}
	out = append(out, err)
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		out = append(out, fmt.Sprintf("    at %s (/work/src/%s:%d:%d)", f.fn, f.file, f.line, 3+rng.IntN(40)))
	}
	return append(out, "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)")
}

// errorLine is an exception a trace ends in.
func (l *lang) errorLine(rng *rand.Rand) string {
	if l == python {
		return []string{"KeyError: 'encoding'", "ValueError: invalid literal for int() with base 10: ''",
			"TypeError: 'NoneType' object is not subscriptable", "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte",
			"RecursionError: maximum recursion depth exceeded while calling a Python object"}[rng.IntN(5)]
	}
	return []string{"TypeError: Cannot read properties of undefined (reading 'length')", "Error: ENOENT: no such file or directory, open 'package.json'",
		"RangeError: Maximum call stack size exceeded", "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal", "SyntaxError: Unexpected token } in JSON at position 142"}[rng.IntN(5)]
}

// shortCommands are commands of l with a line or two of output: a lint, a
// version, the state of the tree.
func (l *lang) shortCommands(rng *rand.Rand, edited []string) [][3]string {
	common := [][3]string{
		{"git status --short", " M " + strings.Join(edited[:1+rng.IntN(len(edited))], "\n M ") + "\n", "Checking what has changed so far."},
		{"git diff --stat", fmt.Sprintf(" %s | %d ++++--\n 1 file changed, %d insertions(+), %d deletions(-)\n", edited[rng.IntN(len(edited))], 2+rng.IntN(20), 1+rng.IntN(12), rng.IntN(8)), "How big is the change now?"},
	}
	if l == python {
		return append(common,
			[3]string{"python3 -m pyflakes " + edited[0], "", "Linting the module."},
			[3]string{"python3 --version", "Python 3.11.2\n", "Which interpreter is this?"},
			[3]string{"python3 -m compileall -q " + path.Dir(edited[0]), "", "Making sure everything still compiles."})
	}
	return append(common,
		[3]string{"node --check " + edited[0], "", "Checking the syntax."},
		[3]string{"node --version", "v20.11.1\n", "Which Node is this?"},
		[3]string{"npx eslint " + edited[0], "", "Linting the file."})
}

// repoMapLang lists the functions of the source files of src, file by
// file: the whole map; a replay keeps its window's share.
func repoMapLang(l *lang, src *Source) string {
	var b strings.Builder
	for _, p := range l.sources(src, 1) {
		names := l.funcs(src.files[p])
		if len(names) == 0 {
			continue
		}
		if len(names) > 14 {
			names = append(names[:14], fmt.Sprintf("… %d more", len(names)-14))
		}
		fmt.Fprintf(&b, "%s: %s\n", p, strings.Join(names, ", "))
	}
	return b.String()
}

var errNoFocus = errors.New("no module to work in")
