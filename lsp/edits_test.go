package lsp

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

// These tests convert positions with small functions of their own, so
// they do not depend on the server's Mapper: edPos16/edOff16 count UTF-16
// code units, edPos8/edOff8 bytes. Lines end at "\n" (a "\r" before it
// belongs to the line break, not to the line).

func edPos16(text string, off int) protocol.Position {
	start := strings.LastIndexByte(text[:off], '\n') + 1
	units := 0
	for _, r := range text[start:off] {
		units += utf16.RuneLen(r)
	}
	return protocol.Position{Line: uint32(strings.Count(text[:off], "\n")), Character: uint32(units)}
}

func edOff16(text string, p protocol.Position) (int, error) {
	start, err := edLineStart(text, p.Line)
	if err != nil {
		return 0, err
	}
	line := text[start:edNextLineStart(text, start)]
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	units, i := 0, 0
	for units < int(p.Character) {
		if i >= len(line) {
			return 0, fmt.Errorf("position %d:%d is past the end of its line", p.Line, p.Character)
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		units += utf16.RuneLen(r)
		i += size
	}
	if units != int(p.Character) {
		return 0, fmt.Errorf("position %d:%d splits a surrogate pair", p.Line, p.Character)
	}
	return start + i, nil
}

func edPos8(text string, off int) protocol.Position {
	start := strings.LastIndexByte(text[:off], '\n') + 1
	return protocol.Position{Line: uint32(strings.Count(text[:off], "\n")), Character: uint32(off - start)}
}

func edOff8(text string, p protocol.Position) (int, error) {
	start, err := edLineStart(text, p.Line)
	if err != nil {
		return 0, err
	}
	line := strings.TrimSuffix(strings.TrimSuffix(text[start:edNextLineStart(text, start)], "\n"), "\r")
	if int(p.Character) > len(line) {
		return 0, fmt.Errorf("position %d:%d is past the end of its line", p.Line, p.Character)
	}
	return start + int(p.Character), nil
}

func edLineStart(text string, line uint32) (int, error) {
	at := 0
	for range line {
		j := strings.IndexByte(text[at:], '\n')
		if j < 0 {
			return 0, fmt.Errorf("line %d is past the end of the text", line)
		}
		at += j + 1
	}
	return at, nil
}

// edNextLineStart is the offset after the newline that ends the line
// holding offset i, or len(text).
func edNextLineStart(text string, i int) int {
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(text)
}

func edURI(abs string) protocol.DocumentURI { return protocol.DocumentURI("file://" + abs) }

// edSub is one change the agent makes: the only occurrence of From becomes
// To.
type edSub struct{ From, To string }

// edPropose builds the proposal the edit tool would: hunks over old, New
// from them.
func edPropose(t testing.TB, path, old string, subs ...edSub) tools.Proposal {
	t.Helper()
	p := tools.Proposal{Path: path, Abs: "/ws/" + path, Old: old, Version: 3}
	for _, s := range subs {
		at := edFind(t, old, s.From)
		p.Hunks = append(p.Hunks, tools.Hunk{OldStart: at, OldEnd: at + len(s.From), Text: s.To})
	}
	p.New = p.Hunks.Apply(old)
	return p
}

// edFind returns the offset of the only occurrence of sub in text.
func edFind(t testing.TB, text, sub string) int {
	t.Helper()
	if n := strings.Count(text, sub); n != 1 {
		t.Fatalf("%q occurs %d times in the test text, want once", sub, n)
	}
	return strings.Index(text, sub)
}

// edReplace replaces the only occurrence of each From in text.
func edReplace(t testing.TB, text string, subs ...edSub) string {
	t.Helper()
	for _, s := range subs {
		at := edFind(t, text, s.From)
		text = text[:at] + s.To + text[at+len(s.From):]
	}
	return text
}

// edFile is a Go-looking file of n numbered lines, all different.
func edFile(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "\tv%02d := compute(%d) // step %d\n", i, i*i, i)
	}
	return b.String()
}

func edLine(i int) string { return fmt.Sprintf("\tv%02d := compute(%d) // step %d\n", i, i*i, i) }

