package contextwin

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The checkpoints a plan asks for: the primer, a reset, the chain's plant,
// the front recap's rewrites.

// On an engine that restarts from checkpoints the session's first
// request is preceded by a primer, whose early checkpoint — the one a
// full slot keeps longest — stands just before the first message's
// text: every fold of the front changes the request there, and restarts
// a few tokens before it, not a micro-batch inside the fixed prefix.
func TestPrimerPutsTheFirstCheckpointBeforeTheFirstMessage(t *testing.T) {
	for _, c := range []struct {
		class CacheClass
		want  bool
	}{{CacheCheckpointed, true}, {CacheDense, false}, {CacheUnknown, false}} {
		cfg := Config{Window: 32768, PrefixChars: 9000, Cache: CacheModel{Class: c.class}}
		s := NewPlanner(cfg)
		s.Append(Message{Role: User, Content: "Find where the cache is primed."})
		p := s.Plan()
		if got := len(p.Checkpoints) == 1; got != c.want {
			t.Fatalf("%s: the first plan asks for %d checkpoint requests", c.class, len(p.Checkpoints))
		}
		if !c.want {
			continue
		}
		e := &checkpointEngine{}
		n, cached := e.send(cfg.PrefixChars, p.Checkpoints[0])
		s.ObserveCheckpoint(Usage{PromptTokens: n, CompletionTokens: 1, Cached: cached, CachedKnown: true})
		n, cached = e.send(cfg.PrefixChars, p.Messages)
		s.Observe(Usage{PromptTokens: n, CompletionTokens: 40, Cached: cached, CachedKnown: true})
		text := engineTokens(cfg.PrefixChars + len("user|"))
		if first := e.points[0]; first > text || first < text-DefaultUbatch/8 {
			t.Errorf("the slot's first checkpoint is at %d, want it just before the first message's text at %d", first, text)
		}
		if cached > text || cached < text-DefaultUbatch/8 {
			t.Errorf("the first request restarted at %d, want just before its text at %d", cached, text)
		}
		next := s.Plan()
		if len(next.Checkpoints) != 0 {
			t.Errorf("the second plan asks for %d checkpoint requests", len(next.Checkpoints))
		}
	}
}

// The primer sent as the first plan's checkpoint request is the warm-up
// the agent sends otherwise, and taken as one: either way the planner
// counts the fixed prefix as the engine did and knows the primer's
// checkpoint stands just before the first message, so a change there (a
// fold of the front) restarts at it, not at token 0. Without it, a prefix
// denser than the primer put the prefix's end before that checkpoint.
func TestPrimerCheckpointIsTheWarmUp(t *testing.T) {
	cfg := Config{Window: 32768, PrefixChars: 9000, Cache: CacheModel{Class: CacheCheckpointed}}
	// A task as sparse as the rest: counted from the first request's end,
	// the prefix's end would fall well before the primer's checkpoint.
	task := Message{Role: User, Content: "Find where the cache is primed. " + text(2000, 1)}
	prefixTokens := cfg.PrefixChars * 10 / 22 // 2.2 bytes a token: tool schemas
	usage := func(n, cached int) Usage {
		return Usage{PromptTokens: n, CompletionTokens: 1, Cached: cached, CachedKnown: true}
	}

	planned := NewPlanner(cfg) // the primer as the first plan's checkpoint request
	planned.CountPrimer(16, 64)
	e := &checkpointEngine{prefixTokens: prefixTokens}
	planned.Append(task)
	p := planned.Plan()
	if len(p.Checkpoints) != 1 {
		t.Fatalf("the first plan asks for %d checkpoint requests, want the primer", len(p.Checkpoints))
	}
	planned.ObserveCheckpoint(usage(e.send(cfg.PrefixChars, p.Checkpoints[0])))
	planned.Observe(usage(e.send(cfg.PrefixChars, p.Messages)))

	warmed := NewPlanner(cfg) // the agent's warm-up
	warmed.CountPrimer(16, 64)
	w := &checkpointEngine{prefixTokens: prefixTokens}
	m, tokens, ok := warmed.Primer()
	if !ok {
		t.Fatal("no primer")
	}
	warmed.ObservePrimer(msgOverhead, tokens, usage(w.send(cfg.PrefixChars, []Message{m})))
	warmed.Append(task)
	q := warmed.Plan()
	warmed.Observe(usage(w.send(cfg.PrefixChars, q.Messages)))

	if a, b := planned.tokensAt(cfg.PrefixChars), warmed.tokensAt(cfg.PrefixChars); a != b {
		t.Errorf("the prefix's end at token %d after the primer's checkpoint request, %d after the warm-up", a, b)
	}
	for name, s := range map[string]*Planner{"checkpoint request": planned, "warm-up": warmed} {
		if got := s.restartExtra(cfg.PrefixChars); got < 0 || got > DefaultUbatch/8 {
			t.Errorf("after the %s, a change at the prefix's end restarts %d tokens before it, want at the primer's checkpoint just before it", name, got)
		}
	}
}

