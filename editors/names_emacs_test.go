package editors

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/lsp"
)

// TestEmacsNames checks that the Emacs package's mirror of the protocol's
// names (reika-commands in emacs/reika.el) holds exactly lsp's commands,
// each under the kebab-case of its name, and that the package spells no
// command anywhere else.
func TestEmacsNames(t *testing.T) {
	b, err := os.ReadFile("emacs/reika.el")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	block := regexp.MustCompile(`(?s)\(defconst reika-commands\n\s*'\((.*?)\)\n\s*"`).FindStringSubmatch(src)
	if block == nil {
		t.Fatal("reika.el: no (defconst reika-commands '(…) \"…\")")
	}
	got := map[string]string{} // value → key
	for _, m := range regexp.MustCompile(`\(([\w-]+) \. "([^"]*)"\)`).FindAllStringSubmatch(block[1], -1) {
		got[m[2]] = m[1]
	}
	for _, cmd := range lsp.Commands {
		key, ok := got[cmd]
		if !ok {
			t.Errorf("reika-commands lacks the command %q", cmd)
			continue
		}
		if want := strings.ReplaceAll(snake(strings.TrimPrefix(cmd, "reika.")), "_", "-"); key != want {
			t.Errorf("reika-commands names %q %s, want %s", cmd, key, want)
		}
		delete(got, cmd)
	}
	for cmd := range got {
		t.Errorf("reika-commands has %q, which lsp.Commands does not", cmd)
	}
	if m := regexp.MustCompile(`\(defconst reika-trust-plan "([^"]*)"`).FindStringSubmatch(src); m == nil || m[1] != lsp.TrustPlan {
		t.Errorf("reika.el's reika-trust-plan = %v, want %q", m, lsp.TrustPlan)
	}
	rest := strings.Replace(src, block[0], "", 1)
	for _, cmd := range lsp.Commands {
		if strings.Contains(rest, `"`+cmd+`"`) {
			t.Errorf("reika.el spells %q outside reika-commands", cmd)
		}
	}
}