func TestPlanEditUnchanged(t *testing.T) {
	long := "\treturn fmt.Errorf(\"engine at %s refused: is llama-server running? set reika.endpoint\", url)\n"
	tests := []struct {
		name string
		old  string
		subs []edSub
		want []HunkEdit // in old, which is the current text
	}{{
		name: "one word in a long line edits only that word",
		old:  "package main\n\nfunc f() error {\n" + long + "}\n",
		subs: []edSub{{long, strings.Replace(long, "refused", "declined", 1)}},
		want: []HunkEdit{{OldStart: 31 + strings.Index(long, "refus"), OldEnd: 31 + strings.Index(long, "ed:"), Text: "declin"}},
	}, {
		name: "an added line is an insertion",
		old:  "a\nb\nc\n",
		subs: []edSub{{"b\n", "b\nb2\n"}},
		want: []HunkEdit{{OldStart: 4, OldEnd: 4, Text: "b2\n"}},
	}, {
		name: "a removed line is a deletion",
		old:  "a\nb\nc\n",
		subs: []edSub{{"b\n", ""}},
		want: []HunkEdit{{OldStart: 2, OldEnd: 4}},
	}, {
		name: "a hunk that changes nothing is left out",
		old:  "a\nb\nc\nd\n",
		subs: []edSub{{"a\n", "a\n"}, {"c\n", "C\n"}},
		want: []HunkEdit{{Index: 1, OldStart: 4, OldEnd: 5, Text: "C"}},
	}, {
		name: "a file that really changes throughout is replaced whole",
		old:  "abc",
		subs: []edSub{{"abc", "xyz"}},
		want: []HunkEdit{{OldStart: 0, OldEnd: 3, Text: "xyz"}},
	}, {
		name: "trimming stops at the start of a character",
		old:  "x := \"é\"\n", // é and è share their first byte
		subs: []edSub{{"x := \"é\"\n", "x := \"è\"\n"}},
		want: []HunkEdit{{OldStart: 6, OldEnd: 8, Text: "è"}},
	}, {
		name: "trimming never splits a CRLF line break",
		old:  "x\r\ny\r\n",
		subs: []edSub{{"x\r\n", "x\n"}},
		want: []HunkEdit{{OldStart: 1, OldEnd: 3, Text: "\n"}},
	}, {
		name: "a CRLF document keeps its line breaks in the edit",
		old:  "one\r\ntwo\r\nthree\r\n",
		subs: []edSub{{"two\r\n", "two\r\n2.5\r\n"}},
		want: []HunkEdit{{OldStart: 10, OldEnd: 10, Text: "2.5\r\n"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := edPropose(t, "main.go", tt.old, tt.subs...)
			plan, err := PlanEdit(p, Current{Text: tt.old, Version: 3, Open: true, Exists: true})
			if err != nil {
				t.Fatalf("PlanEdit = %v", err)
			}
			if plan.Reanchored {
				t.Errorf("PlanEdit(unchanged).Reanchored = true, want false")
			}
			if fmt.Sprint(plan.Hunks) != fmt.Sprint(tt.want) {
				t.Errorf("PlanEdit(unchanged).Hunks = %+v, want %+v", plan.Hunks, tt.want)
			}
			if got := plan.Result(); got != p.New {
				t.Errorf("PlanEdit(unchanged).Result() = %q, want p.New %q", got, p.New)
			}
		})
	}
}

// A proposal without hunks (or with one over the whole file) still
// becomes the smallest edit.
func TestPlanEditWholeFileHunk(t *testing.T) {
	old := edFile(30)
	p := tools.Proposal{Path: "main.go", Abs: "/ws/main.go", Old: old, New: strings.Replace(old, "step 17", "step seventeen", 1), Version: -1}
	for _, hunks := range [][]tools.Hunk{nil, {{OldStart: 0, OldEnd: len(old), Text: p.New}}} {
		p.Hunks = hunks
		plan, err := PlanEdit(p, Current{Text: old, Exists: true})
		if err != nil {
			t.Fatalf("PlanEdit = %v", err)
		}
		at := strings.Index(old, "17\n")
		want := []HunkEdit{{OldStart: at, OldEnd: at + 2, Text: "seventeen"}}
		if fmt.Sprint(plan.Hunks) != fmt.Sprint(want) {
			t.Errorf("PlanEdit(%d hunks).Hunks = %+v, want %+v", len(hunks), plan.Hunks, want)
		}
	}
}

func TestPlanEditReanchor(t *testing.T) {
	old := edFile(60)
	tests := []struct {
		name  string
		old   string
		agent []edSub
		user  func(t testing.TB, old string) string
		// want is the user's text with the agent's subs, and which
		// planned hunks moved; or the error, and the hunk it names.
		want      func(t testing.TB, user string) string
		wantMoved []bool
		wantErr   string
		wantHunk  int
	}{{
		name:  "user typed above the hunk: the hunk moves",
		old:   old,
		agent: []edSub{{"compute(400)", "cached(400)"}},
		user: func(t testing.TB, old string) string {
			return edReplace(t, old, edSub{edLine(5), edLine(5) + "\t// the user's note\n\t// and another\n"})
		},
		want: func(t testing.TB, user string) string {
			return edReplace(t, user, edSub{"compute(400)", "cached(400)"})
		},
		wantMoved: []bool{true},
	}, {
		name:  "user deleted lines above the hunk: the hunk moves up",
		old:   old,
		agent: []edSub{{"compute(400)", "cached(400)"}},
		user: func(t testing.TB, old string) string {
			return edReplace(t, old, edSub{edLine(3) + edLine(4), ""})
		},
		want: func(t testing.TB, user string) string {
			return edReplace(t, user, edSub{"compute(400)", "cached(400)"})
		},
		wantMoved: []bool{true},
	}, {
		name:  "user typed below the hunk: nothing moves",
		old:   old,
		agent: []edSub{{"compute(400)", "cached(400)"}},
		user: func(t testing.TB, old string) string {
			return edReplace(t, old, edSub{edLine(50), "\tfmt.Println(v49)\n" + edLine(50)})
		},
		want: func(t testing.TB, user string) string {
			return edReplace(t, user, edSub{"compute(400)", "cached(400)"})
		},
		wantMoved: []bool{false},
	}, {
		name:  "several hunks, the one below the user's edit moves",
		old:   old,
		agent: []edSub{{"compute(25)", "cached(25)"}, {edLine(40), ""}, {"step 55", "step fifty-five"}},
		user: func(t testing.TB, old string) string {
			return edReplace(t, old, edSub{edLine(20), "\tlog.Print(\"here\")\n"}, edSub{edLine(46), edLine(46) + "\t// TODO\n"})
		},
		want: func(t testing.TB, user string) string {
			return edReplace(t, user, edSub{"compute(25)", "cached(25)"}, edSub{edLine(40), ""}, edSub{"step 55", "step fifty-five"})
		},
		wantMoved: []bool{false, true, true},
	}, {
		name:  "a copy of the hunk's lines pasted elsewhere does not move it",
		old:   old,
		agent: []edSub{{"compute(100)", "cached(100)"}},
		user: func(t testing.TB, old string) string {
			at := edFind(t, old, edLine(5))
			block := old[at:edFind(t, old, edLine(16))]
			return old + block
		},
		want: func(t testing.TB, user string) string {
			at := strings.Index(user, "compute(100)") // the first, the agent's
			return user[:at] + "cached(100)" + user[at+len("compute(100)"):]
		},
		wantMoved: []bool{false},
	}, {
		name:  "user typed inside the hunk's context: refused",
		old:   old,
		agent: []edSub{{edLine(30), "\tv30 := cached(900)\n"}},
		user: func(t testing.TB, old string) string {
			return edReplace(t, old, edSub{"compute(1024)", "compute(1024) + 1"})
		},
		wantErr:  "hunk 1 of 1 (line 30 of main.go) no longer matches: the user changed those lines or the lines around them since the agent read the file; nothing was applied",
		wantHunk: 1,
	}, {
		name:  "user inserted a line between the lines of the hunk's context: placed below it",
		old:   old,
		agent: []edSub{{edLine(30), "\tv30 := cached(900)\n"}},
		user: func(t testing.TB, old string) string {
			return edReplace(t, old, edSub{edLine(29), "\t// typed by the user\n" + edLine(29)})
		},
		want: func(t testing.TB, user string) string {
			return edReplace(t, user, edSub{edLine(30), "\tv30 := cached(900)\n"})
		},
		wantMoved: []bool{true},
	}, {
		name:  "user inserted a line among the hunk's own lines: refused",
		old:   old,
		agent: []edSub{{edLine(30) + edLine(31), "\t// gone\n"}},
		user: func(t testing.TB, old string) string {
			return edReplace(t, old, edSub{edLine(31), "\t// typed by the user\n" + edLine(31)})
		},
		wantErr:  "hunk 1 of 1 (lines 30-31 of main.go) no longer matches: the user changed those lines or the lines around them since the agent read the file; nothing was applied",
		wantHunk: 1,
	}, {
		name:  "user changed the replaced lines themselves: refused, naming the hunk",
		old:   old,
		agent: []edSub{{"compute(4)", "cached(4)"}, {edLine(40) + edLine(41) + edLine(42) + edLine(43) + edLine(44), "\t// gone\n"}, {"step 55", "step 5"}},
		user: func(t testing.TB, old string) string {
			return edReplace(t, old, edSub{"compute(1764)", "compute(1764) * 2"})
		},
		wantErr:  "hunk 2 of 3 (lines 40-44 of main.go) no longer matches: the user changed those lines or the lines around them since the agent read the file; nothing was applied",
		wantHunk: 2,
	}, {
		name:  "user copied the hunk's lines and typed on both sides: ambiguous, refused",
		old:   old,
		agent: []edSub{{"compute(100)", "cached(100)"}},
		user: func(t testing.TB, old string) string {
			at := edFind(t, old, edLine(5))
			block := old[at:edFind(t, old, edLine(16))]
			return "// top\n" + old + block
		},
		wantErr:  "hunk 1 of 1 (line 10 of main.go) is ambiguous: those lines and the lines around them now appear 2 times in the file, so where it belongs is unclear; nothing was applied",
		wantHunk: 1,
	}, {
		name:  "user swapped the blocks around two hunks: refused",
		old:   old,
		agent: []edSub{{"step 10\n", "step ten\n"}, {"step 30\n", "step thirty\n"}},
		user: func(t testing.TB, old string) string {
			block := edLine(27) + edLine(28) + edLine(29) + edLine(30) + edLine(31) + edLine(32) + edLine(33)
			return block + edReplace(t, old, edSub{block, ""})
		},
		wantErr:  "hunk 2 of 2 (line 30 of main.go) no longer lines up with hunk 1: the user moved or copied the lines around them since the agent read the file; nothing was applied",
		wantHunk: 2,
	}, {
		name:  "a file that was empty and now has the user's text: refused",
		old:   "",
		agent: []edSub{{"", "package main\n"}},
		user:  func(t testing.TB, old string) string { return "package other\n" },
		wantErr: "hunk 1 of 1 (at line 1 of main.go) no longer matches: the file was empty when the agent read it, " +
			"and the user has typed in it since; nothing was applied",
		wantHunk: 1,
	}, {
		name:  "CRLF document, user typed above",
		old:   strings.ReplaceAll(edFile(20), "\n", "\r\n"),
		agent: []edSub{{"compute(100) // step 10\r\n", "compute(100)\r\n\t_ = v10\r\n"}},
		user: func(t testing.TB, old string) string {
			return "// Copyright\r\n\r\n" + old
		},
		want: func(t testing.TB, user string) string {
			return edReplace(t, user, edSub{"compute(100) // step 10\r\n", "compute(100)\r\n\t_ = v10\r\n"})
		},
		wantMoved: []bool{true},
	}, {
		name:  "astral characters, user typed above",
		old:   "a := \"𐐀\"\nb := \"𝔸𝔹\" + name\nc := 3\n",
		agent: []edSub{{"\" + name", "\" + user"}},
		user: func(t testing.TB, old string) string {
			return "// 😀 smile\n" + old
		},
		want: func(t testing.TB, user string) string {
			return edReplace(t, user, edSub{"\" + name", "\" + user"})
		},
		wantMoved: []bool{true},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p tools.Proposal
			if tt.old == "" {
				p = tools.Proposal{Path: "main.go", Abs: "/ws/main.go", New: tt.agent[0].To,
					Hunks: []tools.Hunk{{Text: tt.agent[0].To}}, Version: 1}
			} else {
				p = edPropose(t, "main.go", tt.old, tt.agent...)
			}
			user := tt.user(t, tt.old)
			cur := Current{Text: user, Version: 9, Open: true, Exists: true}
			plan, err := PlanEdit(p, cur)
			if tt.wantErr != "" {
				var pe *PlanError
				if !errors.As(err, &pe) || err.Error() != tt.wantErr || pe.Hunk != tt.wantHunk {
					t.Fatalf("PlanEdit = %v (hunk %v), want %q (hunk %d)", err, pe, tt.wantErr, tt.wantHunk)
				}
				if len(plan.Hunks) != 0 {
					t.Errorf("PlanEdit refused but planned %d hunks", len(plan.Hunks))
				}
				return
			}
			if err != nil {
				t.Fatalf("PlanEdit = %v", err)
			}
			if !plan.Reanchored {
				t.Errorf("PlanEdit(changed).Reanchored = false, want true")
			}
			var moved []bool
			for _, h := range plan.Hunks {
				moved = append(moved, h.Moved)
			}
			if fmt.Sprint(moved) != fmt.Sprint(tt.wantMoved) {
				t.Errorf("PlanEdit(changed) moved = %v, want %v", moved, tt.wantMoved)
			}
			want := tt.want(t, user)
			if got := plan.Result(); got != want {
				t.Errorf("PlanEdit(changed).Result() = %q, want %q", got, want)
			}
			// The workspace edit, applied the way a UTF-16 client does,
			// gives the same text.
			w, err := BuildWorkspaceEdit([]EditPlan{plan}, edURI, edPos16, EditOptions{DocumentChanges: true})
			if err != nil {
				t.Fatalf("BuildWorkspaceEdit = %v", err)
			}
			if err := VerifyWorkspaceEdit(w, []EditPlan{plan}, edURI, edOff16); err != nil {
				t.Errorf("VerifyWorkspaceEdit = %v", err)
			}
		})
	}
}

