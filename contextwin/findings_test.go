package contextwin

import (
	"fmt"
	"strings"
	"testing"
)

// TestFindingsSurviveLaterNotes: a note's lines that later notes do not
// state again stay in the recap, newest note first, after the newest
// note; a line stated again is carried once; a fact's newest value wins.
func TestFindingsSurviveLaterNotes(t *testing.T) {
	notes := []string{
		"## Findings\n- The cache is keyed by path, not by content.\n- Tests need TZ=UTC to pass.\nport: 8080",
		"The retry loop never backs off.\n- Tests need TZ=UTC to pass.\nport: 9090",
		"The config loader ignores unknown keys.",
	}
	prev := recapOfNotes(notes...)
	want := []string{"The retry loop never backs off.", "Tests need TZ=UTC to pass.", "The cache is keyed by path, not by content."}
	checkFindings(t, prev, want)
	text := prev.Text
	if !strings.Contains(text, "Note:\nThe config loader ignores unknown keys.") || !strings.Contains(text, findingsHead) {
		t.Fatalf("the recap lacks the newest note or the earlier findings:\n%s", text)
	}
	for _, w := range want {
		if strings.Count(text, w) != 1 {
			t.Errorf("the recap carries %q %d times, want once:\n%s", w, strings.Count(text, w), text)
		}
	}
	if !strings.Contains(text, "port: 9090") || strings.Contains(text, "8080") || strings.Contains(text, "## Findings") {
		t.Errorf("the recap should carry port 9090 only, and no heading:\n%s", text)
	}
}

// TestFindingsCompactBeforeTheyGo: where a finding does not fit whole, it
// is shown as its first sentence, cut, rather than dropped.
func TestFindingsCompactBeforeTheyGo(t *testing.T) {
	long := "The migration runs twice on restart. " + strings.Repeat("It was seen in the logs of every node and again after the upgrade. ", 4)
	prev := BuildRecap(RecapInput{Note: long, Budget: 4000})
	r := BuildRecap(RecapInput{Note: "Nothing else.", Previous: &prev, Budget: len(recapHeader) + 60 + len(findingsHead) + 60})
	if !strings.Contains(r.Text, "- The migration runs twice on restart.") || strings.Contains(r.Text, "every node") {
		t.Errorf("want the finding compacted to its first sentence:\n%s", r.Text)
	}
}

// TestEveryNoteReachesLaterRequests: over a session of many folds, each
// note's finding is in the last request, in a window with room for them.
func TestEveryNoteReachesLaterRequests(t *testing.T) {
	b := newBuild(Config{Window: 32000, PrefixChars: 2000})
	b.user("Review internal/spec.md and implement it.")
	b.send()
	var said []string
	var p Plan
	for r := 0; r < 600 && (len(said) < 5 || p.Event == Note || p.Folded == 0); r++ { // on to the fold after the fifth note
		b.s.Append(Message{Role: Assistant, Content: "Next.", ToolCalls: []ToolCall{{ID: fmt.Sprint("x", r), Name: "read", Arguments: `{}`}}})
		b.s.Append(Message{Role: Tool, ToolCallID: fmt.Sprint("x", r), Content: text(2500, r), Payload: Payload{Kind: Read, Path: fmt.Sprintf("f%d.go", r)}})
		p = b.s.Plan()
		if p.Event == Note {
			b.answerAsEstimated(p)
			f := fmt.Sprintf("Module %d drops the trailing field when a line ends early.", len(said))
			said = append(said, f)
			b.s.SetNote(f + fmt.Sprintf("\nowner%d: team %d", len(said), len(said)))
			p = b.s.Plan()
		}
		b.answer(p)
	}
	if len(said) < 4 {
		t.Fatalf("%d notes, want at least 4: the test tests nothing", len(said))
	}
	var all strings.Builder
	for _, m := range p.Messages {
		all.WriteString(m.Content + "\n")
	}
	for _, f := range said {
		if !strings.Contains(all.String(), f) {
			t.Errorf("the last request lacks the note %q", f)
		}
	}
}

