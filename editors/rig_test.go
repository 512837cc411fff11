package editors

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// bin is the reika-lsp binary TestMain builds once for every test.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "reika-editors-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "reika-lsp")
	build := exec.Command("go", "build", "-o", bin, "./cmd/reika-lsp")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building reika-lsp:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// need returns the path of an editor's executable (or a script that runs
// it). Missing, it skips the test — or fails it when REIKA_EDITORS=require,
// so that CI never passes by skipping.
func need(t *testing.T, name string, candidates ...string) string {
	t.Helper()
	for _, c := range append([]string{name}, candidates...) {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("%s is not installed (.ci/run installs it)", name)
	if os.Getenv("REIKA_EDITORS") == "require" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// A rig is one scenario's world: a workspace, a simulated engine playing
// a script, and the environment an editor runs the server in.
type rig struct {
	// WS is the workspace: a git repository holding the scenario's files.
	WS string
	// Endpoint is the simulated engine's base URL.
	Endpoint string
	// Tmp holds the XDG directories and anything else the test needs.
	Tmp string
	// Bin is the reika-lsp binary.
	Bin string
	// Log is the simulated engine's stderr (one line per request).
	Log *lsptest.LockedBuffer
	// Bodies is the file where the simulated engine writes each request's
	// body, a line of JSON each (requests reads it).
	Bodies string
	// Extra is more environment for the editor, after Env's own.
	Extra []string
}

var simAddr = regexp.MustCompile(`on (http://\S+/v1)`)

// newRig writes files into a new workspace and starts `reika-lsp sim
// --script` with script (a JSON array of turns) on loopback; both end
// with the test.
func newRig(t *testing.T, script string, files map[string]string) *rig {
	t.Helper()
	tmp := t.TempDir()
	r := &rig{WS: filepath.Join(tmp, "ws"), Tmp: tmp, Bin: bin, Log: &lsptest.LockedBuffer{}, Bodies: filepath.Join(tmp, "bodies.jsonl")}
	if err := os.MkdirAll(filepath.Join(r.WS, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		p := filepath.Join(r.WS, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scriptPath := filepath.Join(tmp, "script.json")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "sim", "--listen", "127.0.0.1:0", "--script", scriptPath, "--root", "", "--bodies", r.Bodies)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = r.Log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("simulated engine's log:\n%s", r.Log)
		}
	})
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("reika-lsp sim printed nothing: %s", r.Log)
	}
	m := simAddr.FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("reika-lsp sim: no address in %q", lines.Text())
	}
	r.Endpoint = m[1]
	go func() {
		for lines.Scan() {
		}
	}()
	return r
}

// Env is the environment an editor (and the server it starts) runs in:
// the engine, private XDG directories and HOME, no warm-up (a scripted
// engine answers it with a turn otherwise), and reika-lsp on PATH.
func (r *rig) Env(extra ...string) []string {
	env := []string{
		"PATH=" + filepath.Dir(r.Bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + filepath.Join(r.Tmp, "home"),
		"REIKA_ENDPOINT=" + r.Endpoint,
		"REIKA_WARMUP=0",
		"LANG=C.UTF-8",
		// The workspace's language servers (gopls, typescript-language-server
		// on CI's PATH) are agent/langserver's to test; here one could
		// outlive an editor that quit and write into a removed workspace.
		"REIKA_LANGUAGE_SERVERS=off",
		// The scripts' own waits grow by the same factor as the test's.
		fmt.Sprintf("%s=%g", testslow.Env, testslow.Factor()),
	}
	for _, d := range []string{"CONFIG", "CACHE", "STATE", "DATA", "RUNTIME"} {
		dir := filepath.Join(r.Tmp, "xdg-"+strings.ToLower(d))
		os.MkdirAll(dir, 0o700)
		env = append(env, "XDG_"+d+"_HOME="+dir)
	}
	os.MkdirAll(filepath.Join(r.Tmp, "home"), 0o755)
	if runtime.GOOS == "linux" {
		env = append(env, "TERM=dumb")
	}
	env = append(env, r.Extra...)
	return append(env, extra...)
}

// run runs an editor with the rig's environment in the workspace, killed
// after limit (times REIKA_TEST_SLOW), and returns what it printed.
func (r *rig) run(t *testing.T, limit time.Duration, name string, args ...string) (string, error) {
	t.Helper()
	limit = testslow.Scale(limit)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = r.WS
	cmd.Env = r.Env()
	cmd.WaitDelay = 5 * time.Second
	// The editor and what it starts (the language server, an ACP agent)
	// in a process group of their own, killed together on a timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	// An editor may quit without waiting for its language server (the
	// current Neovim starts it in a session of its own), which then
	// writes the session's state into the test's directories while their
	// cleanup removes them.
	r.reap(testslow.Scale(10 * time.Second))
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("%s did not finish within %v: %w", filepath.Base(name), limit, ctx.Err())
	}
	return string(out), err
}

