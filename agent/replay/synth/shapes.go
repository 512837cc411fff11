package synth

import (
	"fmt"
	"math/rand/v2"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/reika-lsp/reika/agent/replay"
	"github.com/reika-lsp/reika/contextwin"
)

// The shaped sessions: sessions of the shapes users have that the unseen
// ones lack, each drawn from a seed out of a codebase that is not Go.
//
//   - "pytest": a Python package of the standard library, 200–450 rounds,
//     pytest logs of 60–200 KB whose failing test, with facts printed
//     inside its block, sits 8–14 lines above the log's end;
//   - "tap": the same of npm's JavaScript sources and node --test's TAP;
//   - "pastes": a chat of 24 user turns, each pasting 1.5–4 KB of CI
//     output or a stack trace, a few rounds of work and an answer each;
//     a later turn corrects a value an earlier one gave (the fact's key
//     planted again: the newest value is the one wanted);
//   - "longturn": one turn of 1,500–1,700 rounds and 36–40 facts, in
//     notes, short outputs and the heads and failure blocks of long logs.
//
// Pastes and long turns take Python or JavaScript at random.

// ShapeKinds are the kinds of shaped sessions, in test order.
var ShapeKinds = []string{"pytest", "tap", "pastes", "longturn"}

// Shapes generates the shaped sessions of this machine's Python and npm
// sources. The same sources and seed give the same bytes; it is safe for
// concurrent use.
type Shapes struct {
	roots map[*lang]string
	trees map[*lang][]string

	mu     sync.Mutex
	loaded map[string]*Source
}

// NewShapes finds the sources: Python's standard library (PythonRoot) and
// npm's (NpmRoot). Either missing is an error that says which.
func NewShapes() (*Shapes, error) {
	py, err := PythonRoot()
	if err != nil {
		return nil, fmt.Errorf("shaped sessions: %w", err)
	}
	js, err := NpmRoot()
	if err != nil {
		return nil, fmt.Errorf("shaped sessions: %w", err)
	}
	s := &Shapes{roots: map[*lang]string{python: py, javascript: js}, trees: map[*lang][]string{}, loaded: map[string]*Source{}}
	for l, root := range s.roots {
		t, err := langTrees(l, root)
		if err != nil {
			return nil, fmt.Errorf("shaped sessions: %w", err)
		}
		s.trees[l] = t
	}
	return s, nil
}

// tree loads the tree dir of l once.
func (s *Shapes) tree(l *lang, dir string) (*Source, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := l.name + ":" + dir
	if src, ok := s.loaded[key]; ok {
		return src, nil
	}
	src, err := LoadTree(s.roots[l], dir, l.version+" "+dir)
	if err != nil {
		return nil, err
	}
	s.loaded[key] = src
	return src, nil
}

// ShapeName is the name of the session of kind and seed.
func ShapeName(kind string, seed uint64) string { return fmt.Sprintf("%s-%d", kind, seed) }

// ShapeSession is one shaped session and where its facts are: "task",
// "user" (a later user message), "paste" (inside a pasted log or trace),
// "correction" (a value given anew), "notes", "short", "loghead" (a long
// log's first line), "failblock" (a long log's failure block, 8–14 lines
// above its end).
type ShapeSession struct {
	Kind      string
	Seed      uint64
	Recording *replay.Recording
	Where     map[string]string
}

// Session generates the session of kind and seed.
func (s *Shapes) Session(kind string, seed uint64) (*ShapeSession, error) {
	if !slices.Contains(ShapeKinds, kind) {
		return nil, fmt.Errorf("shaped session kind %q: want one of %v", kind, ShapeKinds)
	}
	rng := rand.New(rand.NewPCG(seed, 0x7368617065))
	l := python
	switch {
	case kind == "tap":
		l = javascript
	case kind != "pytest" && rng.IntN(2) == 1:
		l = javascript
	}
	for _, i := range rng.Perm(len(s.trees[l])) {
		src, err := s.tree(l, s.trees[l][i])
		if err != nil {
			return nil, err
		}
		g, err := newShapeGen(l, src, s.trees[l][i], kind, seed, rng)
		if err != nil {
			continue
		}
		rec := g.record()
		return &ShapeSession{Kind: kind, Seed: seed, Recording: rec, Where: g.where}, nil
	}
	return nil, fmt.Errorf("shaped session %s: no %s tree with a module to work in", ShapeName(kind, seed), l.name)
}

