package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// askTimeout bounds each tool DiscoverCaches asks. npm is a Node program:
// on two busy cores it took over two seconds to say where its cache is.
const askTimeout = 10 * time.Second

// DiscoverCaches asks the toolchains on PATH where they keep what a build
// needs, and returns the places a command must be granted: the Go build cache
// (writable), module cache, GOROOT and go env file (read-only), npm's
// cache (writable), and CARGO_HOME (read-only, its lock files writable)
// and RUSTUP_HOME (read-only). Read-only places
// outside home are readable anyway and left out; writable ones are kept
// when they exist. The build caches are the user's: Private puts places of
// Reika's own in their stead before a command gets them. env looks up the process's variables
// (os.Getenv) and lookPath finds a program (exec.LookPath); each tool runs
// with the process's environment and at most ten seconds. npm's cache,
// when npm does not answer, is where npm documents it: npm_config_cache,
// else ~/.npm.
func DiscoverCaches(ctx context.Context, home string, env func(string) string, lookPath func(string) (string, error)) []Cache {
	if home == "" {
		return nil
	}
	home = filepath.Clean(home)
	caches := askToolchains(ctx, home, env, lookPath)
	caches = append(caches, rustHomes(home, env, lookPath)...)
	slices.SortFunc(caches, func(a, b Cache) int { return strings.Compare(a.Path, b.Path) })
	return granted(caches, home)
}

// askToolchains asks go and npm, side by side, where their caches are.
func askToolchains(ctx context.Context, home string, env func(string) string, lookPath func(string) (string, error)) []Cache {
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
			lines := ask(ctx, goPath, append(args, "GOVERSION")...)
			var version string
			if len(lines) > len(keys) {
				version = lines[len(keys)]
			}
			for i, k := range keys {
				if i < len(lines) {
					c := Cache{Path: lines[i], Write: k.write, Tool: "go env " + k.name}
					if k.name == "GOCACHE" {
						c.Version = version
					}
					add(c)
				}
			}
		})
	}
	if npm, err := lookPath("npm"); err == nil {
		wg.Go(func() {
			dir := env("npm_config_cache")
			if lines := ask(ctx, npm, "config", "get", "cache"); len(lines) > 0 {
				dir = lines[0]
			} else if dir == "" {
				dir = filepath.Join(home, ".npm")
			}
			add(Cache{Path: dir, Write: true, Tool: "npm config get cache"})
		})
	}
	wg.Wait()
	return caches
}

// rustHomes are CARGO_HOME and RUSTUP_HOME, read-only, with cargo's lock
// files writable, when cargo and rustup are on PATH. They are
// found from the environment and their documented defaults, not asked.
func rustHomes(home string, env func(string) string, lookPath func(string) (string, error)) []Cache {
	var caches []Cache
	if _, err := lookPath("cargo"); err == nil {
		// CARGO_HOME, default ~/.cargo, as cargo documents it, is
		// read-only but for its lock files. Like Go's module cache, the
		// registry and git checkouts are what the user's own cargo builds
		// compile without checking them again (an extracted crate's
		// sources, a downloaded .crate, the index that says where to
		// fetch): a command that wrote them could poison those builds. A
		// writable bin/ or config.toml would change what cargo runs.
		dir, tool := env("CARGO_HOME"), "CARGO_HOME"
		if dir == "" {
			dir, tool = filepath.Join(home, ".cargo"), "cargo's default CARGO_HOME"
		}
		caches = append(caches, Cache{Path: dir, Tool: tool})
		for _, sub := range []string{".package-cache", ".package-cache-mutate", ".global-cache"} {
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
// paths, cleaned, that exist,
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

// privateCaches are the build caches Private replaces: what the
// toolchain's own later runs trust without checking it. Go checks only a
// build cache entry's size, so a command that writes the user's GOCACHE
// could re-point the entry of fmt to its own object file; npm trusts its
// cache's index for what a package's tarball is.
var privateCaches = []struct {
	tool, env, dir string
}{
	{"go env GOCACHE", "GOCACHE", "go-build"},
	{"npm config get cache", "npm_config_cache", "npm"},
}

// Private returns caches with each build cache of the user's (Go's
// GOCACHE, npm's cache) replaced by a directory of dir's, made when
// missing, and the variables that point the toolchain there
// ("GOCACHE=dir/go-build"). The user's own build caches are never
// writable for a command: hidden when they are in the home, read-only
// elsewhere. A command's builds fill the private ones, which nothing
// outside the sandbox reads. An empty dir leaves the writable build caches
// out as well and sets nothing, so a build in the sandbox fails rather
// than write the user's.
//
// prog, when not empty, is this binary, which answers GoCacheCommand: for
// a Go toolchain of 1.24 or later (Cache.Version), Private then sets
// GOCACHEPROG to "prog gocache --user <user's GOCACHE> --own dir/go-build"
// and grants the user's GOCACHE and prog read-only, so that a command's
// go reads what the user's builds left (a warm standard library) and
// writes only its own. GOCACHE stays set for the toolchains that ignore
// GOCACHEPROG.
func Private(dir string, caches []Cache, prog string) ([]Cache, []string) {
	var out []Cache
	var env []string
	for _, c := range caches {
		i := slices.IndexFunc(privateCaches, func(p struct{ tool, env, dir string }) bool { return p.tool == c.Tool })
		if i < 0 {
			out = append(out, c)
			continue
		}
		if dir == "" {
			continue
		}
		own := filepath.Join(dir, privateCaches[i].dir)
		if err := os.MkdirAll(own, 0o700); err != nil {
			continue
		}
		out = append(out, Cache{Path: own, Write: true, Tool: "Reika's own " + privateCaches[i].env + ", for " + c.Tool})
		env = append(env, privateCaches[i].env+"="+own)
		if c.Tool != "go env GOCACHE" {
			continue
		}
		if line, ok := goCacheProg(prog, c, own); ok {
			out = append(out, Cache{Path: c.Path, Tool: "the user's GOCACHE, read below Reika's own (GOCACHEPROG)"},
				Cache{Path: prog, Tool: "Reika's Go cache program"})
			env = append(env, "GOCACHEPROG="+line)
		}
	}
	return out, env
}

// goCacheProg returns GOCACHEPROG's value that serves user, the user's
// GOCACHE, under own through prog, when prog is there and the toolchain
// reads GOCACHEPROG (Go 1.24 and later); quoted as the go command splits
// it, or not at all.
func goCacheProg(prog string, user Cache, own string) (string, bool) {
	if prog == "" || !goAtLeast(user.Version, 24) {
		return "", false
	}
	if fi, err := os.Stat(prog); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	var fields []string
	for _, f := range []string{prog, GoCacheCommand, "--user", user.Path, "--own", own} {
		switch {
		case !strings.ContainsAny(f, " \t\n\r'\""):
		case !strings.Contains(f, "'"):
			f = "'" + f + "'"
		case !strings.Contains(f, `"`):
			f = `"` + f + `"`
		default:
			return "", false
		}
		fields = append(fields, f)
	}
	return strings.Join(fields, " "), true
}

// goAtLeast reports whether version (go env GOVERSION: "go1.26.1",
// "go1.24rc1", "devel go1.27-abcdef…") is Go 1.minor or later.
func goAtLeast(version string, minor int) bool {
	_, rest, ok := strings.Cut(version, "go1.")
	if !ok {
		return false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	n, err := strconv.Atoi(rest[:end])
	return err == nil && n >= minor
}
