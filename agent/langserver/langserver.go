package langserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reika-lsp/reika/agent/tools"
)

// Defaults of Options.
const (
	// DefaultIdle is how long a server may go unasked before it is shut
	// down; the next question starts it again.
	DefaultIdle = 3 * time.Minute
	// DefaultTimeout bounds every request, the handshake included.
	DefaultTimeout = 20 * time.Second
	// DefaultSettle bounds the wait for a server's diagnostics of a
	// document version.
	DefaultSettle = 3 * time.Second
)

// Options configure Servers.
type Options struct {
	// Folders are the workspace folders, the first the root that answers'
	// paths are relative to. A server runs per folder and language.
	Folders []string
	// Servers are the user's language servers; nil means Defaults(nil).
	// They come from the user-level config and the defaults only: a
	// server is never a command the model chooses.
	Servers []Server
	// Text returns the text the agent sees of a file (absolute path): the
	// editor's buffer when it has the file open, else the disk. Nil: the
	// disk.
	Text func(abs string) (string, error)
	// Fallback answers for the files no server serves (the repo map's
	// Navigator); nil: those questions fail.
	Fallback tools.Navigator
	// Environ is the environment the servers get, less what serverEnv
	// drops; nil means os.Environ(). APIKeyEnv names the variable with the
	// engine's API key, which they never get.
	Environ   []string
	APIKeyEnv string
	// Idle, Timeout and Settle replace DefaultIdle, DefaultTimeout and
	// DefaultSettle when set.
	Idle, Timeout, Settle time.Duration
}

// Servers are the workspace's language servers, started on demand, one
// per folder and server. It implements tools.Navigator. Its methods are
// safe for concurrent use; questions to one server go one at a time.
type Servers struct {
	opts Options
	env  []string

	mu      sync.Mutex
	running map[runKey]*entry
	closed  bool
}

type runKey struct{ folder, server string }

// entry is one server of one folder over the session: the process while
// it runs, its failures and the idle timer.
type entry struct {
	mu       sync.Mutex // held while the server starts and answers
	p        *proc
	failures int
	gaveUp   error
	last     time.Time
	idle     *time.Timer
}

