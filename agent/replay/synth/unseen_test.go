package synth

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika/agent/replay"
	"github.com/reika-lsp/reika/contextwin"
	"github.com/reika-lsp/reika/internal/testslow"
)

var (
	unseenN       = flag.Int("unseen", unseenDefault, "fresh seeds per window for TestUnseenReplay (and a few for TestUnseenShape); 1, or 20 under the build tag long")
	unseenDump    = flag.String("dump", "", "a directory: TestUnseenReplay writes each session's last request there, one text file per seed and window")
	unseenDumpAll = flag.Bool("dump-all", false, "with -dump, every request's line, appends too")
	unseenSeeds   = flag.String("seeds", "", "comma-separated seeds: TestUnseenReplay and TestUnseenShape replay these instead of fresh ones and print every fact lost")
)

// unseenDefault is -unseen's default: twenty fresh seeds under the build
// tag long (go test -tags long), one by default, which with the first
// regression seed stands for the property test.
var unseenDefault = map[bool]int{false: 1, true: 20}[testslow.Long]

// unseenWindows are the windows the unseen sessions are replayed in.
var unseenWindows = []int{12000, 16000, 32000}

// regressionSeeds are unseen sessions that failed once, replayed on every
// run besides the fresh ones. They were found with go1.26.8's tree; another
// release draws other sessions from them, still unseen ones. Facts kept
// at 12k / 16k / 32k when they were added:
var regressionSeeds = []uint64{
	1005216592, // src/go, 299 rounds: 0.42 / 0.58 / 0.92
	3520288294, // src/cmd/asm, 524 rounds: 0.39 / 0.61 / 1.00
	2606015421, // src/cmd/link, 288 rounds: 0.38 / 0.62 / 1.00; at 12k and 16k the last request is 4 messages
	3257315044, // src/database, 245 rounds: 0.43 / 0.91 / 0.52, worse at 32k than at 16k
	1220740093, // src/math, 335 rounds: 0.42 / 0.75 / 0.58
	89529530,   // src/cmd/go, 280 rounds: 0.91 / 0.96 / 1.00 with the ledger first; a fold of the round after the recap went without a note
	783756867,  // src/cmd/cgo, 695 rounds: 0.92 / 1.00 / 1.00 with the ledger first; at 12k the note's prose left the last facts no room
	48419974,   // src/time, 279 rounds: 0.91 / 0.87 / 1.00 when a note round that left a new ask out was priced at the cautious estimate, did not fit and was skipped
}

// The property the unseen sessions hold to, in every window.
const minFacts = 0.95

var (
	unseenOnce sync.Once
	unseenGen  *Unseen
	unseenErr  error
)

// testUnseen is the generator of this machine's GOROOT, made once.
func testUnseen(t *testing.T) *Unseen {
	t.Helper()
	unseenOnce.Do(func() {
		root, err := GoRoot()
		if err != nil {
			unseenErr = err
			return
		}
		unseenGen, unseenErr = NewUnseen(root)
	})
	if unseenErr != nil {
		t.Fatalf("the unseen sessions need Go's source tree: %v", unseenErr)
	}
	return unseenGen
}

// seedsFor are the seeds a test runs: those of -seeds, or n fresh ones
// and the regression seeds.
func seedsFor(t *testing.T, n int, regression bool) []uint64 {
	t.Helper()
	if *unseenSeeds != "" {
		var out []uint64
		for _, s := range strings.Split(*unseenSeeds, ",") {
			v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
			if err != nil {
				t.Fatalf("-seeds %q: want decimal seeds, comma-separated", s)
			}
			out = append(out, v)
		}
		return out
	}
	var out []uint64
	var b [4]byte
	for range n {
		if _, err := rand.Read(b[:]); err != nil {
			t.Fatal(err)
		}
		out = append(out, uint64(binary.LittleEndian.Uint32(b[:])))
	}
	if regression {
		if testslow.Long {
			out = append(out, regressionSeeds...)
		} else {
			out = append(out, regressionSeeds[0])
		}
	}
	return out
}

