package repomap

import (
	"fmt"
	"strings"
	"testing"
)

// The reference scan of the languages whose literals and comments differ
// from the others': what each reads as a use, and as a call.
func TestReferencesLiterals(t *testing.T) {
	for _, tc := range []struct {
		l    *language
		src  string
		want string // name×count(calls), as describe writes them
	}{
		{langCpp, `auto s = R"x(skip "this) still")x"; f(s);`, "f(1) s×2"},
		{langCpp, `auto s = u8"skip"; auto w = L"skip";`, "s w"},
		{langCSharp, `var s = @"skip ""this"" too
and this"; F(s);`, "F(1) s×2"},
		{langJava, `String s = """
    skip "this"
    """; f(s);`, "String f(1) s×2"},
		{langRuby, "=begin\nskip\n=end\nok? x!\n@ivar $g f(1)", "f(1) g ivar ok?(1) x!(1)"},
		{langRuby, "a != b # skip", "a(1) b(1)"},
		{langPHP, "#[Attr] # skip\n$x = f(); // skip\n/* skip */ 'skip' \"skip\"", "$x Attr f(1)"},
		{langBash, "echo ${#a} $# # skip\nf \"$(g)\" 'skip\nthis' don't", "a don(1) echo(1) f(1) g(1) t(1)"},
		{langBash, "x=$HOME/${DIR}", "DIR HOME x(1)"},
		{langC, "#define N 3\nint f(void) { return N; } /* skip */ 'c'", "N×2 f(1)"},
	} {
		var got []string
		for _, r := range references(tc.l, []byte(tc.src)) {
			w := r.Name
			if r.Count > 1 {
				w += fmt.Sprintf("×%d", r.Count)
			}
			if r.Calls > 0 {
				w += fmt.Sprintf("(%d)", r.Calls)
			}
			got = append(got, w)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("references(%s, %q) = %s, want %s", tc.l.name, tc.src, g, tc.want)
		}
	}
}