// reap waits until no process started with the rig's environment is
// left but zombies (this machine's first process may never reap them),
// and kills the rest after limit.
func (r *rig) reap(limit time.Duration) {
	mark := []byte("XDG_STATE_HOME=" + filepath.Join(r.Tmp, "xdg-state") + "\x00")
	deadline := time.Now().Add(limit)
	for {
		pids := marked(mark)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// marked are the processes, zombies aside, whose environment holds mark
// (a variable and its value, NUL-ended), as /proc says: none where there
// is no /proc.
func marked(mark []byte) []int {
	dirs, _ := os.ReadDir("/proc")
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil || !bytes.HasPrefix(env, mark) && !bytes.Contains(env, append([]byte{0}, mark...)) {
			continue
		}
		// pid (comm) state …; comm may hold spaces and ')'.
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); err == nil && i > 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 0 && f[0] != "Z" {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// requests waits (up to 10 s) until the engine has recorded n requests
// and returns the text of each one's messages, joined: the engine records
// a request when its handler returns, which may come after the editor
// has the answer.
func (r *rig) requests(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(r.Bodies)
		var lines []string
		if len(b) > 0 {
			lines = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		}
		if len(lines) >= n {
			out := make([]string, len(lines))
			for i, l := range lines {
				var req struct {
					Messages []struct {
						Content json.RawMessage `json:"content"`
					} `json:"messages"`
				}
				if err := json.Unmarshal([]byte(l), &req); err != nil {
					t.Fatalf("the engine's request %d: %v", i+1, err)
				}
				var texts []string
				for _, m := range req.Messages {
					var s string
					if json.Unmarshal(m.Content, &s) != nil {
						s = string(m.Content)
					}
					texts = append(texts, s)
				}
				out[i] = strings.Join(texts, "\n\n")
			}
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the engine recorded %d requests within 10s, want %d", len(lines), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// read returns a workspace file's text.
func (r *rig) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.WS, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// snippetFiles are the documents whose code blocks the tests run: the
// README has each editor's short setup, docs/editors.md the rest.
var snippetFiles = []string{"README.md", filepath.Join("docs", "editors.md")}

// snippet returns the code block marked `<!-- test: NAME -->` (the marker on
// the line before the fence) in the README or docs/editors.md, so that what
// a user copies is what the tests run. A name marked in two places is an
// error: the tests would run one copy and not the other.
func snippet(t *testing.T, name string) string {
	t.Helper()
	var found []string
	var body string
	for _, f := range snippetFiles {
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := markedBlock(t, f, string(b), name); ok {
			found = append(found, f)
			body = s
		}
	}
	switch len(found) {
	case 0:
		t.Fatalf("no snippet marked <!-- test: %s --> in %s", name, strings.Join(snippetFiles, " or "))
	case 1:
		return body
	}
	t.Fatalf("the snippet %q is marked in %s, want one place", name, strings.Join(found, " and "))
	return ""
}

// markedBlock returns the code block after the marker of name in text, the
// document file.
func markedBlock(t *testing.T, file, text, name string) (string, bool) {
	t.Helper()
	lines := strings.Split(text, "\n")
	found := false
	var block string
	for i, l := range lines {
		if strings.TrimSpace(l) != "<!-- test: "+name+" -->" {
			continue
		}
		if found {
			t.Fatalf("%s: the marker %q is there twice", file, name)
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			t.Fatalf("%s: the marker %q is not followed by a code block", file, name)
		}
		var body []string
		ended := false
		for _, l := range lines[i+2:] {
			if strings.HasPrefix(l, "```") {
				ended = true
				break
			}
			body = append(body, l)
		}
		if !ended {
			t.Fatalf("%s: the code block after %q does not end", file, name)
		}
		found, block = true, strings.Join(body, "\n")+"\n"
	}
	return block, found
}

// TestRunWaitsForWhatTheEditorLeft: run returns only once what the editor
// started and left running (as the current Neovim leaves its language
// server, in a session of its own) has exited, so that nothing writes
// into the test's directories while their cleanup removes them.
func TestRunWaitsForWhatTheEditorLeft(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	tmp := t.TempDir()
	r := &rig{WS: tmp, Tmp: tmp}
	start := time.Now()
	if out, err := r.run(t, 30*time.Second, "sh", "-c", "setsid sh -c 'sleep 1; echo done > \"$XDG_STATE_HOME/left\"' > /dev/null 2>&1 &"); err != nil {
		t.Fatalf("sh: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(tmp, "xdg-state", "left")); err != nil {
		t.Errorf("run returned after %v, before the process the shell left wrote its file: %v", time.Since(start).Round(time.Millisecond), err)
	}
}