// generate makes the sessions of seeds, in parallel.
func generate(t *testing.T, seeds []uint64) []*UnseenSession {
	t.Helper()
	u := testUnseen(t)
	out := make([]*UnseenSession, len(seeds))
	errs := make([]error, len(seeds))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, seed := range seeds {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = u.Session(seed)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Session(%d): %v", seeds[i], err)
		}
	}
	return out
}

// The same seed gives the same bytes, from a generator of its own; another
// seed another session. Under -short (the race pass) it is left to the
// full pass: three sessions take half a minute under the race detector,
// and TestUnseenShape makes two at once there.
func TestUnseenSameSeedSameBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("generating under the race detector is slow; the full pass checks the bytes")
	}
	root, err := GoRoot()
	if err != nil {
		t.Fatal(err)
	}
	seed := seedsFor(t, 1, false)[0]
	var texts [][]byte
	for range 2 {
		u, err := NewUnseen(root)
		if err != nil {
			t.Fatal(err)
		}
		s, err := u.Session(seed)
		if err != nil {
			t.Fatalf("Session(%d): %v", seed, err)
		}
		var b bytes.Buffer
		if err := replay.WriteRecording(&b, s.Recording); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, b.Bytes())
	}
	if !bytes.Equal(texts[0], texts[1]) {
		t.Errorf("Session(%d) twice: %d and %d bytes that differ, want the same bytes", seed, len(texts[0]), len(texts[1]))
	}
	other, err := testUnseen(t).Session(seed + 1)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := replay.WriteRecording(&b, other.Recording); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(b.Bytes(), texts[0]) {
		t.Errorf("Session(%d) = Session(%d), want another session", seed+1, seed)
	}
}

// An unseen session is what the issue asks for: 200–700 rounds; 22–24
// facts, 5 of them in the task; 3–5 later user messages with a fact each;
// facts on the first line and the last lines of 60–200 KB logs and in
// short outputs; a task that names a big file the session reads whole; a
// run of tiny results; a readable session file. Under -short (the race
// pass) it checks two fresh seeds, generated at once; else a quarter of
// -unseen.
func TestUnseenShape(t *testing.T) {
	if testing.Short() {
		t.Skip("drawing sessions is one goroutine's work, ten times slower under -race: it runs without -short (the README's second go test)")
	}
	n := max(1, *unseenN/4)
	for _, s := range generate(t, seedsFor(t, n, true)) {
		t.Run(s.Recording.Name, func(t *testing.T) { checkShape(t, s) })
	}
}

