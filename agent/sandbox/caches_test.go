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
// defaults, that only cargo's lock files are writable (not its registry,
// which the user's builds compile from), and that what is not there or
// not on PATH is left out.
func TestDiscoverCachesCargo(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".cargo/registry", ".cargo/bin", ".rustup"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".cargo/.package-cache"), nil, 0o644); err != nil {
		t.Fatal(err)
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
		{Path: filepath.Join(home, ".cargo/.package-cache"), Write: true, Tool: "cargo's default CARGO_HOME"},
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
		version := c.Version
		c.Version = ""
		if c == want {
			if !goAtLeast(version, 1) {
				t.Errorf("the GOCACHE entry's Version = %q, want go env GOVERSION", version)
			}
			return
		}
	}
	t.Errorf("DiscoverCaches(%s) = %v, want %v among them", home, got, want)
}

// TestPrivate checks that the user's build caches are replaced by
// Reika's own and pointed at, and that the other caches are kept.
func TestPrivate(t *testing.T) {
	dir := t.TempDir()
	mod := Cache{Path: "/home/u/go/pkg/mod", Tool: "go env GOMODCACHE"}
	reg := Cache{Path: "/home/u/.cargo/.package-cache", Write: true, Tool: "CARGO_HOME"}
	in := []Cache{
		{Path: "/home/u/.cache/go-build", Write: true, Tool: "go env GOCACHE"},
		mod,
		{Path: "/home/u/.npm", Write: true, Tool: "npm config get cache"},
		reg,
	}
	got, env := Private(dir, in, "")
	want := []Cache{
		{Path: filepath.Join(dir, "go-build"), Write: true, Tool: "Reika's own GOCACHE, for go env GOCACHE"},
		mod,
		{Path: filepath.Join(dir, "npm"), Write: true, Tool: "Reika's own npm_config_cache, for npm config get cache"},
		reg,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Private caches (-want +got):\n%s", diff)
	}
	wantEnv := []string{"GOCACHE=" + filepath.Join(dir, "go-build"), "npm_config_cache=" + filepath.Join(dir, "npm")}
	if diff := cmp.Diff(wantEnv, env); diff != "" {
		t.Errorf("Private variables (-want +got):\n%s", diff)
	}
	for _, c := range want[:1] {
		if fi, err := os.Stat(c.Path); err != nil || !fi.IsDir() {
			t.Errorf("%s was not made: %v", c.Path, err)
		}
	}
	if got, none := Private("", in, ""); len(none) != 0 || len(got) != 2 {
		t.Errorf("Private without a place = %v, %v; want the build caches left out and nothing set", got, none)
	}
	ov := Override([]string{"PATH=/bin", "GOCACHE=/home/u/.cache/go-build", "NPM_CONFIG_CACHE=/x"}, env)
	if diff := cmp.Diff(append([]string{"PATH=/bin"}, env...), ov); diff != "" {
		t.Errorf("Override (-want +got):\n%s", diff)
	}
}

// TestPrivateLayer checks that Private names the cache program in
// GOCACHEPROG, quoted as the go command splits it, and grants the user's
// GOCACHE and the program read-only, for Go 1.24 and later only.
func TestPrivateLayer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir")
	prog := filepath.Join(t.TempDir(), "reika-lsp")
	if err := os.WriteFile(prog, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	user := Cache{Path: "/home/u/.cache/go-build", Write: true, Tool: "go env GOCACHE"}
	own := filepath.Join(dir, "go-build")
	tests := []struct {
		version, prog string
		layered       bool
	}{
		{"go1.26.1", prog, true},
		{"go1.24rc1", prog, true},
		{"devel go1.27-4d3f2a1 Mon Jan 5", prog, true},
		{"go1.23.4", prog, false},
		{"", prog, false},
		{"go1.26.1", "", false},
		{"go1.26.1", prog + "-gone", false},
	}
	for _, tc := range tests {
		user.Version = tc.version
		caches, env := Private(dir, []Cache{user}, tc.prog)
		want := []Cache{{Path: own, Write: true, Tool: "Reika's own GOCACHE, for go env GOCACHE"}}
		wantEnv := []string{"GOCACHE=" + own}
		if tc.layered {
			want = append(want, Cache{Path: user.Path, Tool: "the user's GOCACHE, read below Reika's own (GOCACHEPROG)"},
				Cache{Path: prog, Tool: "Reika's Go cache program"})
			wantEnv = append(wantEnv, "GOCACHEPROG="+prog+" gocache --user /home/u/.cache/go-build --own '"+own+"'")
		}
		if diff := cmp.Diff(want, caches); diff != "" {
			t.Errorf("Private(%q, %q) caches (-want +got):\n%s", tc.version, tc.prog, diff)
		}
		if diff := cmp.Diff(wantEnv, env); diff != "" {
			t.Errorf("Private(%q, %q) variables (-want +got):\n%s", tc.version, tc.prog, diff)
		}
	}
}

// TestDiscoverCachesNpmSilent: an npm that does not say where its cache
// is (it failed, or did not answer in time on a busy machine) still has
// its cache found where npm documents it, so that Private replaces it
// and a contained npm writes Reika's own instead of failing on a hidden
// home.
func TestDiscoverCachesNpmSilent(t *testing.T) {
	home := t.TempDir()
	silent := filepath.Join(t.TempDir(), "npm")
	if err := os.WriteFile(silent, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	lookPath := func(name string) (string, error) {
		if name == "npm" {
			return silent, nil
		}
		return "", exec.ErrNotFound
	}
	if err := os.MkdirAll(filepath.Join(home, ".npm"), 0o755); err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(t.TempDir(), "npm-cache")
	if err := os.MkdirAll(set, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, env, want string
	}{
		{"default", "", filepath.Join(home, ".npm")},
		{"npm_config_cache", set, set},
	} {
		env := func(k string) string {
			if k == "npm_config_cache" {
				return tc.env
			}
			return ""
		}
		got := DiscoverCaches(context.Background(), home, env, lookPath)
		want := []Cache{{Path: tc.want, Write: true, Tool: "npm config get cache"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: DiscoverCaches with a silent npm (-want +got):\n%s", tc.name, diff)
		}
	}
}