func TestPlanEditFiles(t *testing.T) {
	content := "package main\n\nfunc TestX(t *testing.T) {}\n"
	create := tools.Proposal{Path: "main_test.go", Abs: "/ws/main_test.go", New: content, Create: true, Version: -1,
		Hunks: []tools.Hunk{{Text: content}}}
	edit := edPropose(t, "main.go", "a\nb\n", edSub{"b\n", "c\n"})
	tests := []struct {
		name      string
		p         tools.Proposal
		cur       Current
		wantErr   string
		wantHunks []HunkEdit
		creates   bool
	}{{
		name:      "a new file is created with its text",
		p:         create,
		cur:       Current{},
		wantHunks: []HunkEdit{{Text: content}},
		creates:   true,
	}, {
		name:    "a new empty file is created with no text",
		p:       tools.Proposal{Path: "empty.go", Abs: "/ws/empty.go", Create: true, Version: -1},
		cur:     Current{},
		creates: true,
	}, {
		name:    "a new file created meanwhile with other text is refused",
		p:       create,
		cur:     Current{Text: "package main\n", Exists: true},
		wantErr: "main_test.go was created since the agent proposed it, and its text differs from the proposal; nothing was applied",
	}, {
		name:    "a new file opened meanwhile, empty, is refused",
		p:       create,
		cur:     Current{Open: true, Version: 1},
		wantErr: "main_test.go was created since the agent proposed it, and its text differs from the proposal; nothing was applied",
	}, {
		name: "a new file created meanwhile with the same text needs nothing",
		p:    create,
		cur:  Current{Text: content, Exists: true},
	}, {
		name:    "a file deleted since the agent read it is refused",
		p:       edit,
		cur:     Current{},
		wantErr: "main.go no longer exists: it was deleted or renamed since the agent read it; nothing was applied",
	}, {
		name:    "hunks out of order are refused",
		p:       tools.Proposal{Path: "main.go", Old: "abcdef", New: "aXcdYf", Hunks: []tools.Hunk{{OldStart: 4, OldEnd: 5, Text: "Y"}, {OldStart: 1, OldEnd: 2, Text: "X"}}},
		cur:     Current{Text: "abcdef", Exists: true},
		wantErr: "the proposal for main.go is malformed: hunk 2 of 2 replaces bytes 1-2 of a 6-byte file, out of order or out of range; nothing was applied",
	}, {
		name:    "hunks that do not produce New are refused",
		p:       tools.Proposal{Path: "main.go", Old: "abc", New: "abd", Hunks: []tools.Hunk{{OldStart: 0, OldEnd: 1, Text: "x"}}},
		cur:     Current{Text: "abc", Exists: true},
		wantErr: "the proposal for main.go is inconsistent: its hunks do not produce its new text; nothing was applied",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := PlanEdit(tt.p, tt.cur)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("PlanEdit = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("PlanEdit = %v", err)
			}
			if fmt.Sprint(plan.Hunks) != fmt.Sprint(tt.wantHunks) || plan.Creates() != tt.creates {
				t.Errorf("PlanEdit = hunks %+v, creates %v; want %+v, %v", plan.Hunks, plan.Creates(), tt.wantHunks, tt.creates)
			}
			if got := plan.Result(); got != tt.p.New {
				t.Errorf("PlanEdit.Result() = %q, want %q", got, tt.p.New)
			}
		})
	}
}

