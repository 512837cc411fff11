package lsp

import "testing"

func TestJudgeLanding(t *testing.T) {
	old := "package greet\n\n// Greet says hello.\nfunc Greet(name string) string {\n\treturn \"hello, \" + name\n}\n"
	at := len("package greet\n\n// Greet says hello.\nfunc Greet(name string) string {\n\treturn \"")
	plan := EditPlan{Current: Current{Text: old, Version: 3, Open: true}, Hunks: []HunkEdit{{OldStart: at, OldEnd: at + 1, Text: "H"}}}
	l := expectLanding(plan)
	want := "package greet\n\n// Greet says hello.\nfunc Greet(name string) string {\n\treturn \"Hello, \" + name\n}\n"
	if l.want != want {
		t.Fatalf("want = %q", l.want)
	}
	typed := "package greet\n\n// Typed.\n"
	for _, tc := range []struct {
		name string
		now  string
		v    verdict
	}{
		{"exactly as planned", want, landed},
		{"as planned, and the user typed above", typed + want[len("package greet\n"):], landed},
		{"as planned, and the user typed below", want + "// more\n", landed},
		{"skipped: the user's typing only", typed + old[len("package greet\n"):], missed},
		{"on the user's newer text, a line too high", typed + "// Greet Hays hello.\nfunc Greet(name string) string {\n\treturn \"hello, \" + name\n}\n", missed},
		{"the user typed on the edited line too", "package greet\n\n// Greet says hello.\nfunc Greet(name string) string {\n\treturn \"Hello, \" + name // x\n}\n", missed},
		{"a line inserted right above the edited line", "package greet\n\n// Greet says hello.\nfunc Greet(name string) string {\n\t// x\n\treturn \"Hello, \" + name\n}\n", landed},
	} {
		if got := l.judge(tc.now); got != tc.v {
			t.Errorf("%s: judge = %v, want %v", tc.name, got, tc.v)
		}
	}
	if got := l.where(); got != "line 5" {
		t.Errorf("where = %q, want line 5", got)
	}
}