// shapeGen records one shaped session.
type shapeGen struct {
	*builder
	l      *lang
	kind   string
	big    string
	code   []string // modules of 100 lines or more
	funcs  []string // functions of the edited modules
	answer map[int]bool
	where  map[string]string
	fns    map[string][]string // the functions of each module of code
	logs   int                 // long logs so far
}

func newShapeGen(l *lang, src *Source, tree, kind string, seed uint64, rng *rand.Rand) (*shapeGen, error) {
	code := l.sources(src, 100)
	if len(code) < 3 {
		return nil, errNoFocus
	}
	big := code[0]
	for _, p := range code {
		if strings.Count(src.files[p], "\n") > strings.Count(src.files[big], "\n") {
			big = p
		}
	}
	if strings.Count(src.files[big], "\n") < 300 {
		return nil, errNoFocus
	}
	edits := []string{big}
	for _, i := range rng.Perm(len(code)) {
		if len(edits) < 3 && code[i] != big {
			edits = append(edits, code[i])
		}
	}
	g := &shapeGen{l: l, kind: kind, big: big, answer: map[int]bool{}, where: map[string]string{}, fns: map[string][]string{}}
	for _, p := range code {
		if fns := l.funcs(src.files[p]); len(fns) > 0 {
			g.fns[p] = fns
			g.code = append(g.code, p)
		}
	}
	for _, p := range edits {
		g.funcs = append(g.funcs, g.fns[p]...)
	}
	if len(g.funcs) < 3 {
		return nil, errNoFocus
	}
	spec := recipe{name: ShapeName(kind, seed), seed: seed, focus: path.Dir(big), edits: edits, tree: tree, big: big,
		users: map[int]string{}, system: l.system, mix: "shape"}
	b := &builder{src: src, spec: spec, rng: rand.New(rand.NewPCG(seed, 0x62756c64)), files: map[string]string{}}
	for k, v := range src.files {
		b.files[k] = v
	}
	g.builder = b
	g.plan(rng)
	return g, nil
}

// plan draws the session's rounds, task, user turns and facts' places.
func (g *shapeGen) plan(rng *rand.Rand) {
	sp := &g.spec
	fn := g.funcs[rng.IntN(len(g.funcs))]
	bigLines := strings.Count(g.files[g.big], "\n")
	sp.task = fmt.Sprintf(shapeTasks[rng.IntN(len(shapeTasks))], path.Dir(g.big), g.big, bigLines, fn, g.l.name)
	var facts []replay.Fact
	gen := newFactDraw(rng, fn, g.big)
	var total, users int
	switch g.kind {
	case "pytest", "tap":
		sp.rounds, total, users = 200+rng.IntN(251), 22+rng.IntN(5), 3
	case "pastes":
		sp.rounds, total, users = 0, 26+rng.IntN(5), 24
	case "longturn":
		sp.rounds, total, users = 1500+rng.IntN(201), 36+rng.IntN(5), 0
	}
	for range total {
		facts = append(facts, gen.next())
	}
	for _, f := range facts[:5] {
		sp.taskFacts = append(sp.taskFacts, f)
		g.where[f.Key] = "task"
	}
	rest := facts[5:]
	used := map[int]bool{}
	place := func(n int, where string, f replay.Fact) {
		used[n] = true
		sp.places = append(sp.places, factPlace{n, where, f})
		g.where[f.Key] = where
	}
	if g.kind == "pastes" {
		rest = g.planTurns(rng, rest, place)
	} else {
		for i := range users {
			n := 8 + rng.IntN(sp.rounds-20)
			for used[n] {
				n = 8 + rng.IntN(sp.rounds-20)
			}
			sp.users[n] = strings.ReplaceAll(userTexts[i%len(userTexts)], "{pkg}", path.Dir(g.big))
			place(n, "user", rest[i])
		}
		rest = rest[users:]
		g.answer[sp.rounds] = true
	}
	kinds := []string{"failblock", "failblock", "loghead", "short", "notes"}
	for i, f := range rest {
		n := 4 + rng.IntN(sp.rounds-8)
		for used[n] || g.answer[n] || sp.users[n] != "" {
			n = 4 + rng.IntN(sp.rounds-8)
		}
		place(n, kinds[i%len(kinds)], f)
	}
	sort.SliceStable(sp.places, func(i, j int) bool { return sp.places[i].round < sp.places[j].round })
	sp.bigReads = map[int]bool{3 + rng.IntN(6): true}
}

