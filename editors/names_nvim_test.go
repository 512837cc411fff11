package editors

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/lsp"
)

// TestNvimNames checks that the Neovim plugin's mirror of the protocol's
// names (nvim/lua/reika/names.lua) holds exactly lsp's: every command,
// under the snake_case of its name, and the status notification.
func TestNvimNames(t *testing.T) {
	b, err := os.ReadFile("nvim/lua/reika/names.lua")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	block := regexp.MustCompile(`(?s)M\.commands = \{(.*?)\n\}`).FindStringSubmatch(src)
	if block == nil {
		t.Fatal("names.lua: no M.commands = { … } table")
	}
	got := map[string]string{} // value → key
	for _, m := range regexp.MustCompile(`(?m)^\s*(\w+) = "([^"]*)",`).FindAllStringSubmatch(block[1], -1) {
		got[m[2]] = m[1]
	}
	for _, cmd := range lsp.Commands {
		key, ok := got[cmd]
		if !ok {
			t.Errorf("names.lua lacks the command %q", cmd)
			continue
		}
		if want := snake(strings.TrimPrefix(cmd, "reika.")); key != want {
			t.Errorf("names.lua names %q %s, want %s", cmd, key, want)
		}
		delete(got, cmd)
	}
	for cmd := range got {
		t.Errorf("names.lua has %q, which lsp.Commands does not", cmd)
	}
	m := regexp.MustCompile(`(?m)^M\.status_notification = "([^"]*)"`).FindStringSubmatch(src)
	if m == nil || m[1] != lsp.StatusNotification {
		t.Errorf("names.lua's status_notification = %v, want %q", m, lsp.StatusNotification)
	}
	m = regexp.MustCompile(`(?m)^M\.trust_plan = "([^"]*)"`).FindStringSubmatch(src)
	if m == nil || m[1] != lsp.TrustPlan {
		t.Errorf("names.lua's trust_plan = %v, want %q", m, lsp.TrustPlan)
	}
	// The plugin spells no name anywhere else.
	for _, dir := range []string{"nvim/lua/reika", "nvim/plugin"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() == "names.lua" {
				continue
			}
			text, err := os.ReadFile(dir + "/" + e.Name())
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range append(slices.Clone(lsp.Commands), lsp.StatusNotification) {
				if strings.Contains(string(text), `"`+name+`"`) {
					t.Errorf("%s/%s spells %q: take it from names.lua", dir, e.Name(), name)
				}
			}
		}
	}
}

// snake writes newSession as new_session and showRecap as show_recap.
func snake(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestNvimTrustKeys: the plugin restarts a client (rather than pushing)
// when setup{} changes a setting the server takes only at startup; its
// list is agent/config's TrustKeys.
func TestNvimTrustKeys(t *testing.T) {
	b, err := os.ReadFile("nvim/lua/reika/client.lua")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`M\.trust_keys = \{([^}]*)\}`).FindSubmatch(b)
	if m == nil {
		t.Fatal("client.lua: no M.trust_keys = { … }")
	}
	var got []string
	for _, q := range regexp.MustCompile(`"(\w+)"`).FindAllSubmatch(m[1], -1) {
		got = append(got, string(q[1]))
	}
	if !slices.Equal(got, config.TrustKeys) {
		t.Errorf("client.lua: trust_keys = %q, want config.TrustKeys %q", got, config.TrustKeys)
	}
}