// The primer is sized by the engine's counts of its parts when it gave
// them: a tokenizer that makes five tokens of " ok" (a byte vocabulary
// with a three-byte word mark) gets a primer of a fifth of the words, and
// one just as long in its tokens.
func TestPrimerSizedByTheEnginesCounts(t *testing.T) {
	cfg := Config{Window: 32768, PrefixChars: 9000, Cache: CacheModel{Class: CacheCheckpointed}}
	tokens := func(m Message, head, per64 int) int {
		words := strings.Count(m.Content, " ok")
		return head + words*per64/64
	}
	s := NewPlanner(cfg)
	if _, _, ok := s.Primer(); ok {
		t.Errorf("a primer without the engine's counts")
	}
	for _, c := range []struct{ head, per64 int }{{16, 64}, {80, 323}, {14, 128}} {
		s := NewPlanner(cfg)
		s.CountPrimer(c.head, c.per64)
		m, n, ok := s.Primer()
		if !ok || !strings.HasPrefix(m.Content, PrimerText) {
			t.Fatalf("counts %v: no primer", c)
		}
		if got := tokens(m, c.head, c.per64); n != got || n > DefaultUbatch-DefaultUbatch/16 || n < DefaultUbatch-DefaultUbatch/16-c.per64/64 {
			t.Errorf("counts %v: a primer of %d tokens (it says %d), want just under %d", c, got, n, DefaultUbatch-DefaultUbatch/16)
		}
	}
	for _, c := range []struct{ head, per64 int }{{0, 64}, {16, 0}, {300, 64}, {16, 600}} {
		s := NewPlanner(cfg)
		s.CountPrimer(c.head, c.per64)
		if _, _, ok := s.Primer(); ok {
			t.Errorf("counts %v taken", c)
		}
	}
	dense := NewPlanner(Config{Window: 32768, PrefixChars: 9000, Cache: CacheModel{Class: CacheDense}})
	dense.CountPrimer(16, 64)
	if _, _, ok := dense.Primer(); ok {
		t.Errorf("a primer for a dense engine")
	}
}

// An engine that will not go on with a last assistant message — it
// refused one, or its figures show the request after one did not reuse
// it — is asked for no such checkpoint request again; the folds still
// ask for others.
func TestPrefillRefusedIsNotAskedAgain(t *testing.T) {
	for _, how := range []string{"refused", "closed"} {
		t.Run(how, func(t *testing.T) {
			cfg := Config{Window: 16384, PrefixChars: 4000, Reserve: 1024, Cache: CacheModel{Class: CacheCheckpointed}}
			s := NewPlanner(cfg)
			e := &checkpointEngine{}
			prefills, after, others := 0, 0, 0
			stopped := false
			for n, st := range session(16384, 60, 1) {
				(&harness{s: s}).play(n, st)
				p := planOn(s, e, cfg.PrefixChars)
				cut := 0 // the length of a prefill the engine closed
				for _, m := range p.Checkpoints {
					if m[len(m)-1].Role != Assistant {
						others++
						n, c := e.send(cfg.PrefixChars, m)
						s.ObserveCheckpoint(Usage{PromptTokens: n, CompletionTokens: 1, Cached: c, CachedKnown: true})
						continue
					}
					prefills++
					if stopped {
						after++
					}
					if how == "refused" {
						s.RefusedPrefill() // and no figures: the request was never processed
						continue
					}
					n, c := e.send(cfg.PrefixChars, m)
					s.ObserveCheckpoint(Usage{PromptTokens: n, CompletionTokens: 1, Cached: c, CachedKnown: true})
					cut = n
				}
				stopped = stopped || prefills > 0 // from the next fold on
				n, c := e.send(cfg.PrefixChars, p.Messages)
				if cut > 0 {
					c = min(c, cut/2) // the message was closed: the request went on from far before
				}
				s.Observe(Usage{PromptTokens: n, CompletionTokens: 150, Cached: c, CachedKnown: true})
			}
			if prefills == 0 || after > 0 || others == 0 {
				t.Errorf("%s: %d prefill checkpoint requests, %d after the first, %d others; want one, none after it, some others", how, prefills, after, others)
			}
		})
	}
}