// planTurns lays out the 24 user turns of a pastes session: each a paste
// (most with a fact inside), 2–8 rounds of work and an answer; the 17th
// to 22nd corrects a value an earlier paste gave. It returns the facts
// left to place elsewhere.
func (g *shapeGen) planTurns(rng *rand.Rand, facts []replay.Fact, place func(int, string, replay.Fact)) []replay.Fact {
	sp := &g.spec
	n := 1
	pasted := []replay.Fact{}
	fix := 16 + rng.IntN(6)
	for turn := range 24 {
		if turn > 0 {
			sp.users[n] = "paste"
			switch {
			case turn == fix && len(pasted) > 0:
				old := pasted[rng.IntN(len(pasted))]
				f := replay.Fact{Key: old.Key, Value: correct(rng, old.Value)}
				sp.places = append(sp.places, factPlace{n, "correction", f})
				g.where[f.Key] = "correction"
			case rng.IntN(5) > 0 && len(facts) > 8:
				place(n, "paste", facts[0])
				pasted = append(pasted, facts[0])
				facts = facts[1:]
			}
		}
		n += 2 + rng.IntN(7)
		g.answer[n] = true
		n++
	}
	sp.rounds = n - 1
	return facts
}

// correct is a value changed as a user's correction changes it: its
// numbers drawn anew.
func correct(rng *rand.Rand, v string) string {
	out := regexp.MustCompile(`\d+`).ReplaceAllStringFunc(v, func(d string) string {
		return fmt.Sprint(rng.IntN(9)+1) + strings.Repeat("7", len(d)-1)
	})
	if out == v {
		out += "-corrected"
	}
	return out
}

// shapeTasks are the shaped sessions' tasks: %[1]s the package, %[2]s
// the big module, %[3]d its lines, %[4]s a function, %[5]s the language.
var shapeTasks = []string{
	"CI is red on %[1]s since the last merge. The failing tests point at %[4]s in %[2]s (%[3]d lines): read it whole " +
		"first, find the cause, fix it with the smallest change that holds and add a regression test. Keep the linter clean.",
	"A user reports that %[4]s in %[2]s (%[3]d lines of %[5]s) gives a wrong result on some inputs. Reproduce it with a " +
		"test, fix it, and make sure the whole test suite of %[1]s still passes.",
	"Make %[4]s (in %[2]s, %[3]d lines) handle empty and very large inputs; the logs CI keeps are long, the failure is " +
		"near their end. Read the module whole before changing it, and add tests for both cases.",
}

