package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reika-lsp/reika/internal/testslow"
)

// The test binary answers GoCacheCommand as reika-lsp does, so that
// Private can name it in GOCACHEPROG. It runs before TestMain.
func init() {
	if len(os.Args) > 1 && os.Args[1] == GoCacheCommand {
		os.Exit(RunGoCache(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
}

// TestGoCacheLayered builds and tests a small module in the sandbox, with
// a user's GOCACHE warmed outside it first, in a home the sandbox hides:
// through the cache program the build reads the user's cache (its own
// gets little), the user's cache is unchanged to the file's time, and a
// command cannot write there. Under the build tag long the same commands
// with a cold private cache and no layer are timed beside them (they
// build the standard library again, 20 to 40 s on two busy cores).
func TestGoCacheLayered(t *testing.T) {
	goPath, _ := needTool(t, "go")
	out, err := exec.Command(goPath, "env", "GOVERSION").Output()
	if version := strings.TrimSpace(string(out)); err != nil || !goAtLeast(version, 24) {
		t.Skipf("go env GOVERSION = %q, %v: no GOCACHEPROG", out, err)
	}
	// SANDBOX_GOCACHE_PROG names another program to serve the layer: a
	// reika-lsp built from ./cmd/reika-lsp.
	self := os.Getenv("SANDBOX_GOCACHE_PROG")
	if self == "" {
		if self, err = os.Executable(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	user := Cache{Path: filepath.Join(home, ".cache", "go-build"), Write: true, Tool: "go env GOCACHE", Version: strings.TrimSpace(string(out))}
	ws := filepath.Join(dir, "ws")
	for name, text := range map[string]string{
		"go.mod":       "module example.com/tiny\n\ngo 1.24\n",
		"main.go":      "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(hello()) }\n\nfunc hello() string { return \"hello\" }\n",
		"main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) {\n\tif hello() != \"hello\" {\n\t\tt.Fail()\n\t}\n}\n",
	} {
		if err := os.MkdirAll(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	steps := []string{goPath + " build -o /dev/null .", goPath + " test -count=1 ."}
	base := []string{"GOFLAGS=-mod=readonly", "GOPROXY=off", "GOTOOLCHAIN=local"}
	warm := Override(Env(os.Environ(), "REIKA_API_KEY", nil), append(base, "GOCACHE="+user.Path))
	for _, s := range steps {
		if got, err := goRun(t, nil, ws, s, warm); err != nil {
			t.Fatalf("%s outside the sandbox: %v\n%s", s, err, got)
		}
	}
	before := snapshot(t, user.Path)

	legs := []bool{true}
	if testslow.Long {
		legs = append(legs, false)
	}
	for _, layered := range legs {
		prog, name := self, "layered"
		if !layered {
			prog, name = "", "cold"
		}
		private := filepath.Join(dir, name)
		caches, vars := Private(private, []Cache{user}, prog)
		if strings.Contains(strings.Join(vars, " "), "GOCACHEPROG=") != layered {
			t.Fatalf("Private(%s) variables = %v", name, vars)
		}
		temp := t.TempDir()
		p := Policy{Workspace: []string{ws}, Temp: temp, Home: home, Caches: caches}
		env := Override(Env(os.Environ(), "REIKA_API_KEY", nil), append(append(vars, base...), "TMPDIR="+temp))
		for _, s := range steps {
			start := time.Now()
			if got, err := goRun(t, &p, ws, s, env); err != nil {
				t.Fatalf("%s in the sandbox (%s): %v\n%s", s, name, err, got)
			}
			t.Logf("%s, %s: %.1fs", name, s[len(goPath)+1:], time.Since(start).Seconds())
		}
		outputs, _ := filepath.Glob(filepath.Join(private, "go-build", "*", "*-d"))
		t.Logf("%s: %d outputs in the private cache", name, len(outputs))
		if layered {
			if len(outputs) > 20 {
				t.Errorf("layered: the private cache holds %d outputs after the build: the user's cache was not read", len(outputs))
			}
			probe := filepath.Join(user.Path, "00", "reika-poison-probe")
			if got, err := goRun(t, &p, ws, "echo payload > "+probe, env); err == nil {
				t.Errorf("a contained command wrote into the user's GOCACHE under the layer:\n%s", got)
			}
		}
	}
	if diff := cmp.Diff(before, snapshot(t, user.Path)); diff != "" {
		t.Errorf("the user's cache changed (-before +after):\n%s", diff)
	}
}

// goRun runs script with env in dir, in the sandbox p (nil: outside it),
// as the agent does: the environment given whole.
func goRun(t *testing.T, p *Policy, dir, script string, env []string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if p == nil {
		err := cmd.Run()
		return out.String(), err
	}
	if err := p.Start(cmd); err != nil {
		t.Fatalf("Start: %v", err)
	}
	err := cmd.Wait()
	return out.String(), err
}
