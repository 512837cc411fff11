package synth

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// subtestWords name the subtests of the generated test logs.
var subtestWords = []string{"empty", "one_round", "long_turn", "cut", "shed", "fold", "note", "emergency", "no_window",
	"16k", "24k", "32k", "128k", "stream", "whole", "refused", "retry", "cached", "vllm", "llamacpp", "ollama", "cjk", "huge"}

// testsByPackage lists the test functions of each package directory, the
// same all session long: edits only add lines or append to one, so they
// never add or remove a test function's line, and new test files are not
// listed. Callers only read what it returns.
func (b *builder) testsByPackage() (dirs []string, tests map[string][]string) {
	if b.tests == nil {
		b.testDirs, b.tests = b.listTests()
	}
	return b.testDirs, b.tests
}

// listTests finds the test functions of each package directory.
func (b *builder) listTests() (dirs []string, tests map[string][]string) {
	tests = map[string][]string{}
	re := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	for _, p := range b.src.goFiles("", true) {
		if !strings.HasSuffix(p, "_test.go") {
			continue
		}
		d := path.Dir(p)
		for _, m := range re.FindAllStringSubmatch(b.files[p], -1) {
			tests[d] = append(tests[d], m[1])
		}
	}
	for d := range tests {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs, tests
}

// testLog is go test -v -race over every package: thousands of lines,
// nearly all of them passing, and a failure at the end.
func (b *builder) testLog(n int, withFact bool) {
	dirs, tests := b.testsByPackage()
	var sb strings.Builder
	lines := 0
	w := func(format string, args ...any) {
		fmt.Fprintf(&sb, format+"\n", args...)
		lines++
	}
	failDir := b.spec.focus
	var failTest string
	for _, d := range dirs {
		if d == failDir {
			continue
		}
		b.packageLog(w, d, tests[d])
	}
	ts := tests[failDir]
	if len(ts) == 0 {
		for _, d := range dirs {
			if len(tests[d]) > 0 {
				failDir, ts = d, tests[d]
			}
		}
	}
	failTest = ts[b.rng.IntN(len(ts))]
	for _, t := range ts {
		if t != failTest {
			b.testRun(w, t)
		}
	}
	sub := b.pick(subtestWords)
	w("=== RUN   %s", failTest)
	w("=== RUN   %s/%s", failTest, sub)
	w("    %s_test.go:%d: Plan(%s) = request of %d messages with an orphaned tool result, want none", path.Base(failDir), 40+b.rng.IntN(300), sub, 20+b.rng.IntN(80))
	w("--- FAIL: %s/%s (0.%02ds)", failTest, sub, b.rng.IntN(100))
	w("--- FAIL: %s (0.%02ds)", failTest, b.rng.IntN(100))
	w("FAIL")
	if withFact {
		for _, f := range b.due(n, "log") {
			w("FACT %s: %s", f.Key, f.Value)
		}
	}
	w("FAIL\t%s\t%d.%03ds", b.src.importPath(failDir), 1+b.rng.IntN(9), b.rng.IntN(1000))
	w("FAIL")
	cmd := "go test -race -v -count=1 ./..."
	b.call(n, "bash", map[string]any{"command": cmd, "timeout": 600}, sb.String()+"exit status 1\n", contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}

// packageLog writes, through w, the go test -v lines of the package d
// whose tests are ts, all passing.
func (b *builder) packageLog(w func(string, ...any), d string, ts []string) {
	for _, t := range ts {
		b.testRun(w, t)
	}
	if len(ts) == 0 {
		w("?   \t%s\t[no test files]", b.src.importPath(d))
		return
	}
	w("PASS")
	w("ok  \t%s\t%d.%03ds", b.src.importPath(d), 1+b.rng.IntN(30), b.rng.IntN(1000))
}

// testRun writes, through w, the passing run of test t and its subtests.
func (b *builder) testRun(w func(string, ...any), t string) {
	w("=== RUN   %s", t)
	if b.rng.Float64() < 0.3 {
		w("=== PAUSE %s", t)
		w("=== CONT  %s", t)
	}
	subs := b.rng.IntN(14)
	for i := range subs {
		s := fmt.Sprintf("%s_%d", b.pick(subtestWords), i)
		w("=== RUN   %s/%s", t, s)
		if b.rng.Float64() < 0.15 {
			w("    %s: window %d, estimate %d, prompt %d", strings.ToLower(t[4:min(len(t), 14)])+"_test.go:"+fmt.Sprint(20+b.rng.IntN(400)),
				16000+1000*b.rng.IntN(100), b.rng.IntN(30000), b.rng.IntN(30000))
		}
		w("--- PASS: %s/%s (0.%02ds)", t, s, b.rng.IntN(20))
	}
	w("--- PASS: %s (%d.%02ds)", t, b.rng.IntN(2), b.rng.IntN(100))
}

// stdPackages are the standard packages a build log compiles first.
var stdPackages = []string{"internal/goarch", "internal/abi", "internal/cpu", "internal/bytealg", "internal/byteorder",
	"internal/chacha8rand", "internal/coverage/rtcov", "internal/godebugs", "internal/goexperiment", "internal/goos",
	"internal/profilerecord", "internal/runtime/atomic", "internal/runtime/math", "internal/runtime/sys", "internal/stringslite",
	"runtime", "internal/race", "sync/atomic", "internal/sync", "sync", "errors", "io", "unicode", "unicode/utf8", "bytes",
	"strings", "math", "math/bits", "strconv", "internal/itoa", "slices", "sort", "internal/fmtsort", "reflect", "os",
	"internal/poll", "internal/syscall/unix", "syscall", "time", "io/fs", "path", "path/filepath", "fmt", "context",
	"encoding", "encoding/binary", "encoding/base64", "encoding/json", "hash", "hash/fnv", "math/rand/v2", "regexp/syntax",
	"regexp", "bufio", "net/netip", "net", "net/url", "mime", "crypto", "crypto/tls", "net/http", "log", "flag",
	"text/tabwriter", "compress/gzip", "compress/flate", "os/signal", "os/exec", "unicode/utf16"}

// buildLog is go build -x -a: thousands of lines of toolchain noise and a
// compile error at the end.
func (b *builder) buildLog(n int) {
	var sb strings.Builder
	work := fmt.Sprintf("/tmp/go-build%d", 100000000+b.rng.IntN(900000000))
	fmt.Fprintf(&sb, "WORK=%s\n", work)
	pkgs := slices.Clone(stdPackages)
	dirs, _ := b.testsByPackage()
	for _, d := range dirs {
		pkgs = append(pkgs, b.src.importPath(d))
	}
	for i, p := range pkgs {
		id := fmt.Sprintf("b%03d", i+1)
		fmt.Fprintf(&sb, "mkdir -p $WORK/%s/\n", id)
		fmt.Fprintf(&sb, "cat >/tmp/go-build-cfg/%s/importcfg << 'EOF' # internal\n# import config\n", id)
		deps := 3 + b.rng.IntN(12)
		for j := 0; j < deps && j < i; j++ {
			q := pkgs[b.rng.IntN(i)]
			fmt.Fprintf(&sb, "packagefile %s=$WORK/b%03d/_pkg_.a\n", q, 1+b.rng.IntN(i))
		}
		sb.WriteString("EOF\n")
		fmt.Fprintf(&sb, "cd %s\n", b.src.workdir)
		fmt.Fprintf(&sb, "/usr/local/go/pkg/tool/linux_amd64/compile -o $WORK/%s/_pkg_.a -trimpath \"$WORK/%s=>\" -p %s -lang=go1.26 -complete -buildid %x/%x -goversion go1.26.8 -c=2 -nolocalimports -importcfg $WORK/%s/importcfg -pack ./*.go\n",
			id, id, p, b.rng.Uint32(), b.rng.Uint32(), id)
		fmt.Fprintf(&sb, "/usr/local/go/pkg/tool/linux_amd64/buildid -w $WORK/%s/_pkg_.a # internal\n", id)
		fmt.Fprintf(&sb, "cp $WORK/%s/_pkg_.a /root/.cache/go-build/%02x/%x-d # internal\n", id, b.rng.IntN(256), b.rng.Uint64())
	}
	f := b.spec.edits[b.rng.IntN(len(b.spec.edits))]
	fmt.Fprintf(&sb, "# %s\n", b.src.importPath(path.Dir(f)))
	fmt.Fprintf(&sb, "%s:%d:%d: undefined: keepGroup\n", f, 30+b.rng.IntN(200), 2+b.rng.IntN(20))
	fmt.Fprintf(&sb, "%s:%d:%d: too many arguments in call to s.fold\n", f, 30+b.rng.IntN(200), 2+b.rng.IntN(20))
	cmd := "go build -x -a ./... 2>&1"
	b.call(n, "bash", map[string]any{"command": cmd}, sb.String()+"exit status 1\n", contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}

// longLog is a CI log of 50–200 KB: a go test -race -v run or a go build
// -x, its run facts on its first lines (the facts due at its head), the
// verdict and the facts due at its tail on its last.
func (b *builder) longLog(n int) { b.longLogSized(n, 50<<10, 145<<10, false) }

// longLogSized is longLog of least+[0, span) bytes, give or take its last
// package or step. When exact, its body stops at a line instead (within a
// package), so that it never passes least+span by more than its last
// lines, the verdict and the facts due at its tail.
func (b *builder) longLogSized(n, least, span int, exact bool) {
	target := least + b.rng.IntN(span)
	var sb strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&sb, format+"\n", args...) }
	// body writes the log's bulk: in exact mode, only while it fits.
	full := false
	body := w
	if exact {
		body = func(format string, args ...any) {
			line := fmt.Sprintf(format+"\n", args...)
			if full = full || sb.Len()+len(line) > target; !full {
				sb.WriteString(line)
			}
		}
	}
	for _, f := range b.due(n, "loghead") {
		w("FACT %s: %s", f.Key, f.Value)
	}
	w("ci: job %d, attempt %d, started 2026-11-29T21:%02d:%02dZ", 3000+b.rng.IntN(100), 1+b.rng.IntN(3), b.rng.IntN(60), b.rng.IntN(60))
	dirs, tests := b.testsByPackage()
	build := b.rng.IntN(3) == 0
	var cmd string
	if build {
		cmd = "go build -x -a ./... 2>&1 | tee ci-build.log"
		w("WORK=/tmp/go-build%d", 100000000+b.rng.IntN(900000000))
		for i := 0; sb.Len() < target && !full; i++ {
			p := stdPackages[i%len(stdPackages)]
			id := fmt.Sprintf("b%03d", i+1)
			body("mkdir -p $WORK/%s/", id)
			body("cat >$WORK/%s/importcfg << 'EOF' # internal", id)
			for range 3 + b.rng.IntN(10) {
				body("packagefile %s=$WORK/b%03d/_pkg_.a", b.pick(stdPackages), 1+b.rng.IntN(i+1))
			}
			body("EOF")
			body("/usr/local/go/pkg/tool/linux_amd64/compile -o $WORK/%s/_pkg_.a -trimpath \"$WORK/%s=>\" -p %s -lang=go1.26 -complete -buildid %x/%x -goversion go1.26.8 -c=2 -importcfg $WORK/%s/importcfg -pack ./*.go",
				id, id, p, b.rng.Uint32(), b.rng.Uint32(), id)
			body("cp $WORK/%s/_pkg_.a /root/.cache/go-build/%02x/%x-d # internal", id, b.rng.IntN(256), b.rng.Uint64())
		}
		f := b.pick(b.spec.edits)
		w("# %s", b.src.importPath(path.Dir(f)))
		w("%s:%d:%d: undefined: mergeLayer", f, 30+b.rng.IntN(200), 2+b.rng.IntN(20))
	} else {
		cmd = "go test -race -v -count=1 ./... 2>&1 | tee ci-test.log"
		for i := 0; sb.Len() < target && !full; i++ {
			d := dirs[i%len(dirs)]
			b.packageLog(body, d, tests[d])
		}
		ts := tests[b.spec.focus]
		t := b.pick(ts)
		w("=== RUN   %s", t)
		w("    %s_test.go:%d: Load() endpoint = %q, want %q", path.Base(b.spec.focus), 40+b.rng.IntN(300), "http://127.0.0.1:8080/v1", "http://10.0.4.2:8080/v1")
		w("--- FAIL: %s (0.%02ds)", t, b.rng.IntN(100))
		w("FAIL\t%s\t%d.%03ds", b.src.importPath(b.spec.focus), 1+b.rng.IntN(9), b.rng.IntN(1000))
	}
	for _, f := range b.due(n, "log") {
		w("FACT %s: %s", f.Key, f.Value)
	}
	w("FAIL")
	b.call(n, "bash", map[string]any{"command": cmd, "timeout": 900}, sb.String()+"exit status 1\n", contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}
