package contextwin

import (
	"fmt"
	"slices"
	"testing"
)

// ats is the positions of a mirror's checkpoints.
func ats(c engineCache) []int {
	var out []int
	for _, p := range c.points {
		out = append(out, p.at)
	}
	return out
}

func TestCheckpointsTakenAtTheEndOfEachPrompt(t *testing.T) {
	m := CacheModel{Class: CacheCheckpointed}.withDefaults()
	var c engineCache
	c = m.processed(c, 0, 2000) // the first prompt, processed whole
	if got, want := ats(c), []int{2000 - 4 - 512, 2000 - 4}; !slices.Equal(got, want) {
		t.Fatalf("after a 2000-token prompt the checkpoints are %v, want %v", got, want)
	}
	c = m.processed(c, 2000, 2100) // an append of 100 tokens: only n−4 was processed
	if got, want := ats(c), []int{1484, 1996, 2000, 2096}; !slices.Equal(got, want) {
		t.Fatalf("after an append the checkpoints are %v, want %v", got, want)
	}
	c = m.processed(c, 1484, 1800)                                        // a change restarted at 1484: the later ones are gone
	if got, want := ats(c), []int{1484, 1796}; !slices.Equal(got, want) { // 1484 is already one
		t.Fatalf("after a restart at 1484 the checkpoints are %v, want %v", got, want)
	}
	small := CacheModel{Class: CacheCheckpointed, Checkpoints: 2}.withDefaults()
	var d engineCache
	for n := 1000; n <= 1400; n += 100 {
		d = small.processed(d, d.n, n)
	}
	if got, want := ats(d), []int{484, 1396}; !slices.Equal(got, want) {
		t.Fatalf("with 2 checkpoints a slot keeps %v, want the first and the newest %v", got, want)
	}
	close := CacheModel{Class: CacheCheckpointed, Checkpoints: 2, MinStep: 64}.withDefaults()
	d = engineCache{}
	for n := 1000; n <= 1400; n += 100 {
		d = close.processed(d, d.n, n)
	}
	if got, want := ats(d), []int{1296, 1396}; !slices.Equal(got, want) {
		t.Fatalf("with 2 checkpoints 64 apart at least a slot keeps %v, want the newest %v", got, want)
	}
	// The mirror keeps them for a dense engine too (a restart at one tells
	// a checkpointed engine), but a dense one never restarts at them.
	dense := CacheModel{Class: CacheDense}.withDefaults()
	if got := dense.restart(dense.processed(c, 0, 3000), 2500); got != 2500 {
		t.Fatalf("a dense engine restarts a change at 2500 at %d", got)
	}
}

// The figures of llama-server build 11669 serving the tiny mamba model
// (llamatest): a prompt of 3053 tokens, then 40 appends of 142; the slot
// kept the first prompt's checkpoint at 2537 and the newest ones from
// 6887 on (llamatest's TestCheckpointsOfAFullSlot: a change at 3550
// restarted at 2537, one at 6950 at 6887).
func TestCheckpointsOfAMeasuredSlot(t *testing.T) {
	m := CacheModel{Class: CacheCheckpointed}.withDefaults()
	c := m.processed(engineCache{}, 0, 3053)
	for i := 1; i <= 40; i++ {
		c = m.processed(c, c.n, 3053+142*i)
	}
	for change, want := range map[int]int{2600: 2537, 3500: 2537, 6500: 2537, 6900: 6887, 7050: 7029} {
		if got := m.restart(c, change); got != want {
			t.Errorf("a change at %d restarts at %d, want %d as measured", change, got, want)
		}
	}
}

func TestRestartByClass(t *testing.T) {
	var c engineCache
	ck := CacheModel{Class: CacheCheckpointed}.withDefaults()
	c = ck.processed(c, 0, 4000)    // checkpoints at 3484, 3996
	c = ck.processed(c, 4000, 4300) // and 4000, where it started, and 4296
	cases := []struct {
		m      CacheModel
		common int
		want   int
	}{
		{CacheModel{Class: CacheDense}, 2053, 2053},
		{CacheModel{Class: CacheUnknown}, 2053, 2053},
		{CacheModel{Class: CacheBlocks}, 2053, 2048},
		{ck, 4300, 4300}, // an append
		{ck, 2053, 0},    // before every checkpoint: from 0
		{ck, 3600, 3484}, // the newest checkpoint at or before the change
		{ck, 4296, 4296}, // one just at it
		{ck, 4295, 4000}, // one token before it: the one before, where the append started
		{CacheModel{Class: CacheCheckpointed, SWA: 512}, 3900, 3900}, // within the window of the end
		{CacheModel{Class: CacheCheckpointed, SWA: 512}, 3700, 3484}, // beyond it
	}
	for _, tc := range cases {
		m := tc.m.withDefaults()
		if got := m.restart(c, tc.common); got != tc.want {
			t.Errorf("%s, a change at %d of a %d-token prompt: restart at %d, want %d", m, tc.common, c.n, got, tc.want)
		}
	}
}