// smallSession is a long session of small results, one or two a round,
// whose notes state an exact fact more every twenty rounds (and those
// before it): many folds, each of a few turns' worth of room.
func smallSession(rounds, seed int) []step {
	rng := rand.New(rand.NewPCG(uint64(seed), 11))
	steps := []step{{user: "Make the simulator's edits unambiguous. Keep the standard library only."}}
	for r := 0; r < rounds; r++ {
		var rs []result
		for k := 0; k < 1+rng.IntN(2); k++ {
			rs = append(rs, result{kind: Read, path: fmt.Sprintf("sim/p%d.go", rng.IntN(30)), chars: 300 + rng.IntN(1500)})
		}
		note := fmt.Sprintf("state: round %d", r)
		for k := 0; k <= r/20; k++ {
			note += fmt.Sprintf("\nfact%d: value %d", k, k)
		}
		steps = append(steps, step{results: rs, note: note})
	}
	return steps
}

// On an engine that restarts from checkpoints, a long session of small
// results folds into a middle recap at a checkpoint a full slot keeps:
// where it finds one (the chain of checkpoints --checkpoint-min-step
// apart, at 32k), or after a request that starts the slot over (16k,
// where the prefix's is the only one). Each fold then restarts at the
// recap's start and prefills the recap, rewritten in place at a bounded
// size, and the turns after it: about what a dense engine prefills, and
// every fact the notes stated is still carried.
func TestSmallResultsFoldAtAnAnchor(t *testing.T) {
	skipRacePass(t)
	for _, w := range []int{16384, 32768} {
		steps := smallSession(400, 1)
		noted := 0  // the step whose note the last fold took
		resets := 0 // the checkpointed run's requests that started the slot over
		run := func(class CacheClass, dense bool) (int, *Planner, *checkpointEngine) {
			cfg := Config{Window: w, PrefixChars: 4000, Reserve: 1024, Cache: CacheModel{Class: class}}
			s := NewPlanner(cfg)
			s.CountPrimer(16, 64)
			e := &checkpointEngine{dense: dense}
			fresh := 0
			noted = 0
			for n, st := range steps {
				(&harness{s: s}).play(n, st)
				p := s.Plan()
				if p.Event == Note {
					nn, c := e.send(cfg.PrefixChars, p.Messages)
					s.Observe(Usage{PromptTokens: nn, CompletionTokens: 200, Cached: c, CachedKnown: true})
					s.SetNote(st.note)
					noted = n
					p = s.Plan()
				}
				for i, m := range p.Checkpoints {
					if i == 0 && p.Fresh {
						e.prev, fresh = nil, fresh+1 // cache_prompt false: from token 0
					}
					nn, c := e.send(cfg.PrefixChars, m)
					s.ObserveCheckpoint(Usage{PromptTokens: nn, CompletionTokens: 1, Cached: c, CachedKnown: true})
				}
				nn, c := e.send(cfg.PrefixChars, p.Messages)
				s.Observe(Usage{PromptTokens: nn, CompletionTokens: 60, Cached: c, CachedKnown: true})
			}
			if class == CacheDense && fresh > 0 {
				t.Errorf("window %d: a dense planner started the slot over %d times", w, fresh)
			}
			resets = fresh
			return e.prefilled, s, e
		}
		ideal, _, _ := run(CacheDense, true)
		got, s, e := run(CacheCheckpointed, false)
		t.Logf("window %d: prefilled %d on the checkpointed engine, %.3f of the %d a dense engine prefills (%d restarts before a change, %d far, %d resets)",
			w, got, float64(got)/float64(ideal), ideal, e.events, e.far, resets)
		if w == 16384 && resets != 1 {
			t.Errorf("window %d: the slot was started over %d times, want once: the prefix's is its only checkpoint a full slot keeps below the shed point", w, resets)
		}
		// The dense engine has the held fold besides (holdFold), worth
		// 5–11% here, which a checkpointed one cannot have.
		if float64(got) > 1.12*float64(ideal) {
			t.Errorf("window %d: prefilled %d on the checkpointed engine, more than 1.12 × the %d of a dense one", w, got, ideal)
		}
		if s.fold.midTo == 0 {
			t.Errorf("window %d: no middle recap", w)
		}
		budget := s.est.NewChars(s.Budget().Recap)
		if s.fold.mid.text > budget {
			t.Errorf("window %d: the middle recap's text is %d bytes, over the recap budget of %d", w, s.fold.mid.text, budget)
		}
		msgs := s.View().Messages()
		for k := 0; k <= (noted-1)/20; k++ {
			if f := fmt.Sprintf("fact%d: value %d", k, k); !containsContent(msgs, f) {
				t.Errorf("window %d: the request no longer carries %q", w, f)
			}
		}
	}
}