// record builds the session, round by round.
func (g *shapeGen) record() *replay.Recording {
	b, sp := g.builder, &g.spec
	b.pending = slices.Clone(sp.places)
	task := sp.task + "\n"
	for _, f := range sp.taskFacts {
		task += "\nFACT " + f.Key + ": " + f.Value
		b.facts = append(b.facts, replay.Fact{Key: f.Key, Value: f.Value, Round: 1})
	}
	for n := 1; n <= sp.rounds; n++ {
		b.cur = replay.Round{}
		switch {
		case n == 1:
			b.cur.User = task
		case sp.users[n] == "paste":
			b.cur.User = g.paste(n)
		case sp.users[n] != "":
			b.cur.User = sp.users[n]
			for _, f := range b.due(n, "user") {
				b.cur.User += "\nFACT " + f.Key + ": " + f.Value
			}
		}
		if g.answer[n] {
			g.say("Summary of this turn: I looked at %s and changed %s; the focused tests pass. Tell me what to look at next.",
				g.big, strings.Join(sp.edits[:1+b.rng.IntN(len(sp.edits))], ", "))
		} else {
			g.step(n)
		}
		b.rounds = append(b.rounds, b.cur)
	}
	return &replay.Recording{Name: sp.name, Source: b.src.rev, System: sp.system, RepoMap: repoMapLang(g.l, b.src), Tools: toolDefs,
		Facts: b.facts, Rounds: b.rounds}
}

// step makes round n: the big module read whole on its round, the facts
// due in their places, else a round drawn at random.
func (g *shapeGen) step(n int) {
	b := g.builder
	switch {
	case n == 1:
		b.say("Let me see the files in %s.", g.spec.focus)
		b.listDir(n, g.spec.focus)
	case g.spec.bigReads[n]:
		b.say("The task points at %s; reading it whole.", g.big)
		b.readWhole(n, g.big)
	case b.hasDue(n, "notes"):
		b.notesRound(n)
	case b.hasDue(n, "short"):
		g.short(n)
	case b.hasDue(n, "loghead") || b.hasDue(n, "failblock"):
		g.longLog(n)
	default:
		g.random(n)
	}
}

// random makes a round of ordinary work: reads, searches, edits, tests,
// short commands and now and then a long log.
func (g *shapeGen) random(n int) {
	b := g.builder
	r := b.rng.Float64()
	switch {
	case r < 0.16:
		b.sayRead()
		p := g.code[b.rng.IntN(len(g.code))]
		if b.rng.IntN(2) == 0 {
			p = g.spec.edits[b.rng.IntN(len(g.spec.edits))]
		}
		b.readFile(n, p)
	case r < 0.28:
		g.readRange(n)
	case r < 0.40:
		g.grep(n)
	case r < 0.62:
		g.edit(n)
	case r < 0.80:
		g.smallTest(n)
	case r < 0.97 || g.kind == "longturn" && g.logs > n/60:
		g.short(n)
	default:
		g.longLog(n)
	}
}

// readRange reads 30–150 lines of a module read or edited before.
func (g *shapeGen) readRange(n int) {
	b := g.builder
	pool := append(slices.Clone(b.read), g.spec.edits...)
	p := pool[b.rng.IntN(len(pool))]
	lines := fileLines(b.files[p])
	count := min(len(lines), 30+b.rng.IntN(120))
	from := 1 + b.rng.IntN(len(lines)-count+1)
	b.say("Reading that part of %s again, with the lines around it.", p)
	b.call(n, "read", map[string]any{"path": p, "offset": from, "limit": count}, numbered(lines[from-1:from-1+count], from),
		contextwin.Payload{Kind: contextwin.Read, Path: p, From: from, To: from + count - 1, Total: len(lines)})
}

// grep searches the tree for a function of the edited modules.
func (g *shapeGen) grep(n int) {
	b := g.builder
	fn := g.funcs[b.rng.IntN(len(g.funcs))]
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(fn) + `\b`)
	var out []string
	for _, p := range b.src.paths {
		if !strings.HasSuffix(p, g.l.ext) || !re.MatchString(b.files[p]) {
			continue
		}
		for i, line := range fileLines(b.files[p]) {
			if re.MatchString(line) && len(out) <= maxMatches {
				out = append(out, fmt.Sprintf("%s:%d:%s", p, i+1, line))
			}
		}
	}
	text := strings.Join(out, "\n") + "\n"
	if len(out) == 0 {
		text = "No matches found."
	}
	b.say("Searching for every use of %s.", fn)
	b.call(n, "grep", map[string]any{"pattern": `\b` + fn + `\b`}, text, contextwin.Payload{Kind: contextwin.Search, Path: fn})
}