func checkShape(t *testing.T, s *UnseenSession) {
	r := s.Recording
	if n := len(r.Rounds); n < 200 || n > 700 {
		t.Errorf("len(Rounds) = %d, want 200…700", n)
	}
	if n := len(r.Facts); n < 22 || n > 24 {
		t.Errorf("len(Facts) = %d, want 22…24", n)
	}
	count := map[string]int{}
	for _, f := range r.Facts {
		w := s.Where[f.Key]
		count[w]++
		line := "FACT " + f.Key + ": " + f.Value
		var in *contextwin.Message
		for _, m := range r.Rounds[f.Round-1].Messages() {
			if slices.Contains(strings.Split(m.Content, "\n"), line) {
				in = &m
			}
		}
		if in == nil {
			t.Errorf("round %d does not carry the line %q", f.Round, line)
			continue
		}
		lines := strings.Split(strings.TrimSuffix(in.Content, "\n"), "\n")
		size := len(in.Content)
		switch w {
		case "task":
			if f.Round != 1 || in.Role != contextwin.User {
				t.Errorf("task fact %s in round %d (%s), want the task", f.Key, f.Round, in.Role)
			}
		case "user":
			if f.Round == 1 || in.Role != contextwin.User {
				t.Errorf("user fact %s in round %d (%s), want a later user message", f.Key, f.Round, in.Role)
			}
		case "loghead":
			if size < 60<<10 || size > 200<<10 || lines[0] != line {
				t.Errorf("log-head fact %s: in a result of %d bytes, first line %q; want the first line of 60–200 KB", f.Key, size, lines[0])
			}
		case "logtail":
			if size < 60<<10 || size > 200<<10 || !slices.Contains(lines[max(0, len(lines)-4):], line) {
				t.Errorf("log-tail fact %s: in a result of %d bytes, not in its last 4 lines; want the last lines of 60–200 KB", f.Key, size)
			}
		case "short":
			if len(lines) > 5 || in.Role != contextwin.Tool {
				t.Errorf("short-output fact %s: in a %s message of %d lines, want a result of 5 at most", f.Key, in.Role, len(lines))
			}
		case "notes":
			if size > 1<<10 || in.Role != contextwin.Tool {
				t.Errorf("notes fact %s: in a %s message of %d bytes, want a result under 1 KB", f.Key, in.Role, size)
			}
		default:
			t.Errorf("fact %s planted in %q, want a known place", f.Key, w)
		}
	}
	users := 0
	for i, rd := range r.Rounds {
		if i > 0 && rd.User != "" {
			users++
		}
		if strings.Contains(rd.User, "%!") {
			t.Errorf("round %d: the user's message has a formatting error: %q", i+1, rd.User)
		}
	}
	if users < 3 || users > 5 || count["user"] != users || count["task"] != 5 {
		t.Errorf("%d later user messages with %d facts, %d facts in the task; want 3…5 messages with a fact each and 5 in the task", users, count["user"], count["task"])
	}
	for _, w := range []string{"loghead", "logtail", "short", "notes"} {
		if count[w] == 0 {
			t.Errorf("no fact planted in %s, want some: %v", w, count)
		}
	}

	// The big file: named in the task, read whole later.
	whole := false
	for _, rd := range r.Rounds[1:] {
		for _, m := range rd.Results {
			p := m.Payload
			if p.Kind == contextwin.Read && p.From == 1 && p.To == p.Total && p.Total >= bigFile && strings.Contains(r.Rounds[0].User, p.Path) {
				whole = true
			}
		}
	}
	if !whole {
		t.Errorf("no round reads whole a file of %d lines or more that the task names: %q", bigFile, r.Rounds[0].User)
	}

	// A run of 15 rounds or more whose results are all tiny, under 1 KB.
	run, longest := 0, 0
	for _, rd := range r.Rounds {
		tiny := len(rd.Results) > 0
		for _, m := range rd.Results {
			tiny = tiny && len(m.Content) < 1<<10
		}
		if run = (run + 1) * btoi(tiny); run > longest {
			longest = run
		}
	}
	if longest < 15 {
		t.Errorf("longest run of tiny results = %d rounds, want 15 or more", longest)
	}

	// Every round but the last calls a tool, and the file reads back.
	for i, rd := range r.Rounds {
		if last := i == len(r.Rounds)-1; last != (len(rd.Assistant.ToolCalls) == 0) {
			t.Errorf("round %d of %d has %d tool calls", i+1, len(r.Rounds), len(rd.Assistant.ToolCalls))
		}
	}
	var b bytes.Buffer
	if err := replay.WriteRecording(&b, r); err != nil {
		t.Fatal(err)
	}
	if _, err := replay.ReadRecording(&b); err != nil {
		t.Errorf("ReadRecording(WriteRecording(%s)) = %v", r.Name, err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestUnseenReplay is the property test: fresh unseen sessions replayed
// through ours on the simulator at 12k, 16k and 32k keep at least 95% of
// their facts in the last request, never stall and never overflow. It
// prints every seed it used, the figures per window, which kinds of facts
// were lost, and the seeds that failed with the commands to keep or replay
// one. -seeds replays chosen seeds and prints every fact lost. Under -short
// it replays none: the replays run in the race-free pass.
func TestUnseenReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("the unseen replays run in the full, race-free pass")
	}
	unseenReplay(t, replay.Engine{}, seedsFor(t, *unseenN, true), unseenWindows)
}

// TestUnseenReplayRecurrent is the property test on the simulator of a
// recurrent model, whose cache restarts from checkpoints, where ours
// folds into a middle recap anchored at one and rewrites it in place:
// fresh unseen sessions (a third as many as TestUnseenReplay's, at 16k
// and 32k) keep at least 95% of their facts, never stall and never
// overflow.
func TestUnseenReplayRecurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("the unseen replays run in the full, race-free pass")
	}
	e, err := replay.ParseEngine("recurrent")
	if err != nil {
		t.Fatal(err)
	}
	unseenReplay(t, e, seedsFor(t, max(*unseenN/3, 1), false), []int{16000, 32000})
}

