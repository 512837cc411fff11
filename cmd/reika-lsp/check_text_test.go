package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// Every line check prints fits checkWidth columns: against the built-in
// engine (whose cache, subagents and sandbox rows ran to 265 columns) and
// with a setting whose value is longer than a line.
func TestCheckLinesFit(t *testing.T) {
	for _, args := range [][]string{
		{"--sim"},
		{"--sim", "--settings", `{"reika": {"bash_allow": ["` + strings.Repeat("go test ./... -run TestSomething ", 8) + `"]}}`},
	} {
		var stdout, stderr bytes.Buffer
		if code := checkMain(context.Background(), args, checkEnv(t), &stdout, &stderr); code != 0 {
			t.Fatalf("check %q: exit %d\n%s\n%s", args, code, stdout.String(), stderr.String())
		}
		for i, l := range strings.Split(stdout.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > checkWidth {
				t.Errorf("check %q: line %d is %d columns, over %d:\n%s", args[:1], i+1, n, checkWidth, l)
			}
		}
	}
}

func TestPrintRows(t *testing.T) {
	var b bytes.Buffer
	printRows(&b, "", []factRow{
		{"short", "a value", "its source"},
		{"longer key", "x", ""},
		{"long", strings.Repeat("word ", 25) + "end", "src"},
		{"url", "http://" + strings.Repeat("a", 100), ""},
	})
	want := `short       a value  (its source)
longer key  x
long        word word word word word word word word word word word word word word word word word
            word word word word word word word word end  (src)
url         http://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
            aaaaaaaaaaaaaaaaaaa
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("printRows (-want +got):\n%s", diff)
	}
}