// A hunk that starts between the \r and \n of a line break, or inside a
// character, is widened to a place LSP positions can name.
func TestPlanEditWidensSplitHunks(t *testing.T) {
	old := "a\r\nb\r\n"
	p := tools.Proposal{Path: "f.txt", Old: old, Hunks: []tools.Hunk{{OldStart: 2, OldEnd: 5, Text: "\nB\r"}}}
	p.New = p.Hunks.Apply(old)
	plan, err := PlanEdit(p, Current{Text: old, Exists: true})
	if err != nil {
		t.Fatalf("PlanEdit = %v", err)
	}
	want := []HunkEdit{{OldStart: 3, OldEnd: 4, Text: "B"}}
	if fmt.Sprint(plan.Hunks) != fmt.Sprint(want) {
		t.Errorf("PlanEdit(split CRLF).Hunks = %+v, want %+v", plan.Hunks, want)
	}
	old = "x = \"é\"\n" // the hunk starts at é's second byte
	p = tools.Proposal{Path: "f.txt", Old: old, Hunks: []tools.Hunk{{OldStart: 6, OldEnd: 7, Text: "\xa8"}}}
	p.New = p.Hunks.Apply(old)
	plan, err = PlanEdit(p, Current{Text: old, Exists: true})
	if err != nil {
		t.Fatalf("PlanEdit = %v", err)
	}
	want = []HunkEdit{{OldStart: 5, OldEnd: 7, Text: "è"}}
	if fmt.Sprint(plan.Hunks) != fmt.Sprint(want) || plan.Result() != "x = \"è\"\n" {
		t.Errorf("PlanEdit(split é).Hunks = %+v, want %+v", plan.Hunks, want)
	}
}