// unseenReplay replays the unseen sessions of seeds through ours on the
// simulated engine e in windows, and reports each window (report).
func unseenReplay(t *testing.T, e replay.Engine, seeds []uint64, windows []int) {
	t.Logf("unseen seeds: %s", joinSeeds(seeds))
	sessions := generate(t, seeds)
	recs := make([]*replay.Recording, len(sessions))
	for i, s := range sessions {
		recs[i] = s.Recording
	}
	results, err := replay.Results(context.Background(), replay.Options{Recordings: recs, Windows: windows, Strategies: []string{"ours"}, Engine: e})
	if err != nil {
		t.Fatal(err)
	}
	bySession := map[string]*UnseenSession{}
	for _, s := range sessions {
		bySession[s.Recording.Name] = s
	}
	for _, w := range windows {
		var rows []unseenRow
		for _, res := range results {
			if res.Row.Window == w {
				rows = append(rows, newUnseenRow(bySession[res.Row.Session], res))
				if *unseenDump != "" {
					dumpRequest(t, filepath.Join(*unseenDump, fmt.Sprintf("%s-%d.txt", res.Row.Session, w)), res)
				}
			}
		}
		t.Run(fmt.Sprintf("%dk", w/1000), func(t *testing.T) {
			report(t, w, rows, *unseenSeeds != "")
		})
	}
}

// unseenRow is one unseen session's replay in one window.
type unseenRow struct {
	s    *UnseenSession
	row  replay.Row
	lost []replay.Fact
	// the last request's messages and bytes of content
	msgs, bytes int
}

func newUnseenRow(s *UnseenSession, res replay.Result) unseenRow {
	u := unseenRow{s: s, row: res.Row, lost: replay.FactsLost(s.Recording.Facts, res.Last), msgs: len(res.Last.Messages)}
	for _, m := range res.Last.Messages {
		u.bytes += len(m.Content)
	}
	return u
}

func (u unseenRow) failed() bool {
	return u.row.FactsKept < minFacts || u.row.Failed() || u.row.Overflows > 0
}

// phase is the third of the session a fact was planted in.
func phase(f replay.Fact, rounds int) string {
	switch {
	case f.Round == 1:
		return "task"
	case f.Round*3 <= rounds:
		return "first third"
	case f.Round*3 <= 2*rounds:
		return "middle third"
	}
	return "last third"
}

