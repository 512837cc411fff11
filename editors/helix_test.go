package editors

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
)

// getGo has a comment that asks Reika for something, for "Reika: do what
// this comment says" (line 7).
const getGo = `package get

import "net/http"

// Get fetches url.
func Get(url string) (*http.Response, error) {
	// reika: add a timeout
	return http.Get(url)
}
`

// getEdit is the agent's edit of getGo, and what getGo becomes.
const (
	getEdit = `{"tool_calls": [{"name": "edit", "arguments": {"path": "get.go", "old_text": "\t// reika: add a timeout\n\treturn http.Get(url)", "new_text": "\tclient := &http.Client{Timeout: 10 * time.Second}\n\treturn client.Get(url)"}}]}`
	getDone = "package get\n\nimport \"net/http\"\n\n// Get fetches url.\nfunc Get(url string) (*http.Response, error) {\n\tclient := &http.Client{Timeout: 10 * time.Second}\n\treturn client.Get(url)\n}\n"
)

// tmux is one Helix session under a private tmux server: Helix has no
// headless mode, so the test types keys and reads the screen.
type tmux struct {
	t    *testing.T
	sock string
	env  []string
	dir  string
}

func (m *tmux) cmd(args ...string) string {
	m.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", m.sock}, args...)...)
	cmd.Env, cmd.Dir = m.env, m.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		m.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends tmux key names (Space, Enter, Down, Escape) or text.
func (m *tmux) keys(keys ...string) { m.cmd(append([]string{"send-keys", "-t", "hx"}, keys...)...) }

// text types s literally.
func (m *tmux) text(s string) { m.cmd("send-keys", "-t", "hx", "-l", s) }

func (m *tmux) screen() string { return m.cmd("capture-pane", "-p", "-t", "hx") }

// waitFor polls the screen until it contains want, or fails after limit.
func (m *tmux) waitFor(what, want string, limit time.Duration) string {
	m.t.Helper()
	return m.waitForRE(what, regexp.MustCompile(regexp.QuoteMeta(want)), limit)
}

// waitForRE polls the screen until want matches it, or fails after limit
// (times REIKA_TEST_SLOW).
func (m *tmux) waitForRE(what string, want *regexp.Regexp, limit time.Duration) string {
	m.t.Helper()
	limit = testslow.Scale(limit)
	deadline := time.Now().Add(limit)
	for {
		s := m.screen()
		if want.MatchString(s) {
			return s
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("%s: no %q on the screen within %v:\n%s", what, want, limit, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startHelix opens file at line in Helix under tmux, with the README's
// languages.toml (the endpoint aside) in a private XDG config directory
// and no REIKA_ENDPOINT: the server finds the engine through Helix's
// `config` only.
func startHelix(t *testing.T, r *rig, file string, line string) *tmux {
	t.Helper()
	return startHelixArgs(t, r, file+":"+line)
}

// withoutGopls is the search path path without the directories that hold
// a gopls. The README's languages.toml starts gopls beside Reika; where it
// is installed, Helix 25.01's :lsp-workspace-command picker lists gopls's
// commands only (the README says so), so the trials run as on the machine
// CI has, where it is not.
func withoutGopls(path string) string {
	var keep []string
	for _, dir := range filepath.SplitList(path) {
		if _, err := os.Stat(filepath.Join(dir, "gopls")); err != nil {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// startHelixArgs is startHelix with hx's arguments (-v logs the LSP
// traffic to helix.log).
func startHelixArgs(t *testing.T, r *rig, args ...string) *tmux {
	t.Helper()
	hx := need(t, "hx")
	need(t, "tmux")
	env := r.envNoEndpoint()
	for i, e := range env {
		switch {
		case strings.HasPrefix(e, "TERM="):
			env[i] = "TERM=xterm-256color"
		case strings.HasPrefix(e, "PATH="):
			env[i] = "PATH=" + withoutGopls(strings.TrimPrefix(e, "PATH="))
		}
	}
	conf := filepath.Join(r.Tmp, "xdg-config", "helix")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "languages.toml"), []byte(r.withEndpoint(t, snippet(t, "helix"))), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &tmux{t: t, sock: filepath.Join(r.Tmp, "tmux.sock"), env: env, dir: r.WS}
	m.cmd(append([]string{"new-session", "-d", "-s", "hx", "-x", "120", "-y", "40", hx}, args...)...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the screen at the end:\n%s", m.screen())
			if b, err := os.ReadFile(filepath.Join(r.Tmp, "xdg-cache", "helix", "helix.log")); err == nil {
				t.Logf("helix.log:\n%s", b)
			}
		}
		exec.Command("tmux", "-S", m.sock, "kill-server").Run()
	})
	m.waitFor("Helix starts", "NOR", 10*time.Second)
	return m
}

// codeAction opens `space a` until the menu holds title (the server may
// still be starting), then picks it.
func (m *tmux) codeAction(title string) {
	m.t.Helper()
	deadline := time.Now().Add(testslow.Scale(10 * time.Second))
	for {
		m.keys("Space", "a")
		time.Sleep(300 * time.Millisecond)
		s := m.screen()
		if i := menuIndex(s, title); i >= 0 {
			for ; i > 0; i-- {
				m.keys("Down")
			}
			m.keys("Enter")
			return
		}
		m.keys("Escape")
		// An Escape that the next key follows at once reads as Alt+key.
		time.Sleep(100 * time.Millisecond)
		if time.Now().After(deadline) {
			m.t.Fatalf("no code action %q within 10s:\n%s", title, s)
		}
	}
}

// menuIndex is title's place among the screen's menu items (the lines
// that show "Reika: …" titles, top to bottom), or -1.
func menuIndex(screen, title string) int {
	i := 0
	for _, l := range strings.Split(screen, "\n") {
		if !strings.Contains(l, "Reika: ") || strings.Contains(l, "// reika:") {
			continue
		}
		if strings.Contains(l, title) {
			return i
		}
		i++
	}
	return -1
}

// TestHelix runs Helix 25.01 under tmux with the README's languages.toml:
// a Reika code action on the comment `// reika: add a timeout` runs the
// agent, whose edit lands in the buffer (saved with :w), and
// `:lsp-workspace-command reika.compact` reaches the server, and reika.ask
// picked from the command picker answers how to give it an instruction. "comment"
// picks "Reika: do what this comment says"; "fix" picks "Reika: fix this
// code", the same path through an older action.
func TestHelix(t *testing.T) {
	for _, c := range []struct{ name, title string }{
		{"comment", "Reika: do what this comment says"},
		{"fix", "Reika: fix this code"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, `[`+getEdit+`, {"content": "Get now times out after 10 s."}]`, map[string]string{"get.go": getGo})
			start := time.Now()
			m := startHelix(t, r, "get.go", "7")
			m.codeAction(c.title)
			m.waitFor("the edit in the buffer", "client := &http.Client{Timeout: 10 * time.Second}", 10*time.Second)
			m.waitFor("the end of the run", "Get now times out", 10*time.Second)
			m.text(":w")
			m.keys("Enter")
			// Helix writes the file anew: for a moment it may not exist.
			deadline := time.Now().Add(testslow.Scale(5 * time.Second))
			for b, _ := os.ReadFile(filepath.Join(r.WS, "get.go")); string(b) != getDone; b, _ = os.ReadFile(filepath.Join(r.WS, "get.go")) {
				if time.Now().After(deadline) {
					t.Fatalf("get.go after :w:\n%s", b)
				}
				time.Sleep(50 * time.Millisecond)
			}

			m.text(":lsp-workspace-command reika.compact")
			m.keys("Enter")
			// A fold, or the answer that there is nothing (worth) folding: the
			// command reached the server, which answered in the status line.
			m.waitForRE("reika.compact's answer",
				regexp.MustCompile(`Reika folded the conversation: \d+ → \d+ tokens|Reika: nothing (to|worth) fold`), 5*time.Second)

			// The picker lists reika.ask, which needs an instruction it
			// cannot pass: picked, the server says how to give one.
			m.text(":lsp-workspace-command")
			m.keys("Enter")
			m.waitFor("the command picker", "reika.applyProposal", 5*time.Second)
			m.text("reika.ask")
			time.Sleep(200 * time.Millisecond)
			m.keys("Enter")
			m.waitFor("reika.ask's warning from the picker", "reika.ask needs an instruction", 5*time.Second)
			t.Logf("%s in %v", c.name, time.Since(start).Round(time.Millisecond))
		})
	}
}