// On an engine that restarts from checkpoints, the checkpoint a full slot
// keeps MinStep past the prefix's would land a micro-batch before the end
// of whichever request first reaches it: inside a large result. Where a
// middle recap anchored at the prefix's checkpoint could not reach the
// live floor (a small prefix), the planner asks for that request first
// with the primer after it, so that the kept checkpoint stands at its
// last message's end, where a middle recap can start.
func TestChainCheckpointAtAMessageEnd(t *testing.T) {
	const w = 32768
	planted := 0
	for seed := range 8 {
		cfg := Config{Window: w, PrefixChars: 2000, Reserve: 1024, Cache: CacheModel{Class: CacheCheckpointed}}
		s := NewPlanner(cfg)
		s.CountPrimer(16, 64)
		e := &checkpointEngine{}
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		steps := []step{{user: "Make the simulator's edits unambiguous. Keep the standard library only."}}
		for r := 0; r < 40; r++ {
			steps = append(steps, step{results: []result{{kind: Read, path: fmt.Sprintf("sim/p%d.go", rng.IntN(30)), chars: 2500 + rng.IntN(2500)}}, note: fmt.Sprintf("state: round %d", r)})
		}
		var ends []int // where the requests' messages end, in the engine's tokens
		for n, st := range steps {
			(&harness{s: s}).play(n, st)
			p := s.Plan()
			if p.Event != Append {
				break // the chain is laid before the first event
			}
			for _, m := range p.Checkpoints {
				nn, c := e.send(cfg.PrefixChars, m)
				s.ObserveCheckpoint(Usage{PromptTokens: nn, CompletionTokens: 1, Cached: c, CachedKnown: true})
				if len(m) > 1 && m[len(m)-1].Content == s.primer().Content {
					planted++
				}
			}
			nn, c := e.send(cfg.PrefixChars, p.Messages)
			s.Observe(Usage{PromptTokens: nn, CompletionTokens: 60, Cached: c, CachedKnown: true})
			ends = append(ends, nn)
		}
		var chain []int
		for _, p := range e.points {
			if len(chain) == 0 || p-chain[len(chain)-1] >= 8192 {
				chain = append(chain, p)
			}
		}
		if len(chain) < 2 {
			t.Fatalf("seed %d: the slot keeps the chain %v, no second checkpoint", seed, chain)
		}
		if !slices.ContainsFunc(ends, func(end int) bool { return chain[1] <= end && chain[1] >= end-64 }) {
			t.Errorf("seed %d: the slot keeps its checkpoint past the prefix's at token %d, inside a message (the requests end at %v)", seed, chain[1], ends)
		}
	}
	if planted == 0 {
		t.Errorf("no checkpoint planted in 8 sessions")
	}
	t.Logf("%d checkpoints planted in 8 sessions", planted)
}

// A middle recap rewritten in place is prefilled again at every fold:
// above the live floor its room is lean (leanShare), below it the recap
// takes the place of kept turns, prefilled again as well, and keeps
// rewriteShare.
func TestRewriteRoomLeanAboveTheFloor(t *testing.T) {
	s := NewPlanner(Config{Window: 32768, PrefixChars: 4000, Reserve: 1024, Cache: CacheModel{Class: CacheCheckpointed}})
	b := s.Budget()
	budget := s.est.NewChars(b.Recap)
	floor := int(float64(b.Usable) * liveFloorShare)
	for _, c := range []struct {
		start, eighths int
	}{
		{-1, rewriteShare},
		{floor / 4, rewriteShare},
		{floor - s.est.Known(budget*leanShare/8) - 1, rewriteShare},
		{floor - s.est.Known(budget*leanShare/8), leanShare},
		{2 * floor, leanShare},
	} {
		if got, want := s.rewriteRoom(budget, c.start), budget*c.eighths/8; got != want {
			t.Errorf("rewriteRoom(%d, %d) = %d, want %d (%d eighths; the floor at %d)", budget, c.start, got, want, c.eighths, floor)
		}
	}
}