// report logs the figures of one window and fails it when a session broke
// the property.
func report(t *testing.T, window int, rows []unseenRow, each bool) {
	var facts, ratios, msgs, kb []float64
	planted, lost := map[string]int{}, map[string]int{}
	byPhase, lostPhase := map[string]int{}, map[string]int{}
	var failing []string
	stalls, overflows := 0, 0
	for _, u := range rows {
		facts = append(facts, u.row.FactsKept)
		ratios = append(ratios, u.row.Ratio)
		msgs = append(msgs, float64(u.msgs))
		kb = append(kb, float64(u.bytes)/1024)
		n := len(u.s.Recording.Rounds)
		for _, f := range u.s.Recording.Facts {
			planted[u.s.Where[f.Key]]++
			byPhase[phase(f, n)]++
		}
		for _, f := range u.lost {
			lost[u.s.Where[f.Key]]++
			lostPhase[phase(f, n)]++
		}
		if u.row.Stalled > 0 || u.row.Skipped > 0 {
			stalls++
		}
		overflows += u.row.Overflows
		if u.failed() {
			failing = append(failing, fmt.Sprintf("%d (facts %.2f, stalled %d, overflows %d)", u.s.Seed, u.row.FactsKept, u.row.Stalled, u.row.Overflows))
		}
		if each || u.failed() {
			t.Logf("seed %d (%s, %d rounds, %d facts): facts %.3f, ratio %.2f, last request %d messages %.1f KB, stalled %d, overflows %d",
				u.s.Seed, u.s.Recording.Source, n, len(u.s.Recording.Facts), u.row.FactsKept, u.row.Ratio, u.msgs, float64(u.bytes)/1024, u.row.Stalled, u.row.Overflows)
			for _, f := range u.lost {
				t.Logf("    lost %-8s round %3d (%s) %s: %s", u.s.Where[f.Key], f.Round, phase(f, n), f.Key, f.Value)
			}
		}
	}
	t.Logf("%d sessions at %d: facts kept min %.3f median %.3f max %.3f; ratio min %.2f median %.2f max %.2f; last request %s messages, %s KB; %d stalled, %d overflows",
		len(rows), window, slices.Min(facts), median(facts), slices.Max(facts), slices.Min(ratios), median(ratios), slices.Max(ratios),
		spread(msgs, "%.0f"), spread(kb, "%.1f"), stalls, overflows)
	t.Logf("lost by place: %s", shares(lost, planted))
	t.Logf("lost by when:  %s", shares(lostPhase, byPhase))
	if len(failing) > 0 {
		t.Errorf("%d of %d unseen sessions at %d broke facts ≥ %.2f, no stall, no overflow; failing seeds: %s\n"+
			"replay one: go test ./agent/replay/synth -run 'TestUnseenReplay/%dk' -seeds SEED -v\n"+
			"keep one:   go run ./cmd/reika-gensessions -seed SEED && go run ./cmd/reika-lsp replay --strategy ours --window %d --session testdata/sessions/unseen/unseen-SEED.jsonl.gz",
			len(failing), len(rows), window, minFacts, strings.Join(failing, ", "), window/1000, window)
	}
}

// shares prints lost of planted per key, in a fixed order.
func shares(lost, planted map[string]int) string {
	keys := make([]string, 0, len(planted))
	for k := range planted {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d/%d", k, lost[k], planted[k]))
	}
	return strings.Join(parts, ", ")
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread prints min/median/max of xs.
func spread(xs []float64, format string) string {
	return fmt.Sprintf(format+"/"+format+"/"+format, slices.Min(xs), median(xs), slices.Max(xs))
}

func joinSeeds(seeds []uint64) string {
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = strconv.FormatUint(s, 10)
	}
	return strings.Join(parts, ",")
}

// dumpRequest writes the events of res and its last request's messages as text, for a person to read.
func dumpRequest(t *testing.T, path string, res replay.Result) {
	var b strings.Builder
	for _, r := range res.Requests {
		if r.Event != "append" || *unseenDumpAll {
			fmt.Fprintf(&b, "round %d %s side=%v refused=%v prompt %d prefilled %d growth %d\n", r.Round, r.Event, r.Side, r.Refused, r.PromptTokens, r.PromptN, r.Growth)
		}
	}
	for i, m := range res.Last.Messages {
		fmt.Fprintf(&b, "=== %d %s (%d bytes)\n%s\n", i, m.Role, len(m.Content), m.Content)
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "  call %s %s\n", c.Name, c.Arguments)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
}
