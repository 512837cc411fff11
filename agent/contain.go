package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reika-lsp/reika/agent/sandbox"
	"github.com/reika-lsp/reika/agent/tools"
)

// Sandboxing says how the session's commands run: contained, or why not.
type Sandboxing struct {
	// On is set when commands run in the sandbox.
	On bool
	// Line says what the sandbox does, or why there is none and what
	// that means ("commands ask"), for check and reika.status.
	Line string
}

// HideEnvironment keeps a server's environment (the API key among it)
// from the commands of the same user, contained or not: see
// sandbox.HideEnvironment.
func HideEnvironment() error { return sandbox.HideEnvironment() }

// container contains the session's commands: a Landlock policy over the
// workspace with the protected top-level entries read-only, the home
// hidden but for the toolchains' caches, a private temporary directory,
// and an environment without secrets. The caches are asked of the
// toolchains once, at the first command (a node start for npm's costs a
// fifth of a second, which no session start should wait for).
type container struct {
	base   sandbox.Policy
	apiKey string   // the variable that names the API key, never passed
	added  []string // the variables the user passes besides the allow list (sandbox_env)
	// private holds the build caches the commands write (Go's, npm's),
	// Reika's own for this workspace: never the user's, which the
	// user's own builds trust. "" when there is no place for them.
	private string

	once   sync.Once
	policy sandbox.Policy
	env    []string
	prog   string // the cache program GOCACHEPROG names, "" for none
}

// newContainer builds the session's container, or returns nil and why
// there is none.
func newContainer(folders []string, temp, apiKeyEnv string, added []string, getenv func(string) string) (*container, Sandboxing) {
	st := sandbox.Probe()
	if !st.Available {
		return nil, Sandboxing{Line: "no sandbox (" + st.Why + "): every command off the allow list asks, and an allowed one asks too once the run has changed a file"}
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return nil, Sandboxing{Line: "no sandbox: the home directory is not known, so it cannot be hidden; commands ask"}
	}
	c := &container{apiKey: apiKeyEnv, added: added, private: privateCacheDir(getenv, home, folders), base: sandbox.Policy{
		Workspace: folders,
		Protected: tools.ProtectedTopLevel,
		Temp:      temp,
		Home:      home,
		Exec:      homePath(home, getenv("PATH")),
	}}
	return c, Sandboxing{On: true, Line: st.Line(c.base)}
}

// privateCacheDir is where the commands of the workspace folders keep
// their build caches: $XDG_CACHE_HOME/reika/sandbox/<key>, else under
// ~/.cache, the key drawn from the folders' paths so that one workspace's
// commands never fill another's caches. "" when there are no folders.
func privateCacheDir(getenv func(string) string, home string, folders []string) string {
	if len(folders) == 0 {
		return ""
	}
	base := getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		base = filepath.Join(home, ".cache")
	}
	sum := sha256.Sum256([]byte(strings.Join(folders, "\x00")))
	return filepath.Join(base, "reika", "sandbox", hex.EncodeToString(sum[:8]))
}

// privateAge is how long the build caches of a workspace no session used
// are kept.
const privateAge = 30 * 24 * time.Hour

// prunePrivate marks dir, the private caches of this session's workspace,
// used at now, and removes those of the other workspaces beside it that
// no session used for privateAge: each holds a build of the standard
// library and what its projects built.
func prunePrivate(dir string, now time.Time) {
	if dir == "" || os.Chtimes(dir, now, now) != nil {
		return
	}
	parent := filepath.Dir(dir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		other := filepath.Join(parent, e.Name())
		if fi, err := e.Info(); err == nil && e.IsDir() && other != dir && now.Sub(fi.ModTime()) > privateAge {
			os.RemoveAll(other)
		}
	}
}

// homePath lists the entries of PATH inside home (~/go/bin, ~/.local/bin):
// the programs there stay runnable.
func homePath(home, path string) []string {
	var dirs []string
	for _, d := range filepath.SplitList(path) {
		if d = filepath.Clean(d); filepath.IsAbs(d) && d != home && strings.HasPrefix(d, home+string(filepath.Separator)) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

func (c *container) ready() {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		c.policy = c.base
		caches := sandbox.DiscoverCaches(ctx, c.base.Home, os.Getenv, exec.LookPath)
		var vars []string
		c.prog = goCacheProgram()
		c.policy.Caches, vars = sandbox.Private(c.private, caches, c.prog)
		prunePrivate(c.private, time.Now())
		env := sandbox.Env(os.Environ(), c.apiKey, c.added)
		c.env = sandbox.Override(env, append(vars, "TMPDIR="+c.base.Temp))
	})
}

// goCacheProgram is the program a contained go command reads the user's
// build cache through (sandbox.Private): this binary when it is reika-lsp,
// which answers sandbox.GoCacheCommand; "" for another one (a test
// binary), which would not.
func goCacheProgram() string {
	self, err := os.Executable()
	if err != nil || filepath.Base(self) != "reika-lsp" {
		return ""
	}
	return self
}

// Start starts cmd contained; network lets it use TCP.
func (c *container) Start(cmd *exec.Cmd, network bool) error {
	c.ready()
	p := c.policy
	p.Network = network
	err := p.Start(cmd)
	if errors.Is(err, sandbox.ErrUnavailable) {
		return errors.New("the sandbox is not available any more; the command was not run")
	}
	return err
}

// Env is the environment of a contained command. Once the binary that
// GOCACHEPROG names is gone (reika-lsp uninstalled under a running
// server), GOCACHEPROG is left out, or every go command would fail to
// start it; go then uses the workspace's own cache alone.
func (c *container) Env() []string {
	c.ready()
	env := append([]string(nil), c.env...)
	if c.prog == "" {
		return env
	}
	if _, err := os.Stat(c.prog); err != nil {
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GOCACHEPROG=") })
	}
	return env
}

// Explain says what the sandbox allows, after a command it may have
// stopped.
func (c *container) Explain(output string) string {
	c.ready()
	return sandbox.Explain(output, true, c.policy)
}