// TestLedgerBudgetedByRoom: a recap with room for them carries every
// fact its notes stated, more than 30.
func TestLedgerBudgetedByRoom(t *testing.T) {
	var prev *Recap
	for n := 0; n < 8; n++ {
		var note strings.Builder
		for k := 0; k < 5; k++ {
			fmt.Fprintf(&note, "- fact %d-%d: value %d\n", n, k, n*5+k)
		}
		r := BuildRecap(RecapInput{Note: note.String(), Previous: prev, Budget: 6000})
		prev = &r
	}
	if len(prev.Ledger) != 40 {
		t.Errorf("the ledger holds %d facts, want all 40", len(prev.Ledger))
	}
	for n := 0; n < 8; n++ {
		for k := 0; k < 5; k++ {
			if f := fmt.Sprintf("fact %d-%d: value %d", n, k, n*5+k); !strings.Contains(prev.Text, f) {
				t.Errorf("the recap lacks %q", f)
			}
		}
	}
}

// TestFindingsLabelledAreRestated: a finding with a label ("files read
// (4): …") is stated again by a later note's line with the same label,
// the count aside: the newest list stands, once.
func TestFindingsLabelledAreRestated(t *testing.T) {
	notes := []string{
		"- files read (2): a.go, b.go\n- The parser drops the last field.",
		"- files read (3): a.go, b.go, c.go\n- The lexer fails on empty input.",
		"- files read (4): a.go, b.go, c.go, d.go\n- The printer fails on empty input.",
	}
	prev := recapOfNotes(notes...)
	want := []string{"The lexer fails on empty input.", "The parser drops the last field."}
	checkFindings(t, prev, want)
	if n := strings.Count(prev.Text, "files read"); n != 1 {
		t.Errorf("the recap lists the files read %d times, want once (the newest):\n%s", n, prev.Text)
	}
}

// TestFindingsCountsMovedOn: lines that differ only in their numbers are
// one finding, the newest standing once, whether the newest note or an
// older one says it; a line that says a list is empty ("no edits made")
// is no finding and hides no older one. Before, every note's title line
// ("Progress note after 17 tool rounds.") was carried from fold to fold,
// and so was a later note's "no edits made" beside an earlier one's
// edits.
func TestFindingsCountsMovedOn(t *testing.T) {
	notes := []string{
		"Progress note after 17 tool rounds.\n- edits made (2): a.go\n- 12 of 40 tests pass.\n- The cache is keyed by path.",
		"Progress note after 9 tool rounds.\n- no edits made\n- 31 of 40 tests pass.",
		"Progress note after 4 tool rounds.\n- The config loader ignores unknown keys.",
	}
	prev := recapOfNotes(notes...)
	want := []string{"31 of 40 tests pass.", "edits made (2): a.go", "The cache is keyed by path."}
	checkFindings(t, prev, want)
	if n := strings.Count(prev.Text, "Progress note after"); n != 1 {
		t.Errorf("the recap carries %d title lines, want the newest note's alone:\n%s", n, prev.Text)
	}
}

// TestReportFactsEnterTheLedger: the "key: value" lines of a subagent's
// report enter the ledger when a fold takes the report in; the note's
// value of the same key wins.
func TestReportFactsEnterTheLedger(t *testing.T) {
	folded := []Message{
		{Role: Assistant, ToolCalls: []ToolCall{{ID: "s1", Name: "subagent", Arguments: `{}`}}},
		{Role: Tool, ToolCallID: "s1", Content: "The cache is invalidated in two places.\n- invalidator: store.go:212\n- ttl: 30s\n", Payload: Payload{Kind: Report}},
	}
	r := BuildRecap(RecapInput{Note: "ttl: 45s (the report read an old default)", Folded: folded, Budget: 4000})
	got := map[string]string{}
	for _, f := range r.Ledger {
		got[f.Key] = f.Value
	}
	if got["invalidator"] != "store.go:212" || got["ttl"] != "45s (the report read an old default)" {
		t.Errorf("ledger = %v, want the report's invalidator and the note's ttl", r.Ledger)
	}
}

// recapOfNotes is the recap after a fold for each note in turn, with room
// for them all.
func recapOfNotes(notes ...string) *Recap {
	var prev *Recap
	for _, n := range notes {
		r := BuildRecap(RecapInput{Note: n, Previous: prev, Budget: 4000})
		prev = &r
	}
	return prev
}

// checkFindings fails t unless r's findings are want, in order.
func checkFindings(t *testing.T, r *Recap, want []string) {
	t.Helper()
	if strings.Join(r.Findings, "|") != strings.Join(want, "|") {
		t.Errorf("findings = %q, want %q", r.Findings, want)
	}
}
