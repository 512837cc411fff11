package editors

import (
	"strings"
	"testing"
	"time"
)

// TestVSCodeFocus: the user asks through Reika: Ask's input box in
// greet.go and goes on typing there once the Reika panel's page is ready
// (where it used to take the keyboard). The panel opens beside the editor
// without the focus: the typed lines land in greet.go, and none of them
// becomes an ask. The agent's edit, which arrives while the user types,
// lands too.
func TestVSCodeFocus(t *testing.T) {
	longBoot(t, "TestVSCode")
	script := `[` + strings.TrimSuffix(greetEdit, "}") + `, "fault": {"latency": "2s"}},
  {"content": "Done."}]`
	r := newRig(t, script, map[string]string{"greet.go": greetGo})
	start := time.Now()
	rec := vscodeScenario(t, r, "focus")
	t.Logf("code-server and the focus in %v; once the panel was ready the focus was on %s (the active editor %s, the panel active: %v); asks %q; end line %q",
		time.Since(start).Round(time.Millisecond), rec.Ready.Focused, rec.Ready.Active, rec.Ready.PanelActive, rec.Asks, rec.Final)
	for i, ty := range rec.Typing {
		t.Logf("after typed line %d the focus was on %s and greet.go read:\n%s", i+1, ty.Focused, ty.Text)
	}
	if rec.Error != "" {
		t.Fatalf("the driver failed: %s", rec.Error)
	}
	if rec.Ready.PanelActive || strings.Contains(rec.Ready.Focused, "IFRAME") || !strings.HasSuffix(rec.Ready.Active, "/greet.go") {
		t.Errorf("the panel took the focus: on %s, the panel active: %v, the active editor %q; want greet.go's editor", rec.Ready.Focused, rec.Ready.PanelActive, rec.Ready.Active)
	}
	if len(rec.Asks) != 1 {
		t.Errorf("the panel shows %d asks %q, want the one the user made: typing became an ask", len(rec.Asks), rec.Asks)
	}
	for _, line := range []string{"// typed 1", "// typed 2", "// typed 3", `return "Hello, " + name + "!"`} {
		if !strings.Contains(rec.Text, line) {
			t.Errorf("greet.go lacks %q:\n%s", line, rec.Text)
		}
	}
	if !strings.Contains(rec.Final, "1 change applied to greet.go") {
		t.Errorf("the end line is %q, want 1 change applied to greet.go", rec.Final)
	}
}

// TestVSCodeLateUndo: the run ends saying the change was applied; then the
// user undoes it in greet.go. The server tells the user the change was
// undone by them, and does not make it again.
func TestVSCodeLateUndo(t *testing.T) {
	longBoot(t, "TestVSCode")
	r := newRig(t, `[`+greetEdit+`, {"content": "Done."}]`, map[string]string{"greet.go": greetGo})
	rec := vscodeScenario(t, r, "lateundo")
	t.Logf("end line %q; then %q", rec.Final, rec.Told)
	if rec.Error != "" {
		t.Fatalf("the driver failed: %s", rec.Error)
	}
	if !strings.Contains(rec.Final, "1 change applied to greet.go") {
		t.Errorf("the end line is %q, want 1 change applied to greet.go (the undo came after it)", rec.Final)
	}
	if !strings.Contains(rec.Told, "the change to greet.go was undone by you") {
		t.Errorf("the correction is %q, want it to say the change to greet.go was undone by you", rec.Told)
	}
	if got := strings.Join(rec.Trial.Lines, "\n") + "\n"; got != greetGo {
		t.Errorf("greet.go after the undo:\n%s\nwant\n%s", got, greetGo)
	}
}
