package contextwin

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// testMessage is a folded message as the recap golden files write it:
// an assistant's calls carry their arguments as JSON; a tool result's
// content may come from another section of the archive.
type testMessage struct {
	Role        string `json:"role"`
	Content     string `json:"content"`
	ContentFile string `json:"content_file"`
	Calls       []struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"calls"`
	ID string `json:"id"` // a tool result's call
	testPayload
}

func (a *archive) messages(t *testing.T) []Message {
	var tms []testMessage
	a.json(t, "folded.json", &tms)
	var ms []Message
	for _, tm := range tms {
		m := Message{Role: Role(tm.Role), Content: tm.Content, ToolCallID: tm.ID}
		if tm.ContentFile != "" {
			s, ok := a.section(tm.ContentFile)
			if !ok {
				t.Fatalf("%s: no section %s", a.path, tm.ContentFile)
			}
			m.Content = s
		}
		for _, c := range tm.Calls {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Arguments: string(c.Args)})
		}
		if m.Role == Tool {
			m.Payload = tm.payload(t)
		}
		ms = append(ms, m)
	}
	return ms
}

// A recap golden file holds budget, note, previous.json (a Recap) and
// folded.json (the messages); text is the rendered recap and fields
// its structured fields, one item a line.
func TestRecapGolden(t *testing.T) {
	golden(t, "recap", func(t *testing.T, a *archive) map[string]string {
		in := RecapInput{Note: a.text("note"), Folded: a.messages(t)}
		if _, err := fmt.Sscan(a.text("budget"), &in.Budget); err != nil {
			t.Fatalf("%s: budget: %v", a.path, err)
		}
		var prev Recap
		if a.json(t, "previous.json", &prev) {
			in.Previous = &prev
		}
		r := BuildRecap(in)
		if len(r.Text) > in.Budget {
			t.Errorf("len(BuildRecap(%s).Text) = %d, want at most %d", a.path, len(r.Text), in.Budget)
		}
		return map[string]string{
			"text":   withNewline(fmt.Sprintf("%d bytes\n%s", len(r.Text), r.Text)),
			"fields": recapFields(r),
		}
	})
}

// recapFields writes the structured fields of r, the note by its size.
func recapFields(r Recap) string {
	var b strings.Builder
	fmt.Fprintf(&b, "note: %d bytes\n", len(r.Note))
	list := func(name string, items []string) {
		fmt.Fprintf(&b, "%s: %d\n", name, len(items))
		for _, it := range items {
			fmt.Fprintf(&b, "  %s\n", it)
		}
	}
	var facts, files []string
	for _, f := range r.Ledger {
		facts = append(facts, f.Key+": "+f.Value)
	}
	for _, f := range r.Files {
		files = append(files, fileLine(f))
	}
	list("ledger", facts)
	list("happened", r.Happened)
	list("files", files)
	list("pages", r.Pages)
	list("searches", r.Searches)
	return b.String()
}

func TestParseFacts(t *testing.T) {
	for _, tc := range []struct {
		note string
		want []Fact
	}{
		{"build command: go test ./...", []Fact{{"build command", "go test ./..."}}},
		{"- decision: keep the v1 API\n* owner: the agent package\n2. step: fold", []Fact{{"decision", "keep the v1 API"}, {"owner", "the agent package"}, {"step", "fold"}}},
		{"**Build command:** make\n`path`: a/b.go", []Fact{{"Build command", "make"}, {"path", "a/b.go"}}},
		{"构建命令：go test ./...", []Fact{{"构建命令", "go test ./..."}}},
		// A key given twice keeps its place and takes the later value.
		{"a: 1\nb: 2\nA: 3", []Fact{{"A", "3"}, {"b", "2"}}},
		// Not facts: prose, URLs, code, headings, over-long lines.
		{"We looked at it again: it works, mostly. But then: no.", nil},
		{"see https://example.com/x", nil},
		{"```\nkey: in a fence\n```\n# Heading: x", nil},
		{"key: " + strings.Repeat("v", maxFact), nil},
		{"key:", nil},
		{"12: a numbered line", nil},
	} {
		if got := parseFacts(tc.note); !slices.Equal(got, tc.want) {
			t.Errorf("parseFacts(%q) = %q, want %q", tc.note, got, tc.want)
		}
	}
}

func TestMergeLedger(t *testing.T) {
	prev := []Fact{{"build", "make"}, {"decision", "keep v1"}, {"bad", "two\nlines"}, {"owner", "agent"}}
	for _, tc := range []struct {
		name  string
		facts []Fact
		prev  []Fact
		want  []Fact
	}{
		{"first fold", []Fact{{"build", "go test"}}, nil, []Fact{{"build", "go test"}}},
		{"newest value wins, in the note's place", []Fact{{"Decision", "drop v1"}}, prev,
			[]Fact{{"Decision", "drop v1"}, {"build", "make"}, {"owner", "agent"}}},
		{"no note", nil, prev, []Fact{{"build", "make"}, {"decision", "keep v1"}, {"owner", "agent"}}},
	} {
		if got := mergeLedger(tc.facts, tc.prev, 0); !slices.Equal(got, tc.want) {
			t.Errorf("mergeLedger(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
	var many []Fact
	for i := range 2 * maxFacts {
		many = append(many, Fact{fmt.Sprintf("k%02d", i), "v"})
	}
	if got := mergeLedger(many[:5], many, 0); len(got) != maxFacts || got[0] != many[0] || got[5] != many[5] {
		t.Errorf("mergeLedger(5 new, %d old, no room) = %d facts starting %q, want %d starting with the new", len(many), len(got), got[:6], maxFacts)
	}
	// Room for more: the ledger is budgeted by bytes, not capped at 30.
	if got := mergeLedger(many[:5], many, 45*len("- k10: v\n")); len(got) != 45 || got[44] != many[44] {
		t.Errorf("mergeLedger(5 new, %d old, room for 45) = %d facts, want 45", len(many), len(got))
	}
}

func TestMergeRanges(t *testing.T) {
	r := func(ft ...int) []LineRange {
		var out []LineRange
		for i := 0; i+1 < len(ft); i += 2 {
			out = append(out, LineRange{ft[i], ft[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []LineRange
		n    int
		want []LineRange
	}{
		{"overlap", r(1, 50, 40, 120), 8, r(1, 120)},
		{"adjacent", r(1, 50, 51, 60), 8, r(1, 60)},
		{"unsorted with a gap", r(300, 340, 1, 50, 45, 60), 8, r(1, 60, 300, 340)},
		{"contained", r(1, 100, 10, 20), 8, r(1, 100)},
		{"not spans", r(0, 10, 20, 10, -5, 3, 7, 7), 8, r(7, 7)},
		{"empty", nil, 8, nil},
		// Too many: the smallest gaps close first, the leftmost on a tie.
		{"capped", r(1, 10, 20, 30, 32, 40, 100, 110, 112, 120), 3, r(1, 10, 20, 40, 100, 120)},
		{"capped tie", r(1, 1, 3, 3, 5, 5), 2, r(1, 3, 5, 5)},
	} {
		if got := mergeRanges(tc.in, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("mergeRanges(%s %v, %d) = %v, want %v", tc.name, tc.in, tc.n, got, tc.want)
		}
	}
}

func TestFirstSentence(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"I'll read the client first. Then the tests.", "I'll read the client first."},
		{"\n\nDone!\nMore", "Done!"},
		{"Is it v1.2? Yes.", "Is it v1.2?"},
		{"先读客户端。然后测试。", "先读客户端。"},
		{"no end in sight", "no end in sight"},
		{"", ""},
	} {
		if got := firstSentence(tc.in); got != tc.want {
			t.Errorf("firstSentence(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Text fits every budget, down to none, and cuts whole items.
func TestBuildRecapBudgets(t *testing.T) {
	in := benchInput(200)
	in.Note = "build command: go test ./...\n" + strings.Repeat("We found out a lot. ", 200)
	in.Previous = &Recap{Ledger: []Fact{{"decision", "keep v1"}}, Happened: []string{"an older entry"}}
	full := BuildRecap(RecapInput{Note: in.Note, Previous: in.Previous, Folded: in.Folded, Budget: 1 << 30})
	fullLines := strings.Split(full.Text, "\n")
	for _, budget := range []int{-1, 0, 10, len(recapHeader), len(recapHeader) + 1, 100, 500, 2000, 6000, 50000} {
		in.Budget = budget
		r := BuildRecap(in)
		if len(r.Text) > max(budget, 0) {
			t.Errorf("BuildRecap(budget %d) = %d bytes, want at most %d", budget, len(r.Text), budget)
		}
		if budget <= len(recapHeader) && r.Text != "" {
			t.Errorf("BuildRecap(budget %d) = %q, want \"\"", budget, r.Text)
		}
		// Items are whole: each is one of the full text's, or a fact that
		// only the note showed there.
		for _, l := range strings.Split(r.Text, "\n") {
			item, ok := strings.CutPrefix(l, "- ")
			if !ok || slices.Contains(fullLines, l) || slices.ContainsFunc(full.Files, func(f FileTouch) bool { return changedLine(f) == item }) {
				continue // (the trail names a file changed that no entry shown names)
			}
			if k, v, _ := strings.Cut(item, ": "); !slices.Contains(full.Ledger, Fact{k, v}) {
				t.Errorf("BuildRecap(budget %d) has an item %q that is not whole", budget, l)
			}
		}
		r.Text, full.Text = "", ""
		if !reflect.DeepEqual(r, full) {
			t.Errorf("BuildRecap(budget %d) fields differ from those with room for all", budget)
		}
	}
}

// The lists stay bounded however much is folded (the files changed by
// the session's edits: every one is kept), and the input is left as it
// was.
func TestBuildRecapCaps(t *testing.T) {
	in := benchInput(10000)
	in.Note = strings.Repeat("key %d: value\n", 100)
	var prev Recap
	for i := range 300 {
		prev.Ledger = append(prev.Ledger, Fact{fmt.Sprintf("old%d", i), "v"})
		prev.Happened = append(prev.Happened, fmt.Sprintf("entry %d", i))
		prev.Files = append(prev.Files, FileTouch{Path: fmt.Sprintf("f%d.go", i), Ranges: []LineRange{{i + 1, i + 2}}})
		prev.Pages = append(prev.Pages, fmt.Sprintf("https://example.invalid/%d", i))
		prev.Searches = append(prev.Searches, fmt.Sprintf("s%d", i))
	}
	in.Previous = &prev
	before := fmt.Sprint(prev)
	r := BuildRecap(in)
	if fmt.Sprint(prev) != before {
		t.Errorf("BuildRecap changed its Previous")
	}
	for _, c := range []struct {
		name   string
		n, max int
	}{
		{"ledger", len(r.Ledger), min(300, in.Budget/len("- old100: v\n"))}, // as many as the budget holds
		{"happened", len(r.Happened), maxHappened},
		{"files", min(len(r.Files), maxFiles), maxFiles},
		{"pages", len(r.Pages), maxPages},
		{"searches", len(r.Searches), maxSearches},
	} {
		if c.n != c.max {
			t.Errorf("BuildRecap(10000 messages) %s = %d, want %d", c.name, c.n, c.max)
		}
	}
	for i, f := range r.Files {
		if i >= maxFiles && !f.Edited {
			// Past maxFiles only the files changed stay: the recap
			// names every one of them.
			t.Errorf("BuildRecap(10000 messages) file %d, %s, was only read, past the %d kept", i, f.Path, maxFiles)
		}
		if len(f.Ranges) > maxRanges {
			t.Errorf("BuildRecap(10000 messages) file %s has %d ranges, want at most %d", f.Path, len(f.Ranges), maxRanges)
		}
	}
	for _, e := range r.Happened {
		if len(e) > maxEntry {
			t.Errorf("BuildRecap entry %q is %d bytes, want at most %d", e, len(e), maxEntry)
		}
	}
}

// A fold without a note keeps the previous one; a new note replaces it.
func TestBuildRecapNote(t *testing.T) {
	prev := &Recap{Note: "the old note"}
	if r := BuildRecap(RecapInput{Previous: prev, Budget: 1000}); r.Note != "the old note" || !strings.Contains(r.Text, "Note (from an earlier fold):\nthe old note") {
		t.Errorf("BuildRecap(no note) = %q, %q, want the previous note, marked as such", r.Note, r.Text)
	}
	if r := BuildRecap(RecapInput{Note: " new \n", Previous: prev, Budget: 1000}); r.Note != "new" || !strings.Contains(r.Text, "Note:\nnew") {
		t.Errorf("BuildRecap(note) = %q, %q, want the new note", r.Note, r.Text)
	}
}

// fuzzMessages turns a script into folded messages: each line is one, its
// first byte says what it is, the rest gives its text.
func fuzzMessages(script string) []Message {
	var ms []Message
	names := []string{"read_file", "grep", "bash", "edit", "fetch_url", "Task", "list_dir", ""}
	for i, line := range strings.Split(script, "\n") {
		if line == "" {
			continue
		}
		op, body := line[0], line[1:]
		id := fmt.Sprint(i)
		switch op % 5 {
		case 0:
			ms = append(ms, Message{Role: User, Content: body})
		case 1:
			ms = append(ms, Message{Role: Assistant, Content: body, Reasoning: body})
		case 2, 3:
			args := body
			if op&8 != 0 {
				b, _ := json.Marshal(map[string]any{"path": body, "pattern": body, "command": body, "url": body, "offset": len(body), "limit": int(op)})
				args = string(b)
			}
			if op%5 == 2 {
				ms = append(ms, Message{Role: Assistant, Content: body, ToolCalls: []ToolCall{{ID: id, Name: names[int(op/5)%len(names)], Arguments: args}}})
			}
			if op&16 != 0 {
				id += "x" // a result no call claims
			}
			content := strings.Repeat(body+"\n", int(op%7))
			if op&32 != 0 {
				content = fmt.Sprintf("%6d\t%s\n%6d\t%s\n", len(body), body, len(body)+1, body)
			}
			ms = append(ms, Message{Role: Tool, ToolCallID: id, Content: content, Payload: Payload{
				Kind: Kind(op / 3 % 7), Path: headUpTo(body, int(op%40)), From: int(op % 4), To: int(op % 9), Total: int(op % 13), Spill: body,
			}})
		case 4:
			ms = append(ms, Message{Role: System, Content: body})
		}
	}
	return ms
}

func FuzzBuildRecap(f *testing.F) {
	f.Add("build command: go test ./...\n- decision: keep v1", "old: fact\nentry\nhttps://x\na.go", "\x00fix it\n\x02{\"path\": \"a.go\"}\n\x0bdone\n\x04sys", 4000)
	f.Add("", "", "", 0)
	f.Add(strings.Repeat("k: v\n", 50), "k: old\n\xff: bad", strings.Repeat("\x2agrep x\n\x21y\n", 30), 300)
	f.Fuzz(func(t *testing.T, note, prevText, script string, budget int) {
		budget = abs(budget) % 100001
		var prev *Recap
		if prevText != "" {
			prev = &Recap{Note: prevText}
			for i, l := range strings.Split(prevText, "\n") {
				k, v, _ := strings.Cut(l, ": ")
				prev.Ledger = append(prev.Ledger, Fact{k, v})
				prev.Happened = append(prev.Happened, l)
				prev.Pages = append(prev.Pages, l)
				prev.Searches = append(prev.Searches, l)
				prev.Files = append(prev.Files, FileTouch{Path: l, Ranges: []LineRange{{i, len(l)}, {len(l), i}}, Edited: i%2 == 0})
			}
		}
		in := RecapInput{Note: note, Previous: prev, Folded: fuzzMessages(script), Budget: budget}
		r := BuildRecap(in)
		if len(r.Text) > budget {
			t.Errorf("len(BuildRecap(budget %d).Text) = %d", budget, len(r.Text))
		}
		if !utf8.ValidString(r.Text) {
			t.Errorf("BuildRecap.Text = %q, not valid UTF-8", r.Text)
		}
		if r2 := BuildRecap(in); !reflect.DeepEqual(r, r2) {
			t.Errorf("BuildRecap twice differs:\n%q\n%q", r.Text, r2.Text)
		}
		// Facts are exact: each value is in the note or the previous ledger
		// as it was written.
		tidyNote := strings.ToValidUTF8(note, "\uFFFD")
		for _, f := range r.Ledger {
			inPrev := prev != nil && slices.Contains(prev.Ledger, f)
			if !inPrev && !strings.Contains(tidyNote, f.Value) {
				t.Errorf("ledger fact %q: value not in the note or the previous ledger", f)
			}
			if !validFact(f) {
				t.Errorf("ledger fact %q is not a valid fact", f)
			}
		}
		if len(r.Ledger) > max(maxFacts, budget/len("- k: v\n")) || len(r.Happened) > maxHappened || len(r.Files) > maxFiles || len(r.Pages) > maxPages || len(r.Searches) > maxSearches {
			t.Errorf("BuildRecap lists %d, %d, %d, %d, %d, over their caps", len(r.Ledger), len(r.Happened), len(r.Files), len(r.Pages), len(r.Searches))
		}
		for _, fl := range r.Files {
			for i, rg := range fl.Ranges {
				if rg.From <= 0 || rg.To < rg.From || i > 0 && rg.From <= fl.Ranges[i-1].To+1 {
					t.Errorf("file %q ranges %v, want sorted, apart, and spans of lines", fl.Path, fl.Ranges)
				}
			}
			if len(fl.Ranges) > maxRanges {
				t.Errorf("file %q has %d ranges", fl.Path, len(fl.Ranges))
			}
		}
		for _, e := range r.Happened {
			if len(e) > maxEntry || !utf8.ValidString(e) || strings.Contains(e, "\n") {
				t.Errorf("entry %q: want one line of at most %d bytes of UTF-8", e, maxEntry)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

// benchInput is a session of n folded messages: an assistant's message
// with a call, then its result, over and over, kinds in turn.
func benchInput(n int) RecapInput {
	var read strings.Builder
	for i := 1; i <= 80; i++ {
		fmt.Fprintf(&read, "%6d\t\tx := compute(%d) // some code\n", i, i)
	}
	results := []struct {
		name, args string
		p          Payload
		content    string
	}{
		{"read_file", `{"path": "agent/run%d.go", "offset": %d, "limit": 80}`, Payload{Kind: Read, Total: 900}, read.String()},
		{"grep", `{"pattern": "func Run%d", "path": "agent"}`, Payload{Kind: Search}, strings.Repeat("agent/run.go:12:func Run() {\n", 40)},
		{"bash", `{"command": "go test ./agent/ -run Test%d"}`, Payload{Kind: Command}, strings.Repeat("=== RUN TestX\n--- PASS: TestX\n", 60) + "ok  \tgithub.com/reika-lsp/reika/agent\t0.2s\n"},
		{"edit", `{"file_path": "agent/run%d.go", "old_string": "a", "new_string": "b"}`, Payload{Kind: Diff}, "@@ -10,3 +10,4 @@ func Run() {\n+\tx++\n"},
		{"fetch_url", `{"url": "https://example.invalid/doc/%d"}`, Payload{Kind: Fetch}, strings.Repeat("Some documentation text.\n", 80)},
	}
	var ms []Message
	for i := 0; len(ms) < n; i++ {
		r := results[i%len(results)]
		id := fmt.Sprintf("call%d", i)
		args := fmt.Sprintf(r.args, i%97, i%50*10+1)
		args = strings.ReplaceAll(args, "%!(EXTRA int=", "")
		ms = append(ms,
			Message{Role: Assistant, Content: "Looking at the next piece of the runner. It matters.", ToolCalls: []ToolCall{{ID: id, Name: r.name, Arguments: args}}},
			Message{Role: Tool, ToolCallID: id, Content: r.content, Payload: r.p})
	}
	return RecapInput{Folded: ms[:n], Budget: 12600 * 4}
}

func BenchmarkBuildRecap10k(b *testing.B) {
	in := benchInput(10000)
	in.Note = "build command: go test ./...\nWe are halfway through the runner."
	for b.Loop() {
		BuildRecap(in)
	}
}

func TestFactIDIgnoresCounts(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"edits made (13)", "Edits made (14)"},
		{"files read (2)", "files read"},
	} {
		if factID(tc.a) != factID(tc.b) {
			t.Errorf("factID(%q) = %q, factID(%q) = %q; want the same fact", tc.a, factID(tc.a), tc.b, factID(tc.b))
		}
	}
	if factID("port (http)") == factID("port") {
		t.Errorf("a word in parentheses is part of the key")
	}
}
