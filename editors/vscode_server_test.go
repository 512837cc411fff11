package editors

import (
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
		for _, where := range []string{"the extension's server/", "PATH", "go env GOBIN", "$(go env GOPATH)/bin", "~/go/bin", "~/.local/bin", "go install github.com/reika-lsp/reika/cmd/reika-lsp@latest"} {
			if !strings.Contains(got, where) {
				t.Errorf("findServer with no server = %q, which does not name %s", got, where)
			}
		}
	})
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
