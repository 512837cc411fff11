package synth

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/reika-lsp/reika/agent/replay"
)

// The unseen sessions: drawn from a seed out of a codebase nobody tuned
// the replay on, Go's own standard library. A seed picks a tree of
// GOROOT/src (net, encoding, cmd/go, …), a package in it to work in, a
// big file of it that the task names and the session later reads whole,
// and a recipe: 200–700 rounds in runs of one kind (tiny results, small
// ones, mixed, long logs), 22–24 facts of which 5 are in the task, one in
// each of 3–5 later user messages, the others on the first line or the
// last lines of 60–200 KB logs, in notes and in short command outputs.

// GoRoot is the GOROOT of the go command on PATH.
func GoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	root := strings.TrimSpace(string(out))
	if root == "" {
		return "", errors.New("go env GOROOT: empty")
	}
	return root, nil
}

// Unseen generates the unseen sessions of one GOROOT. The same GOROOT
// (the same Go release) and the same seed give the same bytes. It is safe
// for concurrent use: the trees it loads are kept, read-only.
type Unseen struct {
	src     string // GOROOT/src
	version string
	trees   []string // the directories of src a session may work in, sorted

	mu     sync.Mutex
	loaded map[string]*Source
}

// The sizes of a tree a session may work in: the text files LoadTree
// keeps, in bytes. Larger trees (runtime, cmd/compile) make every grep
// slow; smaller ones have too little to read.
const (
	minTree = 60 << 10
	maxTree = 6 << 20
)

// NewUnseen lists the trees of goroot/src a session may work in: each
// directory at its top and each of cmd's, less vendored code and
// testdata, of 60 KB to 6 MB of text.
func NewUnseen(goroot string) (*Unseen, error) {
	src := filepath.Join(goroot, "src")
	u := &Unseen{src: src, version: "go (unknown release)", loaded: map[string]*Source{}}
	if v, err := os.ReadFile(filepath.Join(goroot, "VERSION")); err == nil {
		u.version, _, _ = strings.Cut(string(v), "\n")
	}
	top, err := os.ReadDir(src)
	if err != nil {
		return nil, fmt.Errorf("unseen sessions: %w", err)
	}
	var dirs []string
	for _, e := range top {
		switch {
		case !e.IsDir() || e.Name() == "vendor" || e.Name() == "testdata":
		case e.Name() == "cmd":
			sub, err := os.ReadDir(filepath.Join(src, "cmd"))
			if err != nil {
				return nil, fmt.Errorf("unseen sessions: %w", err)
			}
			for _, c := range sub {
				if c.IsDir() && c.Name() != "vendor" && c.Name() != "testdata" {
					dirs = append(dirs, "cmd/"+c.Name())
				}
			}
		default:
			dirs = append(dirs, e.Name())
		}
	}
	for _, d := range dirs {
		if n := treeSize(filepath.Join(src, d)); n >= minTree && n <= maxTree {
			u.trees = append(u.trees, d)
		}
	}
	sort.Strings(u.trees)
	if len(u.trees) == 0 {
		return nil, fmt.Errorf("unseen sessions: no tree of %d KB to %d MB in %s", minTree>>10, maxTree>>20, src)
	}
	return u, nil
}

