package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeScript writes an executable shell script that appends its name
// to canaryFile, and returns its path.
func writeScript(t *testing.T, path, canaryFile string) string {
	t.Helper()
	text := "#!/bin/sh\necho " + filepath.Base(path) + " >> " + canaryFile + "\n"
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// ran reports whether a script wrote to canaryFile, and removes it.
func ran(canaryFile string) bool {
	_, err := os.Stat(canaryFile)
	os.Remove(canaryFile)
	return err == nil
}

// TestGitConfig runs git with a repository config that runs programs, once
// with the environment alone (to show that the test's programs do run
// without Env) and once with Env. The canary file is in Temp, which the
// sandbox lets a command write: only Env stops these programs.
func TestGitConfig(t *testing.T) {
	needLandlock(t)
	f := newFixture(t)
	canaryFile := filepath.Join(f.temp, "ran")
	bin := t.TempDir()
	gitRun(t, f.ws, nil, "config", "core.fsmonitor", writeScript(t, filepath.Join(bin, "fsmonitor"), canaryFile))
	writeScript(t, filepath.Join(f.ws, ".git", "hooks", "pre-commit"), canaryFile)
	gitRun(t, f.ws, nil, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "--no-verify", "-m", "first")
	ran(canaryFile)

	commit := "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x"
	tests := []struct {
		name, script string
		sandboxed    bool // run through Start; else plain, with Env (git commit must write .git)
	}{
		{"fsmonitor on git status", "git status --short", true},
		{"pre-commit hook", commit, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("bash", "-c", tt.script)
			cmd.Dir = f.ws
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s without Env: %v\n%s", tt.script, err, out)
			}
			if !ran(canaryFile) {
				t.Fatalf("%s without Env did not run the program: the test proves nothing", tt.script)
			}
			var out string
			var err error
			if tt.sandboxed {
				out, err = run(t, f.policy, f.ws, tt.script)
			} else {
				cmd := exec.Command("bash", "-c", tt.script)
				cmd.Dir = f.ws
				cmd.Env = Env(os.Environ(), "", nil)
				b, e := cmd.CombinedOutput()
				out, err = string(b), e
			}
			if err != nil {
				t.Errorf("%s with Env: %v\n%s", tt.script, err, out)
			}
			if ran(canaryFile) {
				t.Errorf("%s with Env ran the repository's program", tt.script)
			}
		})
	}
}

// TestGitDiffExternal pins what Env cannot stop: a diff.external in the
// repository's config runs on git diff (inside the sandbox, which
// contains it). An empty diff.external, the obvious override, makes every
// git diff fail instead.
func TestGitDiffExternal(t *testing.T) {
	needLandlock(t)
	f := newFixture(t)
	canaryFile := filepath.Join(f.temp, "ran")
	gitRun(t, f.ws, nil, "add", "README")
	if err := os.WriteFile(filepath.Join(f.ws, "README"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, f.ws, nil, "config", "diff.external", writeScript(t, filepath.Join(t.TempDir(), "extdiff"), canaryFile))
	tmp := "TMPDIR=" + f.temp // git writes the blobs it hands diff.external there
	out, err := run(t, f.policy, f.ws, "git diff", tmp)
	if err != nil {
		t.Fatalf("git diff: %v\n%s", err, out)
	}
	if !ran(canaryFile) {
		t.Errorf("git diff did not run diff.external: Env may now stop it; update gitConfig's comment and this test")
	}
	if out, err := run(t, f.policy, f.ws, "git diff --no-ext-diff", tmp); err != nil || !strings.Contains(out, "+changed") || ran(canaryFile) {
		t.Errorf("git diff --no-ext-diff = %v, %q; want the builtin diff", err, out)
	}
	if out, err := run(t, f.policy, f.ws, "git -c diff.external= diff", tmp); err == nil {
		t.Errorf("git -c diff.external= diff succeeded: an empty value may now disable it, and Env could set it\n%s", out)
	}
}

// TestGitFetchRefused checks that protocol.allow=never holds over a
// repository that allows the file transport.
func TestGitFetchRefused(t *testing.T) {
	needLandlock(t)
	f := newFixture(t)
	gitRun(t, f.ws, nil, "config", "protocol.file.allow", "always")
	p := f.policy
	p.Network = true
	out, err := run(t, p, f.ws, "git ls-remote "+f.ws)
	if err == nil || !strings.Contains(out, "not allowed") {
		t.Errorf("git ls-remote of a local repository = %v, %q; want transport 'file' not allowed", err, out)
	}
}

// TestGoTestInside runs go test in the sandbox with the caches of the real
// home, the build cache Reika's own, the module cache read-only: one module with no dependencies, one
// that needs golang.org/x/sys from the module cache.
func TestGoTestInside(t *testing.T) {
	goPath, home := needTool(t, "go")
	caches, vars := Private(testPrivate(t), DiscoverCaches(t.Context(), home, os.Getenv, exec.LookPath), "")
	var modcache string
	for _, c := range caches {
		if c.Tool == "go env GOMODCACHE" {
			modcache = c.Path
			if c.Write {
				t.Errorf("GOMODCACHE is writable")
			}
		}
	}
	sum, err := os.ReadFile("../../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	var sysSum []string
	for line := range strings.Lines(string(sum)) {
		if strings.HasPrefix(line, "golang.org/x/sys v0.47.0") {
			sysSum = append(sysSum, line)
		}
	}
	if modcache == "" || len(sysSum) == 0 {
		t.Skip("golang.org/x/sys v0.47.0 is not in a module cache inside home")
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	modules := map[string]map[string]string{
		"nodeps": {
			"go.mod":    "module example.com/nodeps\n\ngo 1.26\n",
			"a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n",
		},
		"withdeps": {
			"go.mod":    "module example.com/withdeps\n\ngo 1.26\n\nrequire golang.org/x/sys v0.47.0\n",
			"go.sum":    strings.Join(sysSum, ""),
			"a_test.go": "package a\n\nimport (\n\t\"testing\"\n\n\t\"golang.org/x/sys/unix\"\n)\n\nfunc TestA(t *testing.T) {\n\tif unix.Getpid() <= 0 {\n\t\tt.Fatal(\"no pid\")\n\t}\n}\n",
		},
	}
	for mod, files := range modules {
		for name, text := range files {
			path := filepath.Join(ws, mod, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := Policy{Workspace: []string{ws}, Temp: t.TempDir(), Home: home, Caches: caches}
	for mod := range modules {
		t.Run(mod, func(t *testing.T) {
			out, err := run(t, p, filepath.Join(ws, mod), goPath+" test -count=1 ./...", append(vars, "GOFLAGS=-mod=readonly", "GOPROXY=off", "TMPDIR="+p.Temp)...)
			if err != nil {
				t.Errorf("go test in the sandbox: %v\n%s\n%s", err, out, Probe().Line(p))
			}
		})
	}
}
