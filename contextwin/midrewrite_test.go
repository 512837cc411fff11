package contextwin

import (
	"strings"
	"testing"
)

// A rewrite of the middle recap that would leave less than the gap where
// it stands starts earlier, among the older turns, at the nearest start
// that leaves the gap; the turns before that start stay as they were
// sent. Before, such a fold went to the front, and every fold after it
// changed the front recap (a fresh pytest chat at 32k on the dense
// engine: 1.086 of its growth prefilled, against 1.041).
func TestMiddleRewriteStartsEarlierForTheGap(t *testing.T) {
	short, offered, played := 0, 0, 0
	for seed := range 4 {
		h := newHarness(t, Config{Window: 32768, PrefixChars: 4000, Reserve: 1024})
		for n, st := range session(32768, 300, seed) {
			h.play(n, st)
			h.noteFor = st.note
			s := h.s
			from := s.fold.midFrom
			if s.fold.midTo > 0 {
				b := s.Budget()
				gap := int(float64(b.Usable) * minGapShare)
				opts := s.midRewrites(b, s.est.NewChars(b.Recap), candidateAt(s.shedCandidates()))
				inPlace := map[[2]int]option{}
				for _, o := range opts {
					if o.mid == from {
						inPlace[[2]int{o.fold, boolInt(o.shedKept)}] = o
					}
				}
				for _, o := range opts {
					if o.mid == from {
						continue
					}
					offered++
					if o.mid > from || o.mid <= s.fold.upTo {
						t.Fatalf("seed %d, step %d: a rewrite starts at %d, outside the older turns (%d, %d)", seed, n, o.mid, s.fold.upTo, from)
					}
					if o.room < gap {
						t.Errorf("seed %d, step %d: a rewrite from %d leaves %d of room, under the gap %d", seed, n, o.mid, o.room, gap)
					}
					if p, ok := inPlace[[2]int{o.fold, boolInt(o.shedKept)}]; !ok || p.room >= gap {
						t.Errorf("seed %d, step %d: a rewrite up to %d starts earlier though in place it leaves the gap", seed, n, o.fold)
					}
				}
				for _, o := range inPlace {
					if o.room < gap {
						short++
					}
				}
			}
			if !h.request() {
				t.Fatalf("seed %d: the run ended: %s", seed, h.ended)
			}
			if s.fold.midTo > 0 && from > 0 && s.fold.midFrom < from {
				played++
				if s.fold.midFrom <= s.fold.upTo || s.view.find(s.fold.midFrom-1) < 0 {
					t.Errorf("seed %d, step %d: the rewrite from %d left no older turn before it", seed, n, s.fold.midFrom)
				}
			}
		}
	}
	if short == 0 || offered == 0 || played == 0 {
		t.Fatalf("%d rewrites in place short of the gap, %d offered from earlier, %d played: the sessions tested nothing", short, offered, played)
	}
	t.Logf("%d rewrites in place short of the gap, %d offered from earlier, %d played", short, offered, played)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A middle recap rewritten in place opens with what the user said in the
// turns it stands for, as a rewritten front recap does: the next rewrite
// writes the same opening while those words keep their forms, and the
// request stays cached up to its end.
func TestMiddleRewriteLeadsWithTheUsersWords(t *testing.T) {
	rewrites, leading, kept := 0, 0, 0
	for seed := range 4 {
		steps := session(32768, 400, seed)
		h := newHarness(t, Config{Window: 32768, PrefixChars: 4000, Reserve: 1024})
		s := h.s
		for n, st := range steps {
			h.play(n, st)
			h.noteFor = st.note
			from, to, old := s.fold.midFrom, s.fold.midTo, s.fold.mid.msg.Content
			lead := 0
			if to > 0 {
				lead = s.midLeadKept()
			}
			if !h.request() {
				t.Fatalf("seed %d: the run ended: %s", seed, h.ended)
			}
			now := s.fold.mid.msg.Content
			if to == 0 || s.fold.midTo == to || s.fold.midFrom != from || strings.HasPrefix(now, old) {
				continue // no rewrite in place of a middle recap
			}
			rewrites++
			v, _ := s.verbatimText(s.fold.midFrom, s.fold.midTo)
			if v == "" {
				continue
			}
			leading++
			if !strings.HasPrefix(now, midPreamble+strings.TrimPrefix(v, "\n\n")+"\n\n") {
				t.Errorf("seed %d, step %d: the rewritten middle recap does not open with the user's words:\n%.300s", seed, n, now)
			}
			if lead > len(midPreamble) && now[:lead] == old[:lead] {
				kept++
			}
		}
	}
	if leading == 0 || kept == 0 {
		t.Fatalf("%d rewrites in place, %d carrying the user's words, %d keeping the last one's opening: the chats tested nothing", rewrites, leading, kept)
	}
	t.Logf("%d rewrites in place, %d carrying the user's words, %d keeping the last one's opening", rewrites, leading, kept)
}