// edit changes two to four lines of an edited module: a comment added.
func (g *shapeGen) edit(n int) {
	b := g.builder
	p := g.spec.edits[b.rng.IntN(len(g.spec.edits))]
	lines := fileLines(b.files[p])
	at := b.rng.IntN(len(lines) - 4)
	for range 50 {
		if t := strings.TrimSpace(lines[at]); t != "" && !strings.HasPrefix(t, strings.TrimSpace(g.l.comment)) {
			break
		}
		at = b.rng.IntN(len(lines) - 4)
	}
	k := 2 + b.rng.IntN(3)
	old := lines[at : at+k]
	indent := old[0][:len(old[0])-len(strings.TrimLeft(old[0], " \t"))]
	note := []string{"keep the empty case apart", "the caller may pass None here", "bounded: see the regression test",
		"read the whole buffer before parsing", "never re-enter while the lock is held"}[b.rng.IntN(5)]
	repl := append([]string{indent + g.l.comment + note}, old...)
	b.say("A small edit to %s.", p)
	b.replaceLines(n, p, lines, at, k, repl)
}

// failure draws a failing test of the edited modules.
func (g *shapeGen) failure() failure {
	b := g.builder
	p := g.spec.edits[b.rng.IntN(len(g.spec.edits))]
	fn := g.funcs[b.rng.IntN(len(g.funcs))]
	return failure{file: p, fn: fn, test: g.l.testID(p, fn, caseWords[b.rng.IntN(len(caseWords))]), line: 20 + b.rng.IntN(400),
		got: fmt.Sprint(b.rng.IntN(50)), want: fmt.Sprint(50 + b.rng.IntN(50))}
}

