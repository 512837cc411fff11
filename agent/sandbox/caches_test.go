package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDiscoverCachesCargo checks cargo's and rustup's documented
// defaults, and that what is not there or not on PATH is left out.
func TestDiscoverCachesCargo(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".cargo/registry", ".cargo/bin", ".rustup"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	onPath := map[string]bool{"cargo": true, "rustup": true}
	lookPath := func(name string) (string, error) {
		if onPath[name] {
			return "/usr/bin/" + name, nil
		}
		return "", exec.ErrNotFound
	}
	env := func(string) string { return "" }
	got := DiscoverCaches(context.Background(), home, env, lookPath)
	want := []Cache{
		{Path: filepath.Join(home, ".cargo"), Tool: "cargo's default CARGO_HOME"},
		{Path: filepath.Join(home, ".cargo/registry"), Write: true, Tool: "cargo's default CARGO_HOME"},
		{Path: filepath.Join(home, ".rustup"), Tool: "rustup's default RUSTUP_HOME"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DiscoverCaches (-want +got):\n%s", diff)
	}
	onPath["cargo"], onPath["rustup"] = false, false
	if got := DiscoverCaches(context.Background(), home, env, lookPath); len(got) != 0 {
		t.Errorf("DiscoverCaches with nothing on PATH = %v, want none", got)
	}
}

// TestDiscoverCachesGo asks the real go command.
func TestDiscoverCachesGo(t *testing.T) {
	goPath, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goPath, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	gocache := filepath.Clean(string(out[:len(out)-1]))
	home := filepath.Dir(gocache) // a home that holds GOCACHE
	lookPath := func(name string) (string, error) {
		if name == "go" {
			return goPath, nil
		}
		return "", errors.New("not here")
	}
	got := DiscoverCaches(context.Background(), home, os.Getenv, lookPath)
	want := Cache{Path: gocache, Write: true, Tool: "go env GOCACHE"}
	for _, c := range got {
		if c == want {
			return
		}
	}
	t.Errorf("DiscoverCaches(%s) = %v, want %v among them", home, got, want)
}