// FuzzPlanEdit checks PlanEdit against the simplest reference: a file,
// the agent's random hunks, and the user's random edits, each inserting a
// marker the file cannot otherwise contain.
//
// With the user's edits outside every hunk's context (its lines and three
// lines either side), on a file whose lines are all different, the plan
// must succeed and give the file with both the user's edits and the
// agent's hunks. With the user's edits anywhere, on any file, the plan may
// refuse, but what it gives must keep every marker: the user's text is
// never lost. Either way the workspace edit, applied the way a UTF-16
// client does, gives what the plan says.
func FuzzPlanEdit(f *testing.F) {
	for i := range 12 {
		f.Add(uint64(i), uint64(i*31+7), i%3 == 0)
	}
	// The user typed at the start of the hunk's only line: the context
	// found after the user's change no longer started a line.
	f.Add(uint64(38), uint64(111), true)
	f.Fuzz(func(t *testing.T, s1, s2 uint64, anywhere bool) {
		rng := rand.New(rand.NewPCG(s1, s2))
		old := edRandomFile(rng, !anywhere)
		p := tools.Proposal{Path: "f.go", Abs: "/ws/f.go", Old: old, Version: 1}
		p.Hunks = edRandomHunks(rng, old)
		p.New = p.Hunks.Apply(old)
		var zones [][2]int
		if !anywhere {
			for _, h := range p.Hunks {
				zones = append(zones, edZone(old, h))
			}
		}
		user := edRandomUserEdits(rng, old, zones)
		cur := old
		for i := len(user) - 1; i >= 0; i-- {
			cur = cur[:user[i].OldStart] + user[i].Text + cur[user[i].OldEnd:]
		}
		plan, err := PlanEdit(p, Current{Text: cur, Version: 2, Open: true, Exists: true})
		if err != nil {
			var pe *PlanError
			if !anywhere || !errors.As(err, &pe) || pe.Hunk == 0 {
				t.Fatalf("PlanEdit(old %q, hunks %+v, user %+v) = %v", old, p.Hunks, user, err)
			}
			return
		}
		got := plan.Result()
		if !anywhere {
			if want := edMerge(old, user, p.Hunks); got != want {
				t.Fatalf("PlanEdit(old %q, hunks %+v, user %+v).Result() = %q, want %q", old, p.Hunks, user, got, want)
			}
		}
		for _, u := range user {
			if !strings.Contains(got, u.Text) {
				t.Fatalf("PlanEdit(old %q, hunks %+v, user %+v).Result() = %q lost the user's %q", old, p.Hunks, user, got, u.Text)
			}
		}
		if cur == old && got != p.New {
			t.Fatalf("PlanEdit(unchanged %q, hunks %+v).Result() = %q, want p.New %q", old, p.Hunks, got, p.New)
		}
		w, err := BuildWorkspaceEdit([]EditPlan{plan}, edURI, edPos16, EditOptions{DocumentChanges: true, Annotations: true})
		if err != nil {
			t.Fatalf("BuildWorkspaceEdit = %v", err)
		}
		if err := VerifyWorkspaceEdit(w, []EditPlan{plan}, edURI, edOff16); err != nil {
			t.Fatalf("VerifyWorkspaceEdit(old %q, hunks %+v, user %+v) = %v", old, p.Hunks, user, err)
		}
	})
}

