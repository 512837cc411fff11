package tools

import (
	"fmt"
	"strings"
	"testing"
)

// Set keeps the errors first, then the warnings, at most
// MaxEditorDiagnostics, each message on one line and clipped; the text
// the ask carries stays within a navigation answer's bound and counts
// what it leaves out.
func TestEditorDiagnosticsBounds(t *testing.T) {
	var ds []EditorDiagnostic
	for i := range 80 {
		sev := "warning"
		if i%4 == 0 {
			sev = "error"
		}
		ds = append(ds, EditorDiagnostic{Path: fmt.Sprintf("f%d.go", i%3), Line: i + 1, Column: 1, Severity: sev,
			Message: "line one\nline two " + strings.Repeat("x", 400), Source: "lint"})
	}
	ds = append(ds, EditorDiagnostic{Path: "f0.go", Line: 1, Severity: "hint", Message: "not kept"})
	var e EditorDiagnostics
	e.Set(ds)
	all := e.All()
	if len(all) != MaxEditorDiagnostics {
		t.Fatalf("Set kept %d, want %d", len(all), MaxEditorDiagnostics)
	}
	for i, d := range all {
		if want := map[bool]string{true: "error", false: "warning"}[i < 20]; d.Severity != want {
			t.Fatalf("diagnostic %d is a %s, want a %s (the 20 errors first)", i, d.Severity, want)
		}
		if strings.Contains(d.Message, "\n") || len(d.Message) > editorMessageLen+40 {
			t.Fatalf("diagnostic %d's message = %q, want one line of at most about %d bytes", i, d.Message, editorMessageLen)
		}
	}
	text := EditorDiagnosticsText(all, 81)
	if len(text) > navBytes || !strings.Contains(text, "more not shown") || !strings.Contains(text, "not from the user") {
		t.Errorf("the ask's text (%d bytes) = %q, want at most %d bytes, saying whose text it is and counting the rest", len(text), text, navBytes)
	}
	ans, ok := e.EditorAnswer([]string{"f1.go", "other.go"})
	if !ok || len(ans.Locations) == 0 || ans.Source != editorSource || !strings.Contains(ans.Text, "other.go") {
		t.Errorf("EditorAnswer = %+v, %v; want f1.go's diagnostics, and other.go said to show none", ans, ok)
	}
	for _, l := range ans.Locations {
		if l.Path != "f1.go" {
			t.Errorf("EditorAnswer lists %s, want f1.go's only", l.Path)
		}
	}
	var none EditorDiagnostics
	if _, ok := none.EditorAnswer([]string{"f1.go"}); ok {
		t.Errorf("EditorAnswer without a report answered, want ok false")
	}
}