// smallTest runs one test: it passes, or fails in a few lines.
func (g *shapeGen) smallTest(n int) {
	b := g.builder
	f := g.failure()
	var cmd, out string
	if g.l == python {
		cmd = "python3 -m pytest -q " + f.test
		if b.rng.IntN(2) == 0 {
			out = fmt.Sprintf(".\n1 passed in 0.%02ds\n", b.rng.IntN(100))
		} else {
			out = fmt.Sprintf("F\n%s:%d: AssertionError: assert %s == %s\nFAILED %s\n1 failed in 0.%02ds\n", g.l.testFile(f.file), f.line, f.got, f.want, f.test, b.rng.IntN(100))
		}
	} else {
		cmd = fmt.Sprintf("node --test --test-name-pattern=%q %s", f.fn, g.l.testFile(f.file))
		if b.rng.IntN(2) == 0 {
			out = fmt.Sprintf("TAP version 13\nok 1 - %s\n1..1\n# pass 1\n# fail 0\n", f.test)
		} else {
			out = fmt.Sprintf("TAP version 13\nnot ok 1 - %s\n  error: '%s !== %s'\n1..1\n# pass 0\n# fail 1\n", f.test, f.got, f.want)
		}
	}
	b.say("Running the focused test.")
	b.call(n, "bash", map[string]any{"command": cmd}, out, contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}

// short runs a command with a line or two of output, and the facts due
// there.
func (g *shapeGen) short(n int) {
	b := g.builder
	cmds := g.l.shortCommands(b.rng, g.spec.edits)
	c := cmds[b.rng.IntN(len(cmds))]
	out := c[1]
	for _, f := range b.due(n, "short") {
		out += "FACT " + f.Key + ": " + f.Value + "\n"
	}
	if out == "" {
		out = "(no output; exit status 0)\n"
	}
	b.say("%s", c[2])
	b.call(n, "bash", map[string]any{"command": c[0]}, out, contextwin.Payload{Kind: contextwin.Command, Path: c[0]})
}

// longLog runs the whole suite: a log of 60–200 KB, the facts due at its
// head on its first line, those due in its failure block inside it, 8–14
// lines above its end.
func (g *shapeGen) longLog(n int) {
	b := g.builder
	g.logs++
	target := 60<<10 + b.rng.IntN(130<<10)
	var lines []string
	size := 0
	add := func(s string) { lines = append(lines, s); size += len(s) + 1 }
	for _, f := range b.due(n, "loghead") {
		add("FACT " + f.Key + ": " + f.Value)
	}
	total := target / 80
	for _, s := range g.l.logHead(b.rng, total) {
		add(s)
	}
	var facts []string
	for _, f := range b.due(n, "failblock") {
		facts = append(facts, "FACT "+f.Key+": "+f.Value)
	}
	if len(facts) > 3 {
		panic("shaped session: more than 3 facts in one failure block")
	}
	passed := 0
	for size < target {
		p := g.code[b.rng.IntN(len(g.code))]
		fns := g.fns[p]
		passed++
		add(g.l.passLine(b.rng, g.l.testID(p, fns[b.rng.IntN(len(fns))], caseWords[b.rng.IntN(len(caseWords))]), passed, total))
	}
	lines = append(lines, g.l.logTail(b.rng, g.failure(), facts, passed)...)
	cmd := "python3 -m pytest -v --cov 2>&1 | tee ci-test.log"
	if g.l == javascript {
		cmd = "npm test -- --test-reporter=tap 2>&1 | tee ci-test.log"
	}
	b.say("Running the whole suite as CI does; the failure is near the end of the log.")
	b.call(n, "bash", map[string]any{"command": cmd, "timeout": 900}, strings.Join(lines, "\n")+"\n", contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}

// paste is the user's message of a pastes session's turn: CI output or a
// stack trace of 1.5–4 KB, with the fact due inside it, or a correction.
func (g *shapeGen) paste(n int) string {
	b := g.builder
	if fs := b.due(n, "correction"); len(fs) > 0 {
		f := fs[0]
		return fmt.Sprintf("Correction: the %s I pasted earlier was from the wrong run. This is the right one, please use it from now on:\nFACT %s: %s\n\nThe CI output of that run, again:\n%s",
			f.Key, f.Key, f.Value, g.pasteBody(1500+b.rng.IntN(2500), ""))
	}
	fact := ""
	for _, f := range b.due(n, "paste") {
		fact = "FACT " + f.Key + ": " + f.Value
	}
	intro := []string{"CI failed again on my branch, here is the output:", "Got this stack trace from production last night:",
		"The nightly job broke, log below. Can you look?", "Same thing on the other runner:"}[b.rng.IntN(4)]
	return intro + "\n```\n" + g.pasteBody(1500+b.rng.IntN(2500), fact) + "```\nWhat is going on?"
}

// pasteBody is size bytes of a test log's tail or a stack trace, with
// fact (when not empty) inside it.
func (g *shapeGen) pasteBody(size int, fact string) string {
	b := g.builder
	var lines []string
	n := 0
	if b.rng.IntN(2) == 0 {
		var frames []failure
		for range 4 + b.rng.IntN(8) {
			frames = append(frames, g.failure())
		}
		lines = g.l.stackTrace(b.rng, frames, g.l.errorLine(b.rng))
	} else {
		var facts []string
		if fact != "" {
			facts = []string{fact}
			fact = ""
		}
		lines = g.l.logTail(b.rng, g.failure(), facts, 100+b.rng.IntN(3000))
	}
	for _, l := range lines {
		n += len(l) + 1
	}
	var pre []string
	for i := 0; n < size; i++ {
		p := g.code[b.rng.IntN(len(g.code))]
		fns := g.fns[p]
		s := g.l.passLine(b.rng, g.l.testID(p, fns[b.rng.IntN(len(fns))], caseWords[b.rng.IntN(len(caseWords))]), i+1, 400)
		pre = append(pre, s)
		n += len(s) + 1
	}
	lines = append(pre, lines...)
	if fact != "" {
		at := len(lines) / 2
		lines = append(lines[:at], append([]string{fact}, lines[at:]...)...)
	}
	return strings.Join(lines, "\n") + "\n"
}
