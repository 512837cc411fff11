package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/contextwin"
	"github.com/reika-lsp/reika/repomap"
	"golang.org/x/tools/txtar"
)

func noEnv(string) string { return "" }

// repoGoFiles lists this repository's Go files.
func repoGoFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("listing the repository's Go files: %v", err)
	}
	return files
}

// The map of this repository's own Go files fits the default budget, is
// made of file lines, symbol lines and the count of what was left out,
// and is the same on a second run — unless a parse ran over the map's
// time limit in either (a busy machine, the race detector), which the
// command says.
func TestMapRepository(t *testing.T) {
	files := repoGoFiles(t)
	budget := contextwin.RepoMapChars(defaultMapWindow)
	var outs []string
	slow := false
	for range 2 {
		var stdout, stderr bytes.Buffer
		if code := mapMain(context.Background(), files, noEnv, &stdout, &stderr); code != 0 {
			t.Fatalf("map: exit %d: %s", code, stderr.String())
		}
		outs = append(outs, stdout.String())
		if strings.Contains(stderr.String(), repomap.NoteTimedOut) {
			t.Logf("map: %s", strings.TrimSpace(stderr.String()))
			slow = true
		}
	}
	out := outs[0]
	if len(out) > budget || len(out) < budget*3/4 {
		t.Errorf("map of %d files is %d bytes, want at most %d and not much less", len(files), len(out), budget)
	}
	if outs[1] != out && !slow {
		t.Errorf("map differs between two runs:\n%s\nthen\n%s", out, outs[1])
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "(not shown: ") {
		t.Errorf("last line = %q, want the count of what was left out", last)
	}
	var symbols int
	for _, l := range lines[:len(lines)-1] {
		switch {
		case strings.HasPrefix(l, "  "):
			symbols++
		case !slices.Contains(files, filepath.FromSlash(l)):
			t.Errorf("line %q is neither a symbol nor one of the files", l)
		}
	}
	if symbols < len(lines)/2 {
		t.Errorf("map has %d symbol lines of %d", symbols, len(lines))
	}
}

// The budget: --budget, else --window's share, else REIKA_REPO_MAP_BUDGET,
// else a 32768-token window's share.
func TestMapBudget(t *testing.T) {
	def := contextwin.RepoMapChars(defaultMapWindow)
	for _, tc := range []struct {
		budget    int
		budgetSet bool
		window    string
		env       string
		want      int
		wantErr   bool
	}{
		{want: def},
		{budget: 500, budgetSet: true, env: "9000", want: 500},
		{budget: 0, budgetSet: true, want: 0},
		{budget: -1, budgetSet: true, wantErr: true},
		{window: "16k", want: 3200},
		{window: "24000", env: "9000", want: 4800},
		{window: "128k", want: 12000},
		{window: "lots", wantErr: true},
		{window: "10", wantErr: true},
		{env: "9000", want: 9000},
		{env: "0", want: 0}, // as the server reads it: no map
		{env: "-5", wantErr: true},
		{env: "many", wantErr: true},
	} {
		getenv := func(k string) string {
			if k == "REIKA_REPO_MAP_BUDGET" {
				return tc.env
			}
			return ""
		}
		got, err := mapBudget(tc.budget, tc.budgetSet, tc.window, getenv)
		if (err != nil) != tc.wantErr || err == nil && got != tc.want {
			t.Errorf("mapBudget(%d, %v, %q) with REIKA_REPO_MAP_BUDGET=%q = %d, %v; want %d, error %v",
				tc.budget, tc.budgetSet, tc.window, tc.env, got, err, tc.want, tc.wantErr)
		}
	}
}

