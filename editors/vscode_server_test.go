package editors

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVSCodeServerSearch runs the extension's server search
// (src/server.ts, compiled; it needs Node alone) on fake homes: the first
// of the extension's server/, PATH, go env GOBIN, $(go env GOPATH)/bin,
// ~/go/bin and ~/.local/bin that holds an executable reika-lsp wins, and
// the setting goes before them all.
func TestVSCodeServerSearch(t *testing.T) {
	ext := vscodeExtension(t)
	node := need(t, "node")
	places := []string{"ext/server", "path", "gobin", "gopath/bin", "home/go/bin", "home/.local/bin"}
	for i := range places {
		t.Run(places[i], func(t *testing.T) {
			tmp := t.TempDir()
			// The server is in this place and every later one; a file that
			// is not executable in the earlier ones does not count.
			for j, p := range places {
				dir := filepath.Join(tmp, p)
				os.MkdirAll(dir, 0o755)
				mode := os.FileMode(0o755)
				if j < i {
					mode = 0o644
				}
				if err := os.WriteFile(filepath.Join(dir, "reika-lsp"), []byte("#!/bin/sh\n"), mode); err != nil {
					t.Fatal(err)
				}
			}
			got := search(t, node, ext, tmp, "")
			if want := filepath.Join(tmp, places[i], "reika-lsp"); got != want {
				t.Errorf("findServer = %s, want %s", got, want)
			}
		})
	}
	t.Run("the setting first", func(t *testing.T) {
		tmp := t.TempDir()
		for _, p := range []string{"path", "mine"} {
			os.MkdirAll(filepath.Join(tmp, p), 0o755)
			os.WriteFile(filepath.Join(tmp, p, "reika-lsp"), []byte("#!/bin/sh\n"), 0o755)
		}
		if got, want := search(t, node, ext, tmp, "~/mine/reika-lsp"), filepath.Join(tmp, "home", "mine", "reika-lsp"); !strings.HasPrefix(got, "error: reika.serverPath is ~/mine/reika-lsp") {
			t.Errorf("findServer with a missing setting = %s, want the setting's error (not %s nor PATH's)", got, want)
		}
		if got, want := search(t, node, ext, tmp, filepath.Join(tmp, "mine", "reika-lsp")), filepath.Join(tmp, "mine", "reika-lsp"); got != want {
			t.Errorf("findServer with the setting = %s, want %s", got, want)
		}
	})
	t.Run("nowhere", func(t *testing.T) {
		got := search(t, node, ext, t.TempDir(), "")
		for _, where := range []string{"the extension's server/", "PATH", "go env GOBIN", "$(go env GOPATH)/bin", "~/go/bin", "~/.local/bin", "a clone of Reika with go install ./cmd/reika-lsp", "not published"} {
			if !strings.Contains(got, where) {
				t.Errorf("findServer with no server = %q, which does not name %s", got, where)
			}
		}
	})
}

// TestVSCodeCheckout: the install command runs in a clone of Reika (the
// module is not published); isCheckout tells one from other folders.
func TestVSCodeCheckout(t *testing.T) {
	ext := vscodeExtension(t)
	node := need(t, "node")
	tmp := t.TempDir()
	layout := map[string]string{
		"clone/go.mod":                 "module github.com/reika-lsp/reika\n\ngo 1.26\n",
		"clone/cmd/reika-lsp/main.go":  "package main\n",
		"other/go.mod":                 "module example.com/other\n",
		"other/cmd/reika-lsp/main.go":  "package main\n",
		"prefix/go.mod":                "module github.com/reika-lsp/reika-fork\n",
		"prefix/cmd/reika-lsp/main.go": "package main\n",
		"nocmd/go.mod":                 "module github.com/reika-lsp/reika\n",
		"empty/.keep":                  "",
	}
	for name, text := range layout {
		p := filepath.Join(tmp, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]bool{filepath.Join(tmp, "clone"): true, repo: true, filepath.Join(tmp, "other"): false,
		filepath.Join(tmp, "prefix"): false, filepath.Join(tmp, "nocmd"): false, filepath.Join(tmp, "empty"): false, filepath.Join(tmp, "none"): false} {
		out, err := exec.Command(node, "-e", `console.log(require(process.argv[1]).isCheckout(process.argv[2]))`, filepath.Join(ext, "out", "server.js"), dir).CombinedOutput()
		if err != nil {
			t.Fatalf("node: %v\n%s", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != fmt.Sprint(want) {
			t.Errorf("isCheckout(%s) = %s, want %v", dir, got, want)
		}
	}
}

// search runs findServer with tmp's layout: ext/ the extension, path/ on
// PATH, gobin/ and gopath/ as go env answers, home/ the home directory.
func search(t *testing.T, node, ext, tmp, setting string) string {
	t.Helper()
	script := `
const { findServer } = require(process.argv[1]);
const [tmp, setting] = [process.argv[2], process.argv[3]];
const goEnv = { GOBIN: tmp + "/gobin", GOPATH: tmp + "/gopath" };
try {
  console.log(findServer(setting, { extensionDir: tmp + "/ext", env: { PATH: tmp + "/path" }, home: tmp + "/home", goEnv: (k) => goEnv[k] || "" }));
} catch (e) { console.log("error: " + e.message); }`
	out, err := exec.Command(node, "-e", script, filepath.Join(ext, "out", "server.js"), tmp, setting).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}