// edRandomFile makes up to 30 lines, ending in \n or \r\n, with multi-byte
// and astral characters. With unique set, each line starts with its own
// ⟨n⟩, so any run of whole lines occurs once.
func edRandomFile(rng *rand.Rand, unique bool) string {
	var b strings.Builder
	n := 1 + rng.IntN(30)
	for i := range n {
		if unique {
			fmt.Fprintf(&b, "⟨%d⟩", i)
		}
		b.WriteString(edRandomWords(rng, 4))
		if i < n-1 || rng.IntN(3) > 0 {
			if rng.IntN(4) == 0 {
				b.WriteString("\r\n")
			} else {
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

func edRandomWords(rng *rand.Rand, most int) string {
	words := []string{"x", " ", "\t", "é", "𝔸", "😀", "return", "{", "}", "a", "a"}
	var b strings.Builder
	for range rng.IntN(most + 1) {
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

// edRandomHunks picks up to four separated ranges of old on character
// boundaries (a \r\n may be split: PlanEdit widens such a hunk), each
// replaced by random text, which may hold new lines.
func edRandomHunks(rng *rand.Rand, old string) []tools.Hunk {
	var cuts []int
	for i := 0; i <= len(old); i++ {
		if i == len(old) || utf8.RuneStart(old[i]) {
			cuts = append(cuts, i)
		}
	}
	k := 1 + rng.IntN(4)
	picked := map[int]bool{}
	for range 2 * k {
		picked[cuts[rng.IntN(len(cuts))]] = true
	}
	var at []int
	for _, c := range cuts {
		if picked[c] {
			at = append(at, c)
		}
	}
	var hunks []tools.Hunk
	for i := 0; i+1 < len(at); i += 2 {
		s, e := at[i], at[i+1]
		if rng.IntN(4) == 0 {
			e = s // an insertion
		}
		text := edRandomWords(rng, 3)
		if rng.IntN(2) == 0 {
			text += "\n" + edRandomWords(rng, 3)
		}
		hunks = append(hunks, tools.Hunk{OldStart: s, OldEnd: e, Text: text})
	}
	if len(at) == 1 {
		hunks = append(hunks, tools.Hunk{OldStart: at[0], OldEnd: at[0], Text: "+"})
	}
	return hunks
}

// edZone is the bytes of old that hold a hunk's context, generously: from
// the line three above its first to the line three below the one holding
// its end.
func edZone(old string, h tools.Hunk) [2]int {
	starts := []int{0}
	for i := 0; i < len(old); i++ {
		if old[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	lineOf := func(off int) int {
		l := 0
		for l+1 < len(starts) && starts[l+1] <= off {
			l++
		}
		return l
	}
	first, last := max(lineOf(h.OldStart)-3, 0), lineOf(h.OldEnd)+4
	if last >= len(starts) {
		return [2]int{starts[first], len(old)}
	}
	return [2]int{starts[first], starts[last]}
}

// edRandomUserEdits makes up to three separated user edits of old, each
// replacing a range (often empty) by a marker «k», maybe with a line
// break; none touches a zone: each is at least one byte away.
func edRandomUserEdits(rng *rand.Rand, old string, zones [][2]int) []tools.Hunk {
	free := func(s, e int) bool {
		for _, z := range zones {
			if !(e < z[0] || s > z[1]) {
				return false
			}
		}
		return true
	}
	var cuts []int
	for i := 0; i <= len(old); i++ {
		if (i == len(old) || utf8.RuneStart(old[i])) && free(i, i) {
			cuts = append(cuts, i)
		}
	}
	if len(cuts) == 0 {
		return nil
	}
	n := rng.IntN(4)
	var edits []tools.Hunk
	for k := range n {
		s := cuts[rng.IntN(len(cuts))]
		e := s
		if rng.IntN(2) == 0 {
			e = cuts[rng.IntN(len(cuts))]
		}
		if e < s {
			s, e = e, s
		}
		if !free(s, e) {
			continue
		}
		overlaps := false
		for _, u := range edits {
			if !(e < u.OldStart || s > u.OldEnd) {
				overlaps = true
			}
		}
		if overlaps {
			continue
		}
		text := fmt.Sprintf("«%d»", k)
		if rng.IntN(2) == 0 {
			text += "\n"
		}
		edits = append(edits, tools.Hunk{OldStart: s, OldEnd: e, Text: text})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].OldStart < edits[j].OldStart })
	return edits
}

// edMerge applies two sets of edits of old that do not touch each other.
func edMerge(old string, a, b []tools.Hunk) string {
	all := append(append([]tools.Hunk(nil), a...), b...)
	sort.Slice(all, func(i, j int) bool { return all[i].OldStart < all[j].OldStart })
	return tools.Hunks(all).Apply(old)
}

// Two hunks that split one character between them cannot both be widened
// to whole characters without overlapping: refused, not mangled.
func TestPlanEditSplitCharacterBetweenHunks(t *testing.T) {
	old := "é\n" // two bytes, then the line break
	p := tools.Proposal{Path: "f.txt", Old: old, Hunks: []tools.Hunk{{OldStart: 0, OldEnd: 1, Text: "y"}, {OldStart: 1, OldEnd: 2, Text: "\xa8"}}}
	p.New = p.Hunks.Apply(old)
	plan, err := PlanEdit(p, Current{Text: old, Exists: true})
	want := "the proposal for f.txt is malformed: hunks 1 and 2 of 2 split one character or line break between them; nothing was applied"
	if err == nil || err.Error() != want || len(plan.Hunks) != 0 {
		t.Errorf("PlanEdit(hunks splitting é) = %d hunks, %v; want none, %q", len(plan.Hunks), err, want)
	}
}