// Directories are read recursively, without version-control directories,
// node_modules and files over the size limit; a file named twice is read
// once.
func TestMapDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lib/lib.go", "package lib\n\n// Helper helps.\nfunc Helper() int { return 1 }\n")
	write("main.go", "package main\n\nimport \"x/lib\"\n\nfunc main() { lib.Helper() }\n")
	write("web/app.ts", "export function start(): void {}\n")
	write("notes.txt", "a note\n")
	write(".git/config", "[core]\n")
	write("node_modules/dep/index.js", "function dep() {}\n")
	write("big.go", "package big\n"+strings.Repeat("// padding\n", maxMapFileBytes/11+1))

	var stdout, stderr bytes.Buffer
	args := []string{"--budget", "1000", "--focus", filepath.Join(dir, "web/app.ts"), dir, filepath.Join(dir, "main.go")}
	if code := mapMain(context.Background(), args, noEnv, &stdout, &stderr); code != 0 {
		t.Fatalf("map: exit %d: %s", code, stderr.String())
	}
	d := filepath.ToSlash(dir)
	want := d + "/lib/lib.go\n  4: func Helper() int\n" +
		d + "/main.go\n  5: func main()\n" +
		d + "/notes.txt\n" +
		d + "/web/app.ts\n  1: function start(): void\n"
	if got := stdout.String(); got != want {
		t.Errorf("map printed\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(stderr.String(), "4 files") || !strings.Contains(stderr.String(), "1 file over 8 MiB skipped") {
		t.Errorf("map's summary = %q, want 4 files and 1 skipped", stderr.String())
	}
}

func TestMapBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{nil, 2},
		{[]string{"--budget", "-3", "."}, 2},
		{[]string{"--window", "x", "."}, 2},
		{[]string{"--nope", "."}, 2},
		{[]string{"does/not/exist.go"}, 1},
	} {
		var stdout, stderr bytes.Buffer
		if code := mapMain(context.Background(), tc.args, noEnv, &stdout, &stderr); code != tc.code || stderr.Len() == 0 {
			t.Errorf("map %q = exit %d, stderr %q; want %d and a message", tc.args, code, stderr.String(), tc.code)
		}
	}
}

// A cancelled context stops the reading.
func TestMapCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	if code := mapMain(ctx, []string{"."}, noEnv, &stdout, &stderr); code != 1 {
		t.Errorf("map with a cancelled context = exit %d, want 1", code)
	}
}

// writeProject writes an archive's files but its -- want -- section under
// dir and returns that section's lines.
func writeProject(t testing.TB, ar *txtar.Archive, dir string) (want []string) {
	t.Helper()
	for _, f := range ar.Files {
		if f.Name == "want" {
			want = strings.Split(strings.TrimSuffix(string(f.Data), "\n"), "\n")
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

// `map` on a project in each language the map parses besides Go, Python,
// JavaScript, TypeScript and Rust (cmd/reika-lsp/testdata/map/*.txtar: the
// project's files, and in -- want -- the lines its map must print, in
// order) prints the project's definitions: its classes, methods,
// functions, structs, namespaces… nested as they are in the source.
func TestMapLanguages(t *testing.T) {
	paths, err := filepath.Glob("testdata/map/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no projects in testdata/map (%v)", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			want := writeProject(t, ar, dir)
			if len(want) == 0 {
				t.Fatalf("%s has no -- want -- section", path)
			}
			var stdout, stderr bytes.Buffer
			if code := mapMain(context.Background(), []string{"--budget", "100000", dir}, noEnv, &stdout, &stderr); code != 0 {
				t.Fatalf("map: exit %d: %s", code, stderr.String())
			}
			out := strings.ReplaceAll(stdout.String(), filepath.ToSlash(dir)+"/", "")
			got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			// want is a subsequence of got: every line, in its order.
			i := 0
			for _, l := range got {
				if i < len(want) && l == want[i] {
					i++
				}
			}
			if i < len(want) {
				t.Errorf("map printed\n%s\nwhich lacks %q (or has it out of order); want, in order:\n%s", out, want[i], strings.Join(want, "\n"))
			}
		})
	}
}
