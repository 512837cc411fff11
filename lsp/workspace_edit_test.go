package lsp

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

// -update rewrites the golden files. Another test file of the package may
// declare the flag too: the first one wins.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// edPlans are three plans: an open file with two hunks (one on a line
// with astral characters), a file that is not open, and a new file.
func edPlans(t *testing.T) []EditPlan {
	t.Helper()
	open := "package main\n\nvar greeting = \"𝔥𝔢𝔩𝔩𝔬\" + name\n\nfunc main() {\n\tprintln(greeting)\n}\n"
	p1 := edPropose(t, "main.go", open,
		edSub{"\" + name\n", "\" + user\n"},
		edSub{"\tprintln(greeting)\n", "\tfmt.Println(greeting)\n"})
	closed := "package main\n\nconst limit = 10\n"
	p2 := edPropose(t, "limits.go", closed, edSub{"limit = 10", "limit = 12"})
	p2.Version = -1
	content := "package main\n\nimport \"testing\"\n"
	p3 := tools.Proposal{Path: "main_test.go", Abs: "/ws/main_test.go", New: content, Create: true, Version: -1,
		Hunks: []tools.Hunk{{Text: content}}}
	var plans []EditPlan
	for _, c := range []struct {
		p   tools.Proposal
		cur Current
	}{
		{p1, Current{Text: open, Version: 7, Open: true, Exists: true}},
		{p2, Current{Text: closed, Exists: true}},
		{p3, Current{}},
	} {
		plan, err := PlanEdit(c.p, c.cur)
		if err != nil {
			t.Fatalf("PlanEdit(%s) = %v", c.p.Path, err)
		}
		plans = append(plans, plan)
	}
	return plans
}

// protect is plan with its path protected, for the reason why.
func protect(plan EditPlan, why string) EditPlan {
	plan.Proposal.Protected = why
	return plan
}

