package synth

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/replay"
	"github.com/reika-lsp/reika/contextwin"
	"github.com/reika-lsp/reika/internal/testslow"
)

var (
	shapesN    = flag.Int("shapes", 1, "fresh seeds per kind for the shaped sessions' tests (TestShapes, TestShapeReplay)")
	shapesLong = flag.Bool("shapes-long", false, "TestShapeReplay replays the 1,500-round turn too (minutes)")
)

var (
	shapesOnce sync.Once
	shapesGen  *Shapes
	shapesErr  error
)

// testShapes is the generator of this machine's sources, made once; a
// missing source tree fails the test and says which.
func testShapes(t *testing.T) *Shapes {
	t.Helper()
	shapesOnce.Do(func() { shapesGen, shapesErr = NewShapes() })
	if shapesErr != nil {
		t.Fatalf("the shaped sessions need Python's and npm's sources (python3 and Node with npm installed): %v", shapesErr)
	}
	return shapesGen
}

// shapeSessions generates n fresh seeds (or -seeds) of each kind.
func shapeSessions(t *testing.T, kinds []string, n int) []*ShapeSession {
	t.Helper()
	g := testShapes(t)
	var out []*ShapeSession
	for _, kind := range kinds {
		for _, seed := range seedsFor(t, n, false) {
			start := time.Now()
			s, err := g.Session(kind, seed)
			if err != nil {
				t.Fatalf("Session(%s, %d): %v", kind, seed, err)
			}
			t.Logf("%s: %d rounds, %d facts, generated in %v", s.Recording.Name, len(s.Recording.Rounds), len(s.Recording.Facts), time.Since(start).Round(time.Millisecond))
			out = append(out, s)
		}
	}
	return out
}

// A shaped session is of its kind's shape: its rounds and facts, the
// failure blocks 8–14 lines above their log's end with the facts inside
// them, the pastes of 1.5–4 KB in 24 user turns with a correction, the
// file readable back; and the same seed gives the same bytes. It checks
// the two kinds that are quick to draw (the quickest in the race pass),
// and every kind under the build tag long.
func TestShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("drawing sessions is one goroutine's work, ten times slower under -race: it runs without -short (the README's second go test)")
	}
	kinds := ShapeKinds
	if !testslow.Long {
		kinds = []string{"pytest", "pastes"} // all of them under the build tag long
	}
	for _, s := range shapeSessions(t, kinds, *shapesN) {
		t.Run(s.Recording.Name, func(t *testing.T) { checkShapeSession(t, s) })
	}
	again, err := testShapes(t).Session("pastes", 7)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := testShapes(t).Session("pastes", 7)
	var a, b bytes.Buffer
	replay.WriteRecording(&a, first.Recording)
	replay.WriteRecording(&b, again.Recording)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("Session(pastes, 7) twice gave different bytes")
	}
}

func checkShapeSession(t *testing.T, s *ShapeSession) {
	r := s.Recording
	rounds, facts := len(r.Rounds), len(r.Facts)
	users := 0
	for i, rd := range r.Rounds {
		if i > 0 && rd.User != "" {
			users++
		}
	}
	switch s.Kind {
	case "pytest", "tap":
		if rounds < 200 || rounds > 450 || facts < 22 || users != 3 {
			t.Errorf("%d rounds, %d facts, %d later user messages; want 200…450, 22 or more, 3", rounds, facts, users)
		}
	case "pastes":
		if users != 23 || facts < 26 {
			t.Errorf("%d later user messages, %d facts; want 23 (24 turns), 26 or more", users, facts)
		}
	case "longturn":
		if rounds < 1500 || facts < 35 || users != 0 {
			t.Errorf("%d rounds, %d facts, %d later user messages; want 1500 or more, 35 or more, none", rounds, facts, users)
		}
	}
	count := map[string]int{}
	keys := map[string]int{}
	for _, f := range r.Facts {
		w := s.Where[f.Key]
		keys[f.Key]++
		line := "FACT " + f.Key + ": " + f.Value
		var in *contextwin.Message
		var at int
		for _, m := range r.Rounds[f.Round-1].Messages() {
			lines := strings.Split(strings.TrimSuffix(m.Content, "\n"), "\n")
			if i := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == line }); i >= 0 {
				in, at = &m, len(lines)-i
			}
		}
		if in == nil {
			t.Errorf("round %d does not carry the line %q", f.Round, line)
			continue
		}
		if keys[f.Key] == 1 {
			count[w]++
		}
		switch w {
		case "failblock":
			if len(in.Content) < 60<<10 || len(in.Content) > 200<<10 || at < 8 || at > 14 || in.Role != contextwin.Tool {
				t.Errorf("failure-block fact %s: %d lines above the end of a %s message of %d bytes; want 8…14 in a 60–200 KB log", f.Key, at, in.Role, len(in.Content))
			}
		case "paste", "correction":
			if in.Role != contextwin.User || len(in.Content) < 1500 || len(in.Content) > 4500 {
				t.Errorf("%s fact %s: in a %s message of %d bytes, want a user's paste of 1.5–4 KB", w, f.Key, in.Role, len(in.Content))
			}
		}
	}
	if s.Kind != "pastes" && (count["failblock"] < 3 || count["loghead"] == 0) {
		t.Errorf("facts by place %v: want 3 or more in failure blocks and some at a log's head", count)
	}
	if s.Kind == "pastes" {
		n := 0
		for k, c := range keys {
			if c == 2 && s.Where[k] == "correction" {
				n++
			}
		}
		if n != 1 || count["paste"] < 8 {
			t.Errorf("%d corrected keys, %d facts in pastes; want 1 and 8 or more", n, count["paste"])
		}
		for i, rd := range r.Rounds[1:] {
			if rd.User != "" && (len(rd.User) < 1500 || len(rd.User) > 4500) {
				t.Errorf("round %d: a paste of %d bytes, want 1.5–4 KB", i+2, len(rd.User))
			}
		}
	}
	// Every round calls a tool but a turn's last: the session's last, and
	// in a pastes session the one before each paste (elsewhere a later user
	// message comes in while the model works).
	for i, rd := range r.Rounds {
		last := i == rounds-1 || s.Kind == "pastes" && r.Rounds[i+1].User != ""
		if last != (len(rd.Assistant.ToolCalls) == 0) {
			t.Errorf("round %d: %d tool calls; want none exactly at a turn's end", i+1, len(rd.Assistant.ToolCalls))
		}
	}
	var b bytes.Buffer
	if err := replay.WriteRecording(&b, r); err != nil {
		t.Fatal(err)
	}
	if _, err := replay.ReadRecording(&b); err != nil {
		t.Errorf("ReadRecording(WriteRecording(%s)) = %v", r.Name, err)
	}
	if regexp.MustCompile(`%!|<nil>`).MatchString(r.Rounds[0].User) {
		t.Errorf("the task has a formatting error: %q", r.Rounds[0].User)
	}
}

