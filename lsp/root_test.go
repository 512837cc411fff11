package lsp

import (
	"os"
	"path/filepath"
	"testing"
)

func TestProjectRoot(t *testing.T) {
	tmp := t.TempDir()
	proj := filepath.Join(tmp, "proj")
	deep := filepath.Join(proj, "pkg", "sub")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(tmp, "loose")
	os.MkdirAll(loose, 0o755)
	if got := projectRoot(deep); got != "" {
		t.Errorf("projectRoot without markers = %q, want none", got)
	}
	os.WriteFile(filepath.Join(proj, "go.mod"), []byte("module x\n"), 0o644)
	if got := projectRoot(deep); got != proj {
		t.Errorf("projectRoot = %q, want %q (the nearest go.mod)", got, proj)
	}
	if got := projectRoot(loose); got != "" {
		t.Errorf("projectRoot of a folder in no project = %q, want none", got)
	}
	if !tooWide("/") {
		t.Error(`"/" is not too wide`)
	}
	if home, err := os.UserHomeDir(); err == nil && !tooWide(home) {
		t.Errorf("the home directory %q is not too wide", home)
	}
	if tooWide(proj) {
		t.Errorf("%q is too wide", proj)
	}
}