func TestBuildWorkspaceEdit(t *testing.T) {
	plans := edPlans(t)
	v7 := int32(7)
	rng := func(l1, c1, l2, c2 uint32) protocol.Range {
		return protocol.Range{Start: protocol.Position{Line: l1, Character: c1}, End: protocol.Position{Line: l2, Character: c2}}
	}
	const asked = "write a test for main"
	const mainID, limitsID, testID = "reika:main.go", "reika:limits.go", "reika:main_test.go"
	// "𝔥𝔢𝔩𝔩𝔬" is 5 characters, 10 UTF-16 units, 20 bytes: "name" starts
	// at UTF-16 character 30.
	mainEdits := func(id string) []TextEdit {
		return []TextEdit{
			{Range: rng(2, 30, 2, 34), NewText: "user", AnnotationID: id},
			{Range: rng(5, 1, 5, 2), NewText: "fmt.P", AnnotationID: id},
		}
	}
	limitsEdits := func(id string) []TextEdit {
		return []TextEdit{{Range: rng(2, 15, 2, 16), NewText: "2", AnnotationID: id}}
	}
	testEdits := func(id string) []TextEdit {
		return []TextEdit{{Range: rng(0, 0, 0, 0), NewText: "package main\n\nimport \"testing\"\n", AnnotationID: id}}
	}
	tests := []struct {
		name    string
		plans   []EditPlan
		opt     EditOptions
		want    WorkspaceEdit
		wantErr string
	}{{
		name:  "documentChanges with annotations and file creation",
		plans: plans,
		opt:   EditOptions{DocumentChanges: true, Annotations: true, ResourceCreate: true, Label: asked},
		want: WorkspaceEdit{
			DocumentChanges: []DocumentChange{
				{TextDocumentEdit: &TextDocumentEdit{TextDocument: VersionedDocument{URI: "file:///ws/main.go", Version: &v7}, Edits: mainEdits(mainID)}},
				{TextDocumentEdit: &TextDocumentEdit{TextDocument: VersionedDocument{URI: "file:///ws/limits.go"}, Edits: limitsEdits(limitsID)}},
				{CreateFile: &CreateFile{Kind: "create", URI: "file:///ws/main_test.go", Options: &CreateFileOptions{}, AnnotationID: testID}},
				{TextDocumentEdit: &TextDocumentEdit{TextDocument: VersionedDocument{URI: "file:///ws/main_test.go"}, Edits: testEdits(testID)}},
			},
			ChangeAnnotations: map[string]ChangeAnnotation{
				mainID:   {Label: "Reika: 2 changes to main.go", Description: asked},
				limitsID: {Label: "Reika: 1 change to limits.go", Description: asked},
				testID:   {Label: "Reika: create main_test.go", Description: asked},
			},
		},
	}, {
		name:  "a run that asks before every edit: each annotation needs confirmation",
		plans: plans[:1],
		opt:   EditOptions{DocumentChanges: true, Annotations: true, Confirm: true, Label: asked},
		want: WorkspaceEdit{
			DocumentChanges: []DocumentChange{
				{TextDocumentEdit: &TextDocumentEdit{TextDocument: VersionedDocument{URI: "file:///ws/main.go", Version: &v7}, Edits: mainEdits(mainID)}},
			},
			ChangeAnnotations: map[string]ChangeAnnotation{
				mainID: {Label: "Reika: 2 changes to main.go", NeedsConfirmation: true, Description: asked},
			},
		},
	}, {
		name:  "a protected path needs confirmation, an ordinary one beside it does not",
		plans: []EditPlan{protect(plans[0], "main.go is protected"), plans[1]},
		opt:   EditOptions{DocumentChanges: true, Annotations: true, Label: asked},
		want: WorkspaceEdit{
			DocumentChanges: []DocumentChange{
				{TextDocumentEdit: &TextDocumentEdit{TextDocument: VersionedDocument{URI: "file:///ws/main.go", Version: &v7}, Edits: mainEdits(mainID)}},
				{TextDocumentEdit: &TextDocumentEdit{TextDocument: VersionedDocument{URI: "file:///ws/limits.go"}, Edits: limitsEdits(limitsID)}},
			},
			ChangeAnnotations: map[string]ChangeAnnotation{
				mainID:   {Label: "Reika: 2 changes to main.go (PROTECTED: main.go is protected)", NeedsConfirmation: true, Description: asked},
				limitsID: {Label: "Reika: 1 change to limits.go", Description: asked},
			},
		},
	}, {
		name:  "documentChanges without annotations",
		plans: plans,
		opt:   EditOptions{DocumentChanges: true, ResourceCreate: true, Label: asked},
		want: WorkspaceEdit{
			DocumentChanges: []DocumentChange{
				{TextDocumentEdit: &TextDocumentEdit{TextDocument: VersionedDocument{URI: "file:///ws/main.go", Version: &v7}, Edits: mainEdits("")}},
				{TextDocumentEdit: &TextDocumentEdit{TextDocument: VersionedDocument{URI: "file:///ws/limits.go"}, Edits: limitsEdits("")}},
				{CreateFile: &CreateFile{Kind: "create", URI: "file:///ws/main_test.go", Options: &CreateFileOptions{}}},
				{TextDocumentEdit: &TextDocumentEdit{TextDocument: VersionedDocument{URI: "file:///ws/main_test.go"}, Edits: testEdits("")}},
			},
		},
	}, {
		name:  "no documentChanges: the plain changes map, never annotated",
		plans: plans[:2],
		opt:   EditOptions{Annotations: true},
		want: WorkspaceEdit{Changes: map[protocol.DocumentURI][]TextEdit{
			"file:///ws/main.go":   mainEdits(""),
			"file:///ws/limits.go": limitsEdits(""),
		}},
	}, {
		name:    "a new file for a client without resource operations",
		plans:   plans,
		opt:     EditOptions{DocumentChanges: true, Annotations: true},
		wantErr: "this editor cannot create files through the language server (its workspace edits have no create operation), so main_test.go was not created; nothing was applied: create the file, then ask again",
	}, {
		name:    "a new file for a client without documentChanges",
		plans:   plans,
		opt:     EditOptions{ResourceCreate: true},
		wantErr: "this editor cannot create files through the language server (its workspace edits have no create operation), so main_test.go was not created; nothing was applied: create the file, then ask again",
	}, {
		name:    "two plans for one file",
		plans:   []EditPlan{plans[0], plans[0]},
		opt:     EditOptions{DocumentChanges: true},
		wantErr: "two proposals for main.go in one workspace edit: plan the second after the first is applied",
	}, {
		name:  "plans that change nothing are left out",
		plans: []EditPlan{{Proposal: tools.Proposal{Path: "same.go"}, Current: Current{Exists: true}}},
		opt:   EditOptions{DocumentChanges: true},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BuildWorkspaceEdit(tt.plans, edURI, edPos16, tt.opt)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("BuildWorkspaceEdit = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("BuildWorkspaceEdit = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("BuildWorkspaceEdit mismatch (-want +got):\n%s", diff)
			}
			if err := VerifyWorkspaceEdit(got, tt.plans, edURI, edOff16); err != nil {
				t.Errorf("VerifyWorkspaceEdit = %v", err)
			}
		})
	}
}