func TestParseCacheClass(t *testing.T) {
	for in, want := range map[string]CacheClass{"": CacheUnknown, "Dense": CacheDense, " checkpointed ": CacheCheckpointed, "blocks": CacheBlocks} {
		if got, err := ParseCacheClass(in); err != nil || got != want {
			t.Errorf("ParseCacheClass(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseCacheClass("swa"); err == nil {
		t.Error("ParseCacheClass(\"swa\") took a name that is no class")
	}
}

// checkpointEngine is a test double of llama.cpp serving a recurrent
// model, written apart from the planner's mirror: it finds where each
// request really changes (token by token, from the rendered bytes),
// restarts at its newest checkpoint at or before that, and takes
// checkpoints at n−4−512 and n−4 of what it processed.
type checkpointEngine struct {
	dense   bool // restart at the change: the ideal
	minStep int  // --checkpoint-min-step; 0 is 8192
	// boundary, when not 0, makes it vLLM serving a hybrid model: the
	// state of each prompt kept only at its last boundary of blocks of so
	// many tokens, the newest 32 of them, and every request, an append
	// too, restarted at the newest at or before its change.
	boundary int
	// prefixTokens, when not 0, is the fixed prefix's count, at a
	// density of its own (a system prompt of tool schemas), the rest at
	// engineCharsPerToken.
	prefixTokens int
	prev         []byte
	points       []int
	prefilled    int
	events       int // requests that restarted before their change
	far          int // of them, those that restarted far before it
}

func (e *checkpointEngine) send(prefixChars int, msgs []Message) (promptTokens, cached int) {
	var b []byte
	b = append(b, make([]byte, prefixChars)...)
	for _, m := range msgs {
		b = append(b, string(m.Role)+"|"+m.Content+"|"+m.Reasoning+"|"...)
		for _, c := range m.ToolCalls {
			b = append(b, c.ID+c.Name+c.Arguments...)
		}
		b = append(b, '\n')
	}
	tokens := func(n int) int {
		switch {
		case e.prefixTokens == 0:
			return engineTokens(n)
		case n <= prefixChars:
			return n*e.prefixTokens/prefixChars + 1
		}
		return e.prefixTokens + engineTokens(n-prefixChars)
	}
	n := tokens(len(b))
	common := 0
	for common < len(b) && common < len(e.prev) && b[common] == e.prev[common] {
		common++
	}
	c := tokens(common) - 1
	from := c
	if e.boundary > 0 {
		e.prev = b
		return n, e.atBoundary(n, c)
	}
	if common < len(e.prev) && !e.dense { // not an append: the newest checkpoint at or before the change
		from = 0
		for _, p := range e.points {
			if p <= c {
				from = p
			}
		}
		if from < c {
			e.events++
		}
		if from+64+c*15/100 < c {
			e.far++ // far enough before the change to tell from an estimate's error
		}
	}
	keep := e.points[:0]
	for _, p := range e.points {
		if p <= from {
			keep = append(keep, p)
		}
	}
	for _, p := range []int{from, n - 4 - 512, n - 4} {
		if p >= from && p > 0 && (len(keep) == 0 || keep[len(keep)-1] < p) {
			keep = append(keep, p)
		}
	}
	step := e.minStep
	if step == 0 {
		step = 8192
	}
	for len(keep) > 32 { // full: the oldest within the step of the one before it goes, else the oldest
		i := 1
		for i < len(keep) && keep[i]-keep[i-1] >= step {
			i++
		}
		if i == len(keep) {
			i = 0
		}
		keep = append(keep[:i], keep[i+1:]...)
	}
	e.points, e.prev = keep, b
	e.prefilled += n - from
	return n, from
}

// atBoundary is send for a boundary engine: a prompt of n tokens that
// shares c with the last restarts at the newest boundary at or before c.
func (e *checkpointEngine) atBoundary(n, c int) int {
	from := 0
	keep := e.points[:0]
	for _, p := range e.points {
		if p <= c {
			from = p
			keep = append(keep, p)
		}
	}
	if b := n / e.boundary * e.boundary; b > from {
		keep = append(keep, b)
	}
	if len(keep) > 32 {
		keep = keep[len(keep)-32:]
	}
	e.points = keep
	e.prefilled += n - from
	return from
}

// planOn plans s's next request, answering on e the note round a fold
// asks for first.
func planOn(s *Planner, e *checkpointEngine, prefixChars int) Plan {
	return planNoted(s, e, prefixChars, "state: working\nbuild: passes")
}

// planNoted is planOn with the note the model writes.
func planNoted(s *Planner, e *checkpointEngine, prefixChars int, note string) Plan {
	p := s.Plan()
	if p.Event == Note {
		for _, m := range p.Checkpoints {
			n, c := e.send(prefixChars, m)
			s.ObserveCheckpoint(Usage{PromptTokens: n, CompletionTokens: 1, Cached: c, CachedKnown: true})
		}
		n, c := e.send(prefixChars, p.Messages)
		s.Observe(Usage{PromptTokens: n, CompletionTokens: 200, Cached: c, CachedKnown: true})
		s.SetNote(note)
		p = s.Plan()
	}
	return p
}

// sendOn sends p's checkpoint requests and then its request to e, and
// gives s the engine's figures.
func sendOn(s *Planner, e *checkpointEngine, prefixChars int, p Plan) {
	for _, m := range p.Checkpoints {
		n, c := e.send(prefixChars, m)
		s.ObserveCheckpoint(Usage{PromptTokens: n, CompletionTokens: 1, Cached: c, CachedKnown: true})
	}
	n, c := e.send(prefixChars, p.Messages)
	s.Observe(Usage{PromptTokens: n, CompletionTokens: 150, Cached: c, CachedKnown: true})
}

// runOn plays a session against a checkpointing engine and returns what
// it prefilled, and the planner's model at the end.
func runOn(t *testing.T, cfg Config, steps []step, dense bool) (prefilled, far int, m CacheModel) {
	t.Helper()
	return runOnEngine(t, cfg, steps, &checkpointEngine{dense: dense})
}

func runOnEngine(t *testing.T, cfg Config, steps []step, e *checkpointEngine) (prefilled, far int, m CacheModel) {
	t.Helper()
	s := NewPlanner(cfg)
	request := func() bool {
		p := planOn(s, e, cfg.PrefixChars)
		if p.TooSmall {
			return false
		}
		sendOn(s, e, cfg.PrefixChars, p)
		return true
	}
	for n, st := range steps {
		(&harness{s: s}).play(n, st)
		if !request() {
			t.Fatalf("the run ended at step %d", n)
		}
	}
	m, _ = s.CacheModel()
	return e.prefilled, e.far, m
}

// On an engine that restarts from checkpoints, the planner prefills
// about what it would on a dense one, where every event restarts at its
// change: whether it is told the class, told dense (wrongly), or left to
// learn it from the figures, which then teach it the class.
func TestCheckpointedEngineIsPricedAsOne(t *testing.T) {
	skipRacePass(t)
	for _, w := range []int{16384, 32768} {
		for seed := 1; seed <= 3; seed++ {
			steps := session(w, 60, seed)
			base := Config{Window: w, PrefixChars: 4000, Reserve: 1024}
			dense := base
			dense.Cache = CacheModel{Class: CacheDense}
			known := base
			known.Cache = CacheModel{Class: CacheCheckpointed}
			ideal, _, _ := runOn(t, dense, steps, true)
			for _, c := range []struct {
				name string
				cfg  Config
			}{{"told checkpointed", known}, {"told dense", dense}, {"told nothing", base}} {
				got, far, m := runOn(t, c.cfg, steps, false)
				t.Logf("window %d seed %d, %s: prefilled %d, %.3f of the %d a dense engine prefills; ended believing %s (far %d)", w, seed, c.name, got, float64(got)/float64(ideal), ideal, m, far)
				// A planner told the class does best; one that learns it
				// from the figures anchors its middle recap only once it
				// has, after folds priced as dense.
				bound := 1.08
				if float64(got) > bound*float64(ideal) {
					t.Errorf("window %d seed %d, %s: prefilled %d on the checkpointed engine, more than %.2f × the %d of a dense one", w, seed, c.name, got, bound, ideal)
				}
				if far > 0 && m.Class != CacheCheckpointed {
					t.Errorf("window %d seed %d, %s: the engine restarted far before a change %d times, yet the planner ended believing %s", w, seed, c.name, far, m)
				}
			}
		}
	}
}

// An engine started with a smaller --checkpoint-min-step keeps
// checkpoints the mirror thins out: a planner not told the step prefills
// about what one told it does (its folds restart at checkpoints taken
// since the fold before, which no step thins), and a restart at a
// checkpoint the mirror thinned teaches it a smaller step.
func TestCheckpointMinStepIsLearnt(t *testing.T) {
	skipRacePass(t)
	steps := session(65536, 200, 2)
	cfg := Config{Window: 65536, PrefixChars: 4000, Reserve: 1024, Cache: CacheModel{Class: CacheCheckpointed}}
	told := cfg
	told.Cache.MinStep = 512
	got, _, m := runOnEngine(t, cfg, steps, &checkpointEngine{minStep: 512})
	want, _, _ := runOnEngine(t, told, steps, &checkpointEngine{minStep: 512})
	t.Logf("min step 512: prefilled %d not told it (ended at %d), %d told", got, m.MinStep, want)

	s := NewPlanner(Config{Window: 65536, PrefixChars: 4000, Cache: CacheModel{Class: CacheCheckpointed, Checkpoints: 4}})
	tc := &s.cache
	for n := 0; n < 6*600; n += 600 { // appends of 600 tokens: a full slot thins the oldest
		tc.engine = tc.model.processed(tc.engine, n, n+600)
	}
	if len(tc.engine.thinned) == 0 {
		t.Fatalf("the mirror of a slot of 4 thinned nothing: %v", ats(tc.engine))
	}
	at := -1 // a thinned checkpoint well before a change, with none kept between
	for _, p := range tc.engine.thinned {
		if tc.model.restart(tc.engine, p.at+64) < p.at {
			at = p.at
		}
	}
	if at < 0 {
		t.Fatalf("no thinned checkpoint stands alone: kept %v", ats(tc.engine))
	}
	tc.common = at + 64
	s.learnCache(at, tc.model.restart(tc.engine, tc.common))
	if m, _ := s.CacheModel(); m.MinStep >= DefaultMinStep {
		t.Errorf("a restart at the thinned checkpoint %d left a min step of %d", at, m.MinStep)
	}
	if float64(got) > 1.02*float64(want) {
		t.Errorf("learning the step prefilled %d, more than 1.02 × the %d of a planner told it", got, want)
	}
}

// A dense engine, whose restarts come back to the same places (a rewrite
// of the recap changes the request where the last one did), is never
// taken for a checkpointed one.
func TestDenseEngineStaysDense(t *testing.T) {
	skipRacePass(t)
	for _, w := range []int{16384, 32768} {
		for seed := 1; seed <= 3; seed++ {
			_, _, m := runOnEngine(t, Config{Window: w, PrefixChars: 4000, Reserve: 1024}, session(w, 60, seed), &checkpointEngine{dense: true})
			if m.Class != CacheDense {
				t.Errorf("window %d seed %d: on a dense engine the planner ended believing %s", w, seed, m)
			}
		}
	}
}

// Where a request changes is counted from the engine's own figures for
// the requests before it (each one's prompt ends a message at a known
// token), not from one ratio over the whole prompt: on a prompt whose
// tool results run at 2 bytes a token and the rest at 6, a change at
// the start of an older round is placed within the template's few
// tokens, where the ratio alone misses it by hundreds.
func TestChangePointCountedFromTheEnginesFigures(t *testing.T) {
	cfg := Config{Window: 131072, PrefixChars: 4000, Cache: CacheModel{Class: CacheCheckpointed}}
	s := NewPlanner(cfg)
	tokens := func(msgs []Message) int { // the engine's count up to the end of msgs
		n := cfg.PrefixChars / 4
		for _, m := range msgs {
			if m.Role == Tool {
				n += sizeOf(m) / 2
			} else {
				n += sizeOf(m) / 6
			}
		}
		return n
	}
	h := harness{s: s}
	s.Append(Message{Role: User, Content: "Find where the cache is primed."})
	var sent []Message
	for n := range 12 {
		if n > 0 {
			h.round(n, []result{{kind: Read, path: fmt.Sprintf("f%d.go", n), chars: 3000 + 700*n}})
		}
		p := s.Plan()
		if p.Event != Append {
			t.Fatalf("request %d: %s, want an append", n, p.Event)
		}
		s.Observe(Usage{PromptTokens: tokens(p.Messages) + promptTail, CompletionTokens: 40})
		sent = p.Messages
	}
	for k := 1; k < len(sent); k++ {
		if sent[k].Role != Assistant {
			continue
		}
		changed := slices.Clone(sent)
		changed[k].Content = "rewritten"
		truth := tokens(sent[:k])
		got := s.commonTokens(changed)
		bytes := cfg.PrefixChars
		for _, m := range sent[:k] {
			bytes += sizeOf(m)
		}
		if d := got - truth; d < -2 || d > 2 {
			t.Errorf("a change at message %d (token %d) is counted at %d", k, truth, got)
		}
		if off := s.est.Known(bytes) - truth; k > 6 && off > -100 && off < 100 {
			t.Errorf("at message %d the ratio alone errs by %d tokens: the test shows nothing", k, s.est.Known(bytes)-truth)
		}
	}
}
