package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNpmTestInside: npm test of a normal package (node's own test runner,
// no dependencies) passes in the sandbox, with npm's cache Reika's own.
func TestNpmTestInside(t *testing.T) {
	npm, home := needTool(t, "npm")
	caches, vars := Private(testPrivate(t), DiscoverCaches(t.Context(), home, os.Getenv, exec.LookPath), "")
	ws := filepath.Join(t.TempDir(), "ws")
	files := map[string]string{
		"package.json":   `{"name": "plain", "version": "1.0.0", "scripts": {"test": "node --test"}}` + "\n",
		"index.js":       "exports.add = (a, b) => a + b;\n",
		"test/a.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../index.js');\n\ntest('add', () => { assert.strictEqual(add(1, 2), 3); });\n",
	}
	for name, text := range files {
		path := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := Policy{Workspace: []string{ws}, Temp: t.TempDir(), Home: home, Caches: caches}
	out, err := run(t, p, ws, npm+" test", append(vars, "TMPDIR="+p.Temp)...)
	if err != nil || !strings.Contains(out, "# pass 1") {
		t.Errorf("npm test in the sandbox: %v\n%s\n%s", err, out, Probe().Line(p))
	}
}