// Positions follow the encoding pos counts in; the edit applies in the
// same encoding.
func TestBuildWorkspaceEditUTF8(t *testing.T) {
	plans := edPlans(t)[:1]
	w, err := BuildWorkspaceEdit(plans, edURI, edPos8, EditOptions{DocumentChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	// 16 bytes, 20 for "𝔥𝔢𝔩𝔩𝔬", 4: "name" starts at byte 40 of its line.
	if got := w.DocumentChanges[0].TextDocumentEdit.Edits[0].Range.Start.Character; got != 40 {
		t.Errorf("UTF-8 start of \"name\" = %d, want 40", got)
	}
	if err := VerifyWorkspaceEdit(w, plans, edURI, edOff8); err != nil {
		t.Errorf("VerifyWorkspaceEdit(UTF-8) = %v", err)
	}
	if err := VerifyWorkspaceEdit(w, plans, edURI, edOff16); err == nil {
		t.Errorf("VerifyWorkspaceEdit(UTF-8 edit read as UTF-16) = nil, want an error")
	}
}

// A re-anchored plan says so in its annotation.
func TestBuildWorkspaceEditReanchoredDescription(t *testing.T) {
	old := edFile(20)
	p := edPropose(t, "main.go", old, edSub{"step 15", "step fifteen"})
	plan, err := PlanEdit(p, Current{Text: "// new first line\n" + old, Version: 4, Open: true, Exists: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := BuildWorkspaceEdit([]EditPlan{plan}, edURI, edPos16, EditOptions{DocumentChanges: true, Annotations: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "placed around your edits made since the agent read the file"
	if got := w.ChangeAnnotations["reika:main.go"].Description; got != want {
		t.Errorf("description of a re-anchored plan = %q, want %q", got, want)
	}
	if got := w.DocumentChanges[0].TextDocumentEdit.Edits[0].Range.Start.Line; got != 15 {
		t.Errorf("re-anchored edit on line %d, want 15 (line 14 plus the user's line)", got)
	}
}

// The golden files hold the JSON a client receives; -update rewrites them.
func TestWorkspaceEditGolden(t *testing.T) {
	plans := edPlans(t)
	tests := []struct {
		file  string
		plans []EditPlan
		opt   EditOptions
	}{
		{"annotated", plans, EditOptions{DocumentChanges: true, Annotations: true, ResourceCreate: true, Label: "write a test for main"}},
		{"document_changes", plans, EditOptions{DocumentChanges: true, ResourceCreate: true}},
		{"changes", plans[:2], EditOptions{}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			w, err := BuildWorkspaceEdit(tt.plans, edURI, edPos16, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			params := ApplyWorkspaceEditParams{Label: "Reika: write a test for main", Edit: w}
			got, err := json.MarshalIndent(params, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "workspace_edit", tt.file+".golden")
			if updating() {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./lsp -run Golden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("workspace/applyEdit params differ from %s (-want +got):\n%s", golden, cmp.Diff(string(want), string(got)))
			}
			// The golden decodes back to the same edit.
			var back ApplyWorkspaceEditParams
			edDecode(t, want, &back)
			if diff := cmp.Diff(params, back); diff != "" {
				t.Errorf("decoding %s mismatch (-built +decoded):\n%s", golden, diff)
			}
		})
	}
}

func TestHunkWorkspaceEdit(t *testing.T) {
	old := edFile(40)
	p := edPropose(t, "main.go", old, edSub{"step 3\n", "step three\n"}, edSub{"compute(100)", "cached(100)"}, edSub{"step 30\n", "step thirty\n"})
	plan, err := PlanEdit(p, Current{Text: old, Version: 2, Open: true, Exists: true})
	if err != nil {
		t.Fatal(err)
	}
	opt := EditOptions{DocumentChanges: true, Annotations: true}
	w, err := HunkWorkspaceEdit(plan, 1, edURI, edPos16, opt)
	if err != nil {
		t.Fatalf("HunkWorkspaceEdit(hunk 2) = %v", err)
	}
	if got, want := w.ChangeAnnotations["reika:main.go"].Label, "Reika: change 2 of 3 to main.go"; got != want {
		t.Errorf("HunkWorkspaceEdit(hunk 2) label = %q, want %q", got, want)
	}
	edits := w.DocumentChanges[0].TextDocumentEdit.Edits
	text, err := ApplyEdits(old, edits, edOff16)
	if err != nil {
		t.Fatalf("ApplyEdits(hunk 2) = %v", err)
	}
	if want := edReplace(t, old, edSub{"compute(100)", "cached(100)"}); text != want {
		t.Errorf("hunk 2 alone gives %q, want %q", text, want)
	}
	// The rest, planned against the document with hunk 2 applied, gives
	// the whole proposal, even though its hunks' contexts overlap hunk 2.
	rest := AfterHunk(p, 1)
	if len(rest.Hunks) != 2 || rest.Old != text {
		t.Fatalf("AfterHunk(p, 1) = %d hunks over %q, want 2 over the applied text", len(rest.Hunks), rest.Old)
	}
	plan, err = PlanEdit(rest, Current{Text: text, Version: 3, Open: true, Exists: true})
	if err != nil {
		t.Fatalf("PlanEdit(rest) = %v", err)
	}
	w, err = BuildWorkspaceEdit([]EditPlan{plan}, edURI, edPos16, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ApplyEdits(text, w.DocumentChanges[0].TextDocumentEdit.Edits, edOff16); err != nil || got != p.New {
		t.Errorf("the rest applied = %q, %v; want p.New %q", got, err, p.New)
	}
	if _, err := HunkWorkspaceEdit(plan, 2, edURI, edPos16, opt); err == nil {
		t.Errorf("HunkWorkspaceEdit(a hunk no longer there) = nil error, want one")
	}
	if got := AfterHunk(p, 5); got.Old != p.Old || len(got.Hunks) != len(p.Hunks) {
		t.Errorf("AfterHunk(p, out of range) changed p")
	}
}

func TestApplyEdits(t *testing.T) {
	at := func(line, char uint32) protocol.Position { return protocol.Position{Line: line, Character: char} }
	tests := []struct {
		name    string
		text    string
		edits   []TextEdit
		want    string
		wantErr string
	}{{
		name:  "edits in any order apply against the same text",
		text:  "one\ntwo\nthree\n",
		edits: []TextEdit{{Range: protocol.Range{Start: at(2, 0), End: at(2, 5)}, NewText: "3"}, {Range: protocol.Range{Start: at(0, 0), End: at(0, 3)}, NewText: "1"}},
		want:  "1\ntwo\n3\n",
	}, {
		name:  "inserts at one position keep their order",
		text:  "ab",
		edits: []TextEdit{{Range: protocol.Range{Start: at(0, 1), End: at(0, 1)}, NewText: "x"}, {Range: protocol.Range{Start: at(0, 1), End: at(0, 1)}, NewText: "y"}},
		want:  "axyb",
	}, {
		name:  "an insert before a replacement at the same place",
		text:  "abc",
		edits: []TextEdit{{Range: protocol.Range{Start: at(0, 1), End: at(0, 2)}, NewText: "B"}, {Range: protocol.Range{Start: at(0, 1), End: at(0, 1)}, NewText: "+"}},
		want:  "a+Bc",
	}, {
		name:    "overlapping edits",
		text:    "abcdef",
		edits:   []TextEdit{{Range: protocol.Range{Start: at(0, 1), End: at(0, 4)}}, {Range: protocol.Range{Start: at(0, 3), End: at(0, 5)}}},
		wantErr: "edit 1 overlaps another",
	}, {
		name:    "an edit that ends before it starts",
		text:    "abcdef",
		edits:   []TextEdit{{Range: protocol.Range{Start: at(0, 4), End: at(0, 1)}}},
		wantErr: "edit 0 ends before it starts",
	}, {
		name:    "a position past the end",
		text:    "ab\n",
		edits:   []TextEdit{{Range: protocol.Range{Start: at(3, 0), End: at(3, 0)}}},
		wantErr: "edit 0: start: line 3 is past the end of the text",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyEdits(tt.text, tt.edits, edOff16)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ApplyEdits = %q, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ApplyEdits(%q) = %q, %v; want %q", tt.text, got, err, tt.want)
			}
		})
	}
}

func TestWorkspaceEditJSON(t *testing.T) {
	var c DocumentChange
	if err := json.Unmarshal([]byte(`{"kind":"rename","oldUri":"file:///a","newUri":"file:///b"}`), &c); err == nil {
		t.Errorf("decoding a rename = nil error, want one (Reika sends none)")
	}
	if _, err := json.Marshal(DocumentChange{}); err == nil {
		t.Errorf("encoding an empty document change = nil error, want one")
	}
	var res ApplyWorkspaceEditResult
	edDecode(t, []byte(`{"applied":false,"failureReason":"the user declined","failedChange":0}`), &res)
	if res.Applied || res.FailureReason != "the user declined" || res.FailedChange == nil || *res.FailedChange != 0 {
		t.Errorf("ApplyWorkspaceEditResult = %+v, want not applied, the reason, and failed change 0", res)
	}
	var ok ApplyWorkspaceEditResult
	edDecode(t, []byte(`{"applied":true}`), &ok)
	if !ok.Applied || ok.FailedChange != nil {
		t.Errorf("ApplyWorkspaceEditResult(applied) = %+v, want applied and no failed change", ok)
	}
	// A version that is not known goes out as null, never omitted.
	b, err := json.Marshal(VersionedDocument{URI: "file:///a"})
	if err != nil || string(b) != `{"uri":"file:///a","version":null}` {
		t.Errorf("json.Marshal(unversioned document) = %s, %v", b, err)
	}
}

// edDecode decodes JSON into v, failing the test on an error.
func edDecode(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("json.Unmarshal(%s) = %v", data, err)
	}
}

// Test-only helpers: nothing in the server calls them.

// AfterHunk returns p as it stands once its hunk index (0-based) is
// applied: Old includes that hunk, and the other hunks follow it. An index
// outside p's hunks returns p unchanged.
func AfterHunk(p tools.Proposal, index int) tools.Proposal {
	if index < 0 || index >= len(p.Hunks) {
		return p
	}
	h := p.Hunks[index]
	shift := len(h.Text) - (h.OldEnd - h.OldStart)
	q := p
	q.Old = tools.Hunks{h}.Apply(p.Old)
	q.Hunks = make([]tools.Hunk, 0, len(p.Hunks)-1)
	for i, o := range p.Hunks {
		switch {
		case i == index:
			continue
		case i > index:
			o.OldStart += shift
			o.OldEnd += shift
		}
		q.Hunks = append(q.Hunks, o)
	}
	return q
}

// ApplyEdits applies one document's edits to text the way a client does:
// all against the same text, inserts at one position in their order. It
// fails on overlapping edits and on positions offset cannot place. offset
// converts a position of text back to a byte offset.
func ApplyEdits(text string, edits []TextEdit, offset func(text string, pos protocol.Position) (int, error)) (string, error) {
	type span struct{ s, e, i int }
	spans := make([]span, len(edits))
	for i, e := range edits {
		s, err := offset(text, e.Range.Start)
		if err != nil {
			return "", fmt.Errorf("edit %d: start: %w", i, err)
		}
		end, err := offset(text, e.Range.End)
		if err != nil {
			return "", fmt.Errorf("edit %d: end: %w", i, err)
		}
		if end < s {
			return "", fmt.Errorf("edit %d ends before it starts", i)
		}
		spans[i] = span{s, end, i}
	}
	sort.SliceStable(spans, func(a, b int) bool {
		if spans[a].s != spans[b].s {
			return spans[a].s < spans[b].s
		}
		return spans[a].e < spans[b].e
	})
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		if sp.s < at {
			return "", fmt.Errorf("edit %d overlaps another", sp.i)
		}
		b.WriteString(text[at:sp.s])
		b.WriteString(edits[sp.i].NewText)
		at = sp.e
	}
	b.WriteString(text[at:])
	return b.String(), nil
}

// VerifyWorkspaceEdit checks that w, applied to each plan's current text,
// gives each plan's Result, at the right version, creating the files the
// plans create: the server's check before it sends w. uriOf and offset are
// those w was built with.
func VerifyWorkspaceEdit(w WorkspaceEdit, plans []EditPlan, uriOf func(abs string) protocol.DocumentURI, offset func(text string, pos protocol.Position) (int, error)) error {
	for _, p := range plans {
		if p.Empty() {
			continue
		}
		name := displayName(p.Proposal)
		uri := uriOf(p.Proposal.Abs)
		var edits []TextEdit
		created := false
		if w.DocumentChanges == nil {
			edits = w.Changes[uri]
		}
		for _, c := range w.DocumentChanges {
			switch {
			case c.CreateFile != nil && c.CreateFile.URI == uri:
				created = true
			case c.TextDocumentEdit != nil && c.TextDocumentEdit.TextDocument.URI == uri:
				d := c.TextDocumentEdit.TextDocument
				if want := p.Current.Open && !p.Creates(); (d.Version != nil) != want || want && *d.Version != p.Current.Version {
					return fmt.Errorf("the workspace edit for %s has the wrong document version", name)
				}
				edits = append(edits, c.TextDocumentEdit.Edits...)
			}
		}
		if created != p.Creates() {
			return fmt.Errorf("the workspace edit for %s should create it only when the plan does (creates: %v, plan: %v)", name, created, p.Creates())
		}
		got, err := ApplyEdits(p.Current.Text, edits, offset)
		if err != nil {
			return fmt.Errorf("the workspace edit for %s does not apply: %w", name, err)
		}
		if want := p.Result(); got != want {
			return fmt.Errorf("the workspace edit for %s gives %d bytes that differ from the planned %d", name, len(got), len(want))
		}
	}
	return nil
}