// New returns the workspace's servers; none runs until asked.
func New(opts Options) *Servers {
	if opts.Servers == nil {
		opts.Servers = Defaults(nil)
	}
	if opts.Text == nil {
		opts.Text = func(abs string) (string, error) {
			b, err := os.ReadFile(abs)
			return string(b), err
		}
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	if opts.Idle <= 0 {
		opts.Idle = DefaultIdle
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Settle <= 0 {
		opts.Settle = DefaultSettle
	}
	return &Servers{opts: opts, env: serverEnv(opts.Environ, opts.APIKeyEnv), running: map[runKey]*entry{}}
}

// errNoServer means no configured server serves a file's language.
var errNoServer = errors.New("no language server for this file")

// ErrClosed is returned after Close.
var ErrClosed = errors.New("the language servers were shut down with the session")

// Serves reports whether a configured server serves the file abs: one
// serves its language, and the file lies in a project of that language
// (a Go file below a go.mod or go.work, a Rust file below a Cargo.toml).
//
// A server given up (it failed twice) serves nothing more: the question
// that gave it up gets the error that says so, the later ones the
// fallback's answers.
func (s *Servers) Serves(abs string) bool {
	lang := LanguageOf(abs)
	srv, ok := serverFor(s.opts.Servers, lang)
	return ok && inProject(s.folderOf(abs), abs, lang) && !s.givenUp(s.folderOf(abs), srv)
}

// givenUp reports whether srv failed twice in folder.
func (s *Servers) givenUp(folder string, srv Server) bool {
	s.mu.Lock()
	e := s.running[runKey{folder, srv.Name}]
	s.mu.Unlock()
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gaveUp != nil
}

// with runs fn on the server for the file abs, starting it if need be. A
// server that exits or hangs is started again once and fn run again;
// after a second failure in the session it is given up, with an error
// that says so.
func (s *Servers) with(ctx context.Context, abs string, fn func(p *proc) error) (Server, error) {
	srv, ok := serverFor(s.opts.Servers, LanguageOf(abs))
	if !ok {
		return srv, errNoServer
	}
	return s.withServer(ctx, srv, s.folderOf(abs), fn)
}

// withServer is with for srv in folder.
func (s *Servers) withServer(ctx context.Context, srv Server, folder string, fn func(p *proc) error) (Server, error) {
	e, err := s.entryFor(folder, srv)
	if err != nil {
		return srv, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	defer s.touch(e)
	for {
		if e.gaveUp != nil {
			return srv, e.gaveUp
		}
		var err error
		switch {
		case e.p != nil && !e.p.alive():
			// It exited since the last question: a crash (an idle
			// shutdown leaves no process).
			err = fmt.Errorf("%w%s", errDied, e.p.stderr.said())
		case e.p == nil && s.isClosed():
			return srv, ErrClosed
		case e.p == nil:
			if e.p, err = start(ctx, srv, folder, s.env, s.opts.Timeout); err != nil && ctx.Err() != nil {
				return srv, ctx.Err()
			}
		}
		if err == nil {
			if err = e.p.refresh(ctx, s.opts.Text); err == nil {
				err = fn(e.p)
			}
			if err == nil || ctx.Err() != nil || !errors.Is(err, errDied) && !errors.Is(err, errHung) {
				return srv, err
			}
		}
		s.failed(e, srv, folder, err)
	}
}

// failed counts a failure of e's server (err), which is killed; the
// second in the session gives it up.
func (s *Servers) failed(e *entry, srv Server, folder string, err error) {
	e.failures++
	if e.p != nil {
		e.p.kill()
		e.p = nil
	}
	if e.failures >= 2 {
		e.gaveUp = fmt.Errorf("%s failed twice, so Reika stopped using it for this session (it is run as %q in %s): %w",
			srv.Name, strings.Join(srv.Command, " "), folder, err)
	}
}

// entryFor returns the entry of srv for folder.
func (s *Servers) entryFor(folder string, srv Server) (*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	k := runKey{folder, srv.Name}
	e := s.running[k]
	if e == nil {
		e = &entry{}
		s.running[k] = e
	}
	return e, nil
}

// touch marks e used now and (re)arms its idle timer; called with e.mu.
func (s *Servers) touch(e *entry) {
	e.last = time.Now()
	if e.idle != nil {
		e.idle.Reset(s.opts.Idle)
		return
	}
	e.idle = time.AfterFunc(s.opts.Idle, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if wait := s.opts.Idle - time.Since(e.last); wait > 0 {
			e.idle.Reset(wait)
			return
		}
		if e.p != nil {
			e.p.shutdown()
			e.p = nil
		}
	})
}

func (s *Servers) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Running reports how many servers run now.
func (s *Servers) Running() int {
	s.mu.Lock()
	entries := make([]*entry, 0, len(s.running))
	for _, e := range s.running {
		entries = append(entries, e)
	}
	s.mu.Unlock()
	n := 0
	for _, e := range entries {
		e.mu.Lock()
		if e.p != nil && e.p.alive() {
			n++
		}
		e.mu.Unlock()
	}
	return n
}

// Close shuts every server down (shutdown and exit, then a kill) and
// waits for them; later questions fail with ErrClosed, or go to the
// fallback.
func (s *Servers) Close() error {
	s.mu.Lock()
	s.closed = true
	entries := s.running
	s.running = map[runKey]*entry{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.mu.Lock()
			defer e.mu.Unlock()
			if e.idle != nil {
				e.idle.Stop()
			}
			if e.p != nil {
				e.p.shutdown()
				e.p = nil
			}
		}()
	}
	wg.Wait()
	return nil
}

// folderOf returns the workspace folder holding abs (the deepest), else
// the root.
func (s *Servers) folderOf(abs string) string {
	best := ""
	for _, f := range s.opts.Folders {
		if inside(f, abs) && len(f) > len(best) {
			best = f
		}
	}
	if best == "" && len(s.opts.Folders) > 0 {
		best = s.opts.Folders[0]
	}
	return best
}

// inside reports whether path is dir or below it.
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
