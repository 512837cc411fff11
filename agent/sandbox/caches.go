package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// askTimeout bounds each tool DiscoverCaches asks.
const askTimeout = 2 * time.Second

// DiscoverCaches asks the toolchains on PATH where they keep what a build
// needs, and returns the places a command must be granted: the Go build cache
// (writable), module cache, GOROOT and go env file (read-only), npm's
// cache (writable), and cargo's registry and git checkouts (writable) with
// the rest of CARGO_HOME and RUSTUP_HOME read-only. Read-only places
// outside home are readable anyway and left out; writable ones are kept,
// and the build caches made when they are missing. env looks up the process's variables
// (os.Getenv) and lookPath finds a program (exec.LookPath); each tool runs
// with the process's environment and at most two seconds.
func DiscoverCaches(ctx context.Context, home string, env func(string) string, lookPath func(string) (string, error)) []Cache {
	if home == "" {
		return nil
	}
	home = filepath.Clean(home)
	caches := askToolchains(ctx, lookPath)
	caches = append(caches, rustHomes(home, env, lookPath)...)
	slices.SortFunc(caches, func(a, b Cache) int { return strings.Compare(a.Path, b.Path) })
	return granted(caches, home)
}

// askToolchains asks go and npm, side by side, where their caches are.
func askToolchains(ctx context.Context, lookPath func(string) (string, error)) []Cache {
	var (
		mu     sync.Mutex
		caches []Cache
		wg     sync.WaitGroup
	)
	add := func(c ...Cache) {
		mu.Lock()
		defer mu.Unlock()
		caches = append(caches, c...)
	}
	if goPath, err := lookPath("go"); err == nil {
		wg.Go(func() {
			// GOMODCACHE is read-only: go test and go build only read
			// modules already there (TestGoTestInside checks it); fetching a
			// new one needs the network, which the sandbox denies anyway.
			keys := []struct {
				name  string
				write bool
			}{{"GOCACHE", true}, {"GOMODCACHE", false}, {"GOROOT", false}, {"GOENV", false}}
			args := []string{"env"}
			for _, k := range keys {
				args = append(args, k.name)
			}
			lines := ask(ctx, goPath, args...)
			for i, k := range keys {
				if i < len(lines) {
					add(Cache{Path: lines[i], Write: k.write, Tool: "go env " + k.name})
				}
			}
		})
	}
	if npm, err := lookPath("npm"); err == nil {
		wg.Go(func() {
			if lines := ask(ctx, npm, "config", "get", "cache"); len(lines) > 0 {
				add(Cache{Path: lines[0], Write: true, Tool: "npm config get cache"})
			}
		})
	}
	wg.Wait()
	return caches
}

// rustHomes are CARGO_HOME and RUSTUP_HOME, read-only, with cargo's
// download places, writable, when cargo and rustup are on PATH. They are
// found from the environment and their documented defaults, not asked.
func rustHomes(home string, env func(string) string, lookPath func(string) (string, error)) []Cache {
	var caches []Cache
	if _, err := lookPath("cargo"); err == nil {
		// CARGO_HOME, default ~/.cargo, as cargo documents it. Only the
		// registry, git checkouts and package-cache locks are writable: a
		// writable bin/ or config.toml would let a command change what the
		// user's own cargo runs.
		dir, tool := env("CARGO_HOME"), "CARGO_HOME"
		if dir == "" {
			dir, tool = filepath.Join(home, ".cargo"), "cargo's default CARGO_HOME"
		}
		caches = append(caches, Cache{Path: dir, Tool: tool})
		for _, sub := range []string{"registry", "git", ".package-cache", ".package-cache-mutate", ".global-cache"} {
			caches = append(caches, Cache{Path: filepath.Join(dir, sub), Write: true, Tool: tool})
		}
	}
	if _, err := lookPath("rustup"); err == nil {
		dir, tool := env("RUSTUP_HOME"), "RUSTUP_HOME"
		if dir == "" {
			dir, tool = filepath.Join(home, ".rustup"), "rustup's default RUSTUP_HOME"
		}
		caches = append(caches, Cache{Path: dir, Tool: tool})
	}
	return caches
}

// granted keeps, in order, the caches a command must be granted: absolute
// paths, cleaned, that exist (the build caches are made when missing),
// neither home nor above it, and, when read-only, inside home (what is
// outside it is readable anyway).
func granted(caches []Cache, home string) []Cache {
	var inside []Cache
	for _, c := range caches {
		if !filepath.IsAbs(c.Path) {
			continue
		}
		c.Path = filepath.Clean(c.Path)
		if c.Path == home || within(home, c.Path) {
			continue // it would open the home, or everything
		}
		// A cache the toolchain would write is needed wherever it is (a
		// GOCACHE outside the home is readable, not writable); one inside
		// the home is needed to be read at all.
		if !c.Write && !within(c.Path, home) {
			continue
		}
		if c.Write && (c.Tool == "go env GOCACHE" || c.Tool == "npm config get cache") {
			// The toolchain makes it at its first build; inside the sandbox
			// it could not.
			os.MkdirAll(c.Path, 0o755)
		}
		if _, err := os.Lstat(c.Path); err == nil {
			inside = append(inside, c)
		}
	}
	return inside
}

// ask runs a tool and returns the lines it prints, or nil.
func ask(ctx context.Context, path string, args ...string) []string {
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).Output()
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n")
}