// shapePending are the parts of the property ours does not hold yet on a
// kind of shaped session, and why: "facts" (≥ 0.95 kept), "stall" (no
// stall, no overflow) or "trail" (the last request names every file
// changed). A pending break is logged, not failed; remove an entry once
// the planner holds it.
//
// The user's pastes fold (whole, then one line with their facts): no
// stall and every fact on every seed tried. A shed log keeps every line
// from a failure in its last 16 lines, so a tap failure block's facts
// stay (1.00 on the seeds tried at 12k, 16k and 32k).
var shapePending = map[string]map[string]string{
	// The ledger is budgeted by room: 0.95–0.97 at 16k and 32k, but at
	// 12k the recap's room holds too few of 37–40 facts (0.82–0.92).
	"longturn": {"facts": "at 12k the recap holds too few of 36+ facts"},
}

// TestShapeReplay is the property test of the shaped sessions: fresh
// seeds of each kind replayed through ours at 12k, 16k and 32k keep at
// least 95% of their wanted facts (a corrected value's newest), never
// stall, never overflow, and name every file they changed in their last
// request. By default the pastes stand for them; pytest and tap join
// under the build tag long, the 1,500-round turn under -shapes-long; the
// kinds of shapePending are replayed and reported, not failed.
func TestShapeReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("the shaped replays run in the full, race-free pass")
	}
	kinds := []string{"pytest", "tap", "pastes"}
	if !testslow.Long {
		kinds = []string{"pastes"} // the other two under the build tag long
	}
	if *shapesLong {
		kinds = ShapeKinds
	}
	sessions := shapeSessions(t, kinds, *shapesN)
	recs := make([]*replay.Recording, len(sessions))
	byName := map[string]*ShapeSession{}
	for i, s := range sessions {
		recs[i] = s.Recording
		byName[s.Recording.Name] = s
	}
	start := time.Now()
	results, err := replay.Results(context.Background(), replay.Options{Recordings: recs, Windows: unseenWindows, Strategies: []string{"ours"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replayed %d sessions at %v in %v", len(recs), unseenWindows, time.Since(start).Round(time.Second))
	for _, res := range results {
		r := res.Row
		s := byName[r.Session]
		lost := replay.FactsLost(s.Recording.Facts, res.Last)
		t.Logf("%s at %d: facts %.3f, ratio %.2f, stalled %d, overflows %d, rereads %d, trail %.2f (min %.2f), notes kept %.2f",
			r.Session, r.Window, r.FactsKept, r.Ratio, r.Stalled, r.Overflows, r.ReReads, r.Trail, r.TrailWorst, r.NotesKept)
		var where []string
		for _, f := range lost {
			where = append(where, fmt.Sprintf("%s@%d (%s)", f.Key, f.Round, s.Where[f.Key]))
		}
		kind, _, _ := strings.Cut(r.Session, "-")
		var broke []string
		if r.FactsKept < minFacts {
			broke = append(broke, "facts")
		}
		if r.Failed() || r.Overflows > 0 {
			broke = append(broke, "stall")
		}
		if r.TrailLast < 1 {
			broke = append(broke, "trail")
		}
		for i := 0; i < len(broke); i++ {
			if why, ok := shapePending[kind][broke[i]]; ok {
				t.Logf("%s at %d: %s pending (%s); lost %v, stalled %d", r.Session, r.Window, broke[i], why, where, r.Stalled)
				broke = slices.Delete(broke, i, i+1)
				i--
			}
		}
		if len(broke) > 0 {
			t.Errorf("%s at %d broke %v (facts ≥ %.2f, no stall, no overflow, every file changed named): facts %.3f (lost %v), stalled %d, overflows %d, trail %.2f\n"+
				"replay it: go test ./agent/replay/synth -run TestShapeReplay -seeds SEED -v\n"+
				"keep it:   go run ./cmd/reika-gensessions -shape KIND -seed SEED",
				r.Session, r.Window, broke, minFacts, r.FactsKept, where, r.Stalled, r.Overflows, r.TrailLast)
		}
	}
}