// treeSize is the size of what LoadTree would keep of dir, near enough:
// its files of up to 1 MiB outside testdata.
func treeSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case d.Type().IsRegular():
			if info, err := d.Info(); err == nil && info.Size() <= maxTreeFile {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// Trees lists the directories of GOROOT/src a session may work in.
func (u *Unseen) Trees() []string { return slices.Clone(u.trees) }

// tree loads the tree dir once.
func (u *Unseen) tree(dir string) (*Source, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if s, ok := u.loaded[dir]; ok {
		return s, nil
	}
	s, err := LoadTree(u.src, dir, u.version+" src/"+dir)
	if err != nil {
		return nil, err
	}
	u.loaded[dir] = s
	return s, nil
}

// UnseenSession is one session generated from a seed, and where its facts
// are.
type UnseenSession struct {
	Seed      uint64
	Recording *replay.Recording
	// Where says where each fact (by key) was planted: "task", "user" (a
	// later user message), "notes" (a notes file or an issue's text, a
	// few lines), "short" (a command's one-line output), "loghead" (the
	// first line of a long log), "logtail" (its last lines).
	Where map[string]string
}

// UnseenName is the name of the session of seed.
func UnseenName(seed uint64) string { return fmt.Sprintf("unseen-%d", seed) }

// Session generates the session of seed.
func (u *Unseen) Session(seed uint64) (*UnseenSession, error) {
	rng := rand.New(rand.NewPCG(seed, 0x756e7365656e))
	order := rng.Perm(len(u.trees))
	for _, i := range order {
		src, err := u.tree(u.trees[i])
		if err != nil {
			return nil, err
		}
		spec, where, ok := unseenRecipe(rng, src, u.trees[i], seed)
		if !ok {
			continue
		}
		return &UnseenSession{Seed: seed, Recording: build(src, spec), Where: where}, nil
	}
	return nil, fmt.Errorf("unseen session %d: no package of %s to work in", seed, u.src)
}

// A focus package of an unseen session has at least this many test
// functions and this many Go files of 100 lines or more.
const (
	minFocusTests = 3
	minFocusFiles = 2
	// bigFile is the length of a big file, in lines.
	bigFile = 800
)

// generatedRe matches the line that marks a generated Go file: no session
// edits one or reads it as the task's file.
var generatedRe = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// testFuncRe matches a test function's declaration.
var testFuncRe = regexp.MustCompile(`(?m)^func (Test\w+)\(`)

// unseenRecipe draws the recipe of a session in the tree dir of src; false
// when the tree has no package to work in.
func unseenRecipe(rng *rand.Rand, src *Source, dir string, seed uint64) (recipe, map[string]string, bool) {
	type pkg struct {
		dir          string
		code, tests  []string // Go files of 100 lines or more; test files with tests
		testNames    []string
		biggestLines int
	}
	byDir := map[string]*pkg{}
	var dirs []string
	for _, p := range src.goFiles("", true) {
		d := path.Dir(p)
		k := byDir[d]
		if k == nil {
			k = &pkg{dir: d}
			byDir[d] = k
			dirs = append(dirs, d)
		}
		text := src.files[p]
		lines := strings.Count(text, "\n")
		if strings.HasSuffix(p, "_test.go") {
			if m := testFuncRe.FindAllStringSubmatch(text, -1); len(m) > 0 && lines >= 30 {
				k.tests = append(k.tests, p)
				for _, x := range m {
					k.testNames = append(k.testNames, x[1])
				}
			}
		} else if lines >= 100 && !generatedRe.MatchString(text) {
			k.code = append(k.code, p)
			k.biggestLines = max(k.biggestLines, lines)
		}
	}
	// The package to work in: one with tests and a big file (800 lines or
	// more), which the task names.
	var fit []*pkg
	for _, d := range dirs {
		if k := byDir[d]; len(k.testNames) >= minFocusTests && len(k.code) >= minFocusFiles && k.biggestLines >= bigFile {
			fit = append(fit, k)
		}
	}
	if len(fit) == 0 {
		return recipe{}, nil, false
	}
	focus := fit[rng.IntN(len(fit))]
	big := largest(src, focus.code)
	bigLines := strings.Count(src.files[big], "\n")

	edits := []string{big}
	for _, i := range rng.Perm(len(focus.code)) {
		if len(edits) == 3 {
			break
		}
		if focus.code[i] != big {
			edits = append(edits, focus.code[i])
		}
	}
	edits = append(edits, focus.tests[rng.IntN(len(focus.tests))])

	rounds := 200 + rng.IntN(501)
	spec := recipe{
		name: UnseenName(seed), seed: seed, rounds: rounds, focus: focus.dir, edits: edits,
		mix: "unseen", tree: dir, big: big, users: map[int]string{}, system: systemPromptStd,
	}
	pick := func(items []string) string { return items[rng.IntN(len(items))] }

	// The task.
	ident := path.Base(focus.dir)
	if ids := exportedFuncRe.FindAllStringSubmatch(src.files[big], -1); len(ids) > 0 {
		ident = ids[rng.IntN(len(ids))][1]
	}
	spec.task = fmt.Sprintf(pick(unseenTasks), focus.dir, big, bigLines, pick(symptoms), ident)

	// The facts: their values, then their places.
	test := focus.testNames[rng.IntN(len(focus.testNames))]
	ctx := factContext{pkg: focus.dir, base: path.Base(focus.dir), test: test, ident: ident, file: big, rng: rng}
	total := 22 + rng.IntN(3)
	gens := slices.Clone(factGens)
	rng.Shuffle(len(gens), func(i, j int) { gens[i], gens[j] = gens[j], gens[i] })
	facts := make([]replay.Fact, total)
	for i := range facts {
		facts[i] = gens[i](&ctx)
	}
	where := map[string]string{}
	for _, f := range facts[:5] {
		spec.taskFacts = append(spec.taskFacts, f)
		where[f.Key] = "task"
	}
	rest := facts[5:]

	// 3–5 later user messages, one fact each, at distinct rounds.
	users := 3 + rng.IntN(3)
	texts := slices.Clone(userTexts)
	rng.Shuffle(len(texts), func(i, j int) { texts[i], texts[j] = texts[j], texts[i] })
	// One run of 30–79 tiny results at least, which no fact or big read
	// interrupts.
	tinyFrom := 12 + rng.IntN(rounds-100)
	tinyTo := tinyFrom + 30 + rng.IntN(50)
	used := map[int]bool{}
	for n := tinyFrom; n <= tinyTo; n++ {
		used[n] = true
	}
	for i := range users {
		n := 8 + rng.IntN(rounds-20)
		for used[n] {
			n = 8 + rng.IntN(rounds-20)
		}
		used[n] = true
		spec.users[n] = strings.ReplaceAll(texts[i], "{pkg}", focus.dir)
		spec.places = append(spec.places, factPlace{n, "user", rest[i]})
		where[rest[i].Key] = "user"
	}
	rest = rest[users:]

	// The others: on long logs' first and last lines, in notes, in short
	// outputs; half of them in the first quarter of the session.
	heads, tails := 3+rng.IntN(3), 2+rng.IntN(3)
	shorts := (len(rest) - heads - tails) / 2
	for i, f := range rest {
		kind := "notes"
		switch {
		case i < heads:
			kind = "loghead"
		case i < heads+tails:
			kind = "log"
		case i < heads+tails+shorts:
			kind = "short"
		}
		n := 4 + rng.IntN(rounds-8)
		if rng.IntN(2) == 0 {
			n = 4 + rng.IntN(rounds/4)
		}
		for used[n] {
			n = 4 + rng.IntN(rounds-8)
		}
		used[n] = true
		spec.places = append(spec.places, factPlace{n, kind, f})
		if kind == "log" {
			kind = "logtail"
		}
		where[f.Key] = kind
	}
	sort.SliceStable(spec.places, func(i, j int) bool { return spec.places[i].round < spec.places[j].round })

	// The big file is read whole a few rounds in, and once more later
	// with even odds.
	spec.bigReads = map[int]bool{3 + rng.IntN(8): true}
	if n := rounds/3 + rng.IntN(rounds/2); rng.IntN(2) == 0 && !used[n] {
		spec.bigReads[n] = true
	}

	// Runs of one kind of round each, 15–80 rounds long.
	spec.modes = make([]string, rounds+1)
	for n := 1; n <= rounds; {
		mode := pick([]string{"tiny", "tiny", "tiny", "small", "small", "mixed", "mixed", "mixed", "logs", "logs"})
		for end := min(rounds, n+15+rng.IntN(66)); n <= end; n++ {
			spec.modes[n] = mode
		}
	}
	for n := tinyFrom; n <= tinyTo; n++ {
		spec.modes[n] = "tiny"
	}
	return spec, where, true
}

// largest is the longest of files, by lines.
func largest(src *Source, files []string) string {
	best, most := "", -1
	for _, p := range files {
		if n := strings.Count(src.files[p], "\n"); n > most {
			best, most = p, n
		}
	}
	return best
}

// exportedFuncRe matches an exported top-level function or method.
var exportedFuncRe = regexp.MustCompile(`(?m)^func (?:\(\w+ \*?\w+(?:\[[^\]]*\])?\) )?([A-Z]\w*)`)

// unseenTasks are the tasks of the unseen sessions: %[1]s the package,
// %[2]s the big file, %[3]d its lines, %[4]s a symptom, %[5]s a function.
var unseenTasks = []string{
	"A user reports that package %[1]s misbehaves: %[4]s. The stack traces point into %[2]s (%[3]d lines); read it " +
		"whole first, find the cause, fix it with the smallest change that holds, and add a regression test. Keep go vet " +
		"and go test -race ./%[1]s/ clean.",
	"Make %[5]s in package %[1]s stop allocating on its common path. Most of the code involved is in %[2]s (%[3]d " +
		"lines): read that file whole before changing anything. Show a benchmark before and after, and keep the tests " +
		"green under -race.",
	"A review asked for tests of the exported functions of %[2]s (%[3]d lines, package %[1]s) that have none. Read the " +
		"whole file, write table-driven tests for them, and fix what they find: one report says %[4]s.",
	"The longtest builder fails on package %[1]s since the last merge: %[4]s. Reproduce it, bisect if you must, fix it " +
		"and explain the cause. The code at fault is in %[2]s (%[3]d lines); read the whole file, the failure depends on " +
		"state set far from where it shows, around %[5]s.",
}

// symptoms are what the unseen tasks report.
var symptoms = []string{
	"a call that should return at once blocks until the test times out",
	"two runs over the same input give different results",
	"an error comes back wrapped twice, so errors.Is misses it",
	"memory grows with every call and is never given back",
	"an empty input panics with index out of range",
	"a result is off by one at the end of a buffer",
}

// userTexts are the later user messages of the unseen sessions; {pkg} is
// the package. The builder appends the fact each carries.
var userTexts = []string{
	"While you are in there: do not change the exported API of {pkg}, a downstream project pins it.",
	"One more constraint from the review: the fix has to stay allocation-free on the fast path.",
	"Please also say in the package doc of {pkg} what the new behaviour is, two sentences at most.",
	"Reminder: the builders run with -race and -count=3; check both before you call it done.",
	"I talked to the owner of {pkg}: they want the regression test in a file of its own.",
	"Looks right so far. Before you finish, run the package's tests with -race once more and write a one-line release note.",
	"An update from CI: the failure shows on the arm64 builder too, so do not rely on amd64-only behaviour.",
}

// factContext is what the values of an unseen session's facts are drawn
// from.
type factContext struct {
	pkg, base, test, ident, file string
	rng                          *rand.Rand
}

func (c *factContext) n(lo, span int) int { return lo + c.rng.IntN(span) }

func (c *factContext) pick(items ...string) string { return items[c.rng.IntN(len(items))] }

// factGens draw one fact each, each of its own key; a session takes 22–24
// of them in a random order. Their values carry random numbers, so that
// one is never found by chance in a result that does not plant it.
var factGens = []func(c *factContext) replay.Fact{
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "issue", Value: fmt.Sprintf("golang/go#%d", c.n(60000, 20000))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "branch", Value: fmt.Sprintf("fix/%s-%s-%d", c.base, c.pick("hang", "alloc", "race", "wrap", "bound"), c.n(10, 990))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "reviewer", Value: "@" + c.pick("hana", "tomas", "priya", "li", "sven", "amara") + "-" + c.pick("okafor", "lindqvist", "rao", "moreau", "tanaka", "silva") + fmt.Sprint(c.n(1, 98))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "toolchain", Value: fmt.Sprintf("go1.%d.%d %s/%s", c.n(22, 5), c.n(0, 12), c.pick("linux", "darwin", "freebsd"), c.pick("amd64", "arm64", "riscv64"))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "repro", Value: fmt.Sprintf("go test ./%s/ -run '^%s$' -count=%d -cpu=%d", c.pkg, c.test, c.n(20, 480), c.n(2, 15))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "bench_baseline", Value: fmt.Sprintf("Benchmark%s %d ns/op %d B/op %d allocs/op", c.ident, c.n(40, 9000), c.n(16, 4000), c.n(1, 40))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "failing_test", Value: fmt.Sprintf("%s/%s_%d at %s_test.go:%d", c.test, c.pick("empty", "eof", "large", "nested", "utf8"), c.n(1, 40), c.base, c.n(30, 900))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "bisect", Value: fmt.Sprintf("first bad commit %07x (%s: %s)", c.rng.Uint32()&0xfffffff, c.pkg, c.pick("reuse the buffer", "fast path for short inputs", "drop the lock earlier", "inline the loop"))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "goroutine_hint", Value: fmt.Sprintf("goroutine %d [chan receive, %d minutes] in %s.%s", c.n(18, 900), c.n(2, 58), c.base, c.ident)}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "decision", Value: fmt.Sprintf("keep %s's signature; add an unexported helper (decided in review round %d)", c.ident, c.n(2, 7))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "goflags", Value: fmt.Sprintf("GOFLAGS=-p=%d -trimpath GOMAXPROCS=%d", c.n(2, 14), c.n(1, 31))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "deadline", Value: fmt.Sprintf("before the go1.%d freeze on %s %d", c.n(27, 3), c.pick("May", "November"), c.n(1, 28))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "builder", Value: fmt.Sprintf("%s-%s-longtest #%d", c.pick("linux", "windows", "darwin"), c.pick("amd64", "arm64"), c.n(1000, 9000))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "flake_rate", Value: fmt.Sprintf("%s fails 1 in %d runs under -race", c.test, c.n(30, 970))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "runner", Value: fmt.Sprintf("gomote %s-%d (%d cores, %d GB)", c.pick("linux-amd64", "linux-arm64", "openbsd-amd64"), c.n(1, 99), 2*c.n(1, 32), 4*c.n(1, 32))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "gocache", Value: fmt.Sprintf("GOCACHE=/ci/cache/%08x (cold)", c.rng.Uint32())}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "shuffle", Value: fmt.Sprintf("-shuffle=%d", 1700000000+c.n(0, 90000000))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "timeout", Value: fmt.Sprintf("-timeout=%dm (raised from %dm)", c.n(21, 40), c.n(5, 15))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "artifact", Value: fmt.Sprintf("ci-artifacts/%d/%s-race.log", c.n(10000, 90000), c.base)}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "coverage", Value: fmt.Sprintf("%s coverage %d.%d%% of statements", c.pkg, c.n(40, 58), c.n(0, 10))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "perf_budget", Value: fmt.Sprintf("%s under %d ns at %d KiB of input", c.ident, c.n(100, 5000), c.n(1, 512))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "merge_window", Value: fmt.Sprintf("%s %02d:%02d UTC", c.pick("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"), c.n(6, 14), 15*c.n(0, 4))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "style_rule", Value: fmt.Sprintf("failures read %s(%%q) = %%v, want %%v (rule %d of the review)", c.ident, c.n(2, 20))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "release_note", Value: fmt.Sprintf("%s: %s no longer %s (#%d)", c.pkg, c.ident, c.pick("blocks on a closed reader", "allocates per call", "wraps its errors twice"), c.n(60000, 20000))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "godebug", Value: fmt.Sprintf("GODEBUG=%s=%d", c.pick("gctrace", "madvdontneed", "asyncpreemptoff", "http2debug"), c.n(1, 2))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "cl", Value: fmt.Sprintf("go.dev/cl/%d (patch set %d)", c.n(600000, 99999), c.n(2, 14))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "panic", Value: fmt.Sprintf("runtime error: index out of range [%d] with length %d", c.n(1, 4095), c.n(0, 4))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "heap", Value: fmt.Sprintf("inuse_space %d.%d MB after %d calls (pprof top: %s.%s)", c.n(12, 800), c.n(0, 10), 1000*c.n(1, 99), c.base, c.ident)}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "os_arch", Value: fmt.Sprintf("only on GOARCH=%s GOAMD64=v%d", c.pick("amd64", "386"), c.n(1, 4))}
	},
	func(c *factContext) replay.Fact {
		return replay.Fact{Key: "owner", Value: fmt.Sprintf("@%s-%s (owns %s since go1.%d)", c.pick("ada", "kenji", "oluwa", "marta"), c.pick("fischer", "sato", "adeyemi", "novak"), c.pkg, c.n(10, 15))}
	},
}

// systemPromptStd is the system prompt of the unseen sessions.
const systemPromptStd = `You are Reika, a coding agent working inside the user's editor through a language server.
You work in the Go distribution's source tree (GOROOT/src): the standard library and the go command.
Use the tools to read files, search, run commands and edit; never guess file contents you have not read.
Prefer small, reviewable edits. After changing code, build and run the relevant tests. When a command's
output is long it may be cut or saved to a file: read that file in pages rather than running the command
again. Keep the user's constraints and exact values (paths, commands, names) as they were given. When the
task is done, say what you changed, how you verified it, and anything left open.

Conventions of this tree:
- The standard library depends on nothing outside it; every exported name has a doc comment.
- Errors are lowercase, prefixed with the package's name where the package does so already.
- Tests are table-driven where that reads well; failures say what was called, what came back and what was wanted.`