// A front recap keeps three quarters of the recap budget, so that later
// folds append to it and the request stays cached up to its end. On an
// engine that restarts from checkpoints (told a small step or not) every
// fold rewrites it, at what a middle recap rewritten in place keeps,
// widened to the facts, and none appends to it.
func TestFrontRecapRewrittenAtEveryFoldOnACheckpointedEngine(t *testing.T) {
	facts := make([]Fact, 60)
	for i := range facts {
		facts[i] = Fact{Key: fmt.Sprintf("fact%d", i), Value: fmt.Sprintf("a value of fact %d to keep", i)}
	}
	for _, c := range []struct {
		name   string
		model  CacheModel
		eighth int // the room's share of the budget, in eighths; 6 is three quarters
	}{
		{"dense", CacheModel{Class: CacheDense}, 6},
		{"checkpointed", CacheModel{Class: CacheCheckpointed}, rewriteShare},
		{"checkpointed, min step told", CacheModel{Class: CacheCheckpointed, MinStep: 512}, rewriteShare},
	} {
		s := NewPlanner(Config{Window: 32768, PrefixChars: 4000, Reserve: 1024, Cache: c.model})
		budget := s.est.NewChars(s.Budget().Recap)
		if got, want := s.frontRoom(budget, nil, ""), budget*c.eighth/8; got != want {
			t.Errorf("%s: frontRoom = %d, want %d (%d eighths of %d)", c.name, got, want, c.eighth, budget)
		}
		if got, want := s.frontRoom(budget, &Recap{Ledger: facts}, ""), max(budget*c.eighth/8, min(factsRoom(facts, ""), budget*3/4)); got != want {
			t.Errorf("%s: frontRoom with %d facts = %d, want %d", c.name, len(facts), got, want)
		}
	}

	// Played: every fold of the front on the checkpointed engine rewrites
	// the recap within that room (and the map's news), none appends.
	cfg := Config{Window: 16384, PrefixChars: 4000, Reserve: 1024, Cache: CacheModel{Class: CacheCheckpointed}}
	s := NewPlanner(cfg)
	s.CountPrimer(16, 64)
	e := &checkpointEngine{}
	fronts := 0
	for n, st := range smallSession(300, 2) {
		(&harness{s: s}).play(n, st)
		p := planNoted(s, e, cfg.PrefixChars, st.note)
		sendOn(s, e, cfg.PrefixChars, p)
		if p.Event != Fold || s.fold.front.msg.Content == "" || !s.fold.frontMoved {
			continue
		}
		fronts++
		front := s.fold.front.msg.Content
		if strings.Contains(front, appendHeading) {
			t.Fatalf("step %d: a fold appended to the front recap on a checkpointed engine", n)
		}
		budget := s.est.NewChars(s.Budget().Recap)
		if room := max(budget*rewriteShare/8, neededRoom(s.fold.recap, front[:s.fold.front.steady])); s.fold.front.text > room {
			t.Errorf("step %d: the front recap's text is %d bytes, want at most %d", n, s.fold.front.text, room)
		}
	}
	if fronts < 3 {
		t.Errorf("%d folds of the front in 300 rounds at 16k, want several", fronts)
	}
	t.Logf("%d folds of the front, each a rewrite", fronts)
}

// On an engine that restarts from checkpoints, a new middle recap is
// priced at every anchored start, also where the turns it would take in
// carry mostly the user's words (a pasted log): its price counts them at
// every later fold, and a fold that stopped short of them would keep the
// paste after the recap, to be prefilled again at the next fold anyway.
func TestAnchoredStartTakingPastesIsPriced(t *testing.T) {
	cfg := Config{Window: 32768, PrefixChars: 4000, Reserve: 1024, Cache: CacheModel{Class: CacheCheckpointed}}
	s := NewPlanner(cfg)
	s.CountPrimer(16, 64)
	e := &checkpointEngine{}
	steps, _ := pasteChat(40, 5)
	wordy, priced := 0, 0
	for n, st := range steps {
		(&harness{s: s}).play(n, st)
		if b := s.Budget(); s.fold.midTo == 0 {
			m := s.midPricing(b, s.est.NewChars(b.Recap), s.currentStart())
			for g := m.lo + 1; g <= s.currentStart(); g++ {
				if s.log[g].Role != Assistant {
					continue
				}
				for _, f := range m.anchored {
					if f >= g || !m.wordy(f, g) {
						continue
					}
					wordy++
					for _, o := range s.anchoredOptions(b, &m, g, kept{}, nil) {
						if o.mid == f {
							priced++
							break
						}
					}
				}
			}
		}
		sendOn(s, e, cfg.PrefixChars, planNoted(s, e, cfg.PrefixChars, st.note))
	}
	if wordy == 0 {
		t.Fatalf("no anchored start carried mostly the user's words: the chat tested nothing")
	}
	if priced != wordy {
		t.Errorf("%d of %d anchored starts whose recap would carry mostly the user's words were priced, want all", priced, wordy)
	}
	t.Logf("%d anchored starts carrying mostly the user's words, %d of them priced", wordy, priced)
}
