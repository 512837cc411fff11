package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/tools"
)

// agentConn is the agent session of this connection, with what the
// connection keeps beside it.
type agentConn struct {
	agent *agent.Session
	// from are the editor's settings the session started from: when a
	// push changes a value in force, the session is ended (at once, or
	// after its run) and the next need starts one from the new settings.
	from editorSettings
	// recapURI is the document showRecap opened, "" before.
	recapURI string
	// stopWarm cancels the session's warm-up, if any: a session that ends
	// leaves nothing at the engine.
	stopWarm context.CancelFunc
}

// session returns the agent session, connecting to the engine the first
// time (and after the settings changed). It tells the user, once, what
// they must fix: a config file that does not parse, an engine that does
// not answer, no known window.
//
// A settings push that arrives while the session starts (Helix pushes its
// config at startup) is not in the settings Start read, and there was no
// session yet for the push to end: the session is taken only when the
// editor's settings are still those it started from, or differ in no
// value in force; else it is closed unused and started again from them.
func (s *Server) session(ctx context.Context) (*agentConn, error) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess != nil {
		return sess, nil
	}
	return s.startSession(ctx, "")
}

// startSession starts the session, continuing the transcript resume when
// it is set, and makes it the connection's. The caller holds sessMu and
// has no session. A session ended while it started (reika.newSession) is
// closed unused, and a new one, in a new transcript, starts instead.
func (s *Server) startSession(ctx context.Context, resume string) (*agentConn, error) {
	s.mu.Lock()
	editor := s.editor
	gen := s.sessGen
	s.mu.Unlock()
	folders := s.workspace()
	if len(folders) == 0 {
		return nil, errNoWorkspace
	}
	// Without message actions nobody can be asked: a command off the
	// allow list is refused at once, and the model tells the user why.
	var ask tools.Ask
	if s.caps().messageActions {
		ask = s.askUser
	}
	start := func(editor editorSettings, resume string) (*agent.Session, error) {
		return agent.Start(ctx, agent.Setup{
			Settings:          editor.startup,
			Pushed:            editor.pushed,
			Getenv:            s.opts.Getenv,
			HTTPClient:        s.opts.HTTPClient,
			Folders:           folders,
			Buffers:           s.docs,
			EditorDiagnostics: &s.editorDiags,
			Proposer:          s.propose,
			Ask:               ask,
			StateDir:          s.opts.StateDir,
			Resume:            resume,
			RepoMap:           editorMap{s},
		})
	}
	var (
		warm    bool
		warmCtx context.Context
	)
	var sess *agentConn
	a, err := start(editor, resume)
	for err == nil {
		s.mu.Lock()
		now := s.editor
		if s.sessGen != gen {
			gen = s.sessGen
			s.mu.Unlock()
			a.Close()
			s.logMessage(protocol.MessageTypeLog, "Reika: the session was ended while it started; a new one starts")
			a, err = start(now, "")
			editor = now
			continue
		}
		if now.same(editor) {
			sess = &agentConn{agent: a, from: editor, stopWarm: func() {}}
			if warm = a.Info().Settings.Warmup.Value; warm {
				warmCtx, sess.stopWarm = context.WithCancel(s.ctx)
			}
			s.sess = sess
			s.mu.Unlock()
			break
		}
		s.mu.Unlock()
		if changed, _ := s.settingsChanged(editor, now); len(changed) > 0 {
			a.Close()
			s.logMessage(protocol.MessageTypeLog, "Reika: the settings changed while the session started (%s); it starts again with them", strings.Join(changed, ", "))
			a, err = start(now, resume)
		}
		editor = now
	}
	if err != nil {
		return nil, err
	}
	for _, n := range a.Info().Notices {
		if n.Warning {
			s.showMessage(protocol.MessageTypeWarning, "Reika: %s", n.Text)
		} else {
			s.logMessage(protocol.MessageTypeInfo, "Reika: %s", n.Text)
		}
	}
	s.sendStatus(a.Chip(), false)
	if warm {
		s.goOwned(func(context.Context) {
			ctx := warmCtx
			defer sess.stopWarm()
			// The prefix carries the repo map of the open documents: give
			// the editor a moment to open the first one. A run that starts
			// meanwhile waits for the warm-up or cancels it (agent.Warmup).
			select {
			case <-s.firstOpen:
			case <-time.After(warmupWait):
			case <-ctx.Done():
				return
			}
			if err := a.Warmup(ctx); err != nil && ctx.Err() == nil {
				s.logMessage(protocol.MessageTypeLog, "Reika: warm-up: %v", err)
			}
		})
	}
	return sess, nil
}

// errNoWorkspace is why a session cannot start without a workspace.
var errNoWorkspace = errors.New("no workspace: the editor gave no workspace folder (or only / or your home directory), and no open file is inside a project (a directory with .git, go.mod, package.json, Cargo.toml, pyproject.toml…); open a project folder in the editor, or a file inside one")

// warmAtOpen starts the session when the editor opens its first
// document, so that the warm-up prefills the prefix before the first ask
// rather than racing it. Nothing happens when the settings turn the
// warm-up off; a failure is the first ask's to report.
func (s *Server) warmAtOpen(ctx context.Context) {
	s.mu.Lock()
	editor := s.editor
	s.mu.Unlock()
	settings, _, err := editor.setup(s.opts.Getenv).Resolve()
	if err != nil || !settings.Warmup.Value {
		return
	}
	if _, err := s.session(ctx); err != nil && ctx.Err() == nil {
		s.logMessage(protocol.MessageTypeLog, "Reika: no warm-up: %v", err)
	}
}

// root is the first workspace folder, else the project of an open
// document (see projectRoot); "" when there is neither. The server's own
// working directory is never a workspace: an editor started from / or
// from the home directory would hand the agent the whole disk.
func (s *Server) root() string {
	if f, ok := s.folders.first(); ok && !tooWide(f) {
		return f
	}
	for _, d := range s.docs.All() {
		if d.Path == "" {
			continue
		}
		if root := projectRoot(filepath.Dir(d.Path)); root != "" {
			return root
		}
	}
	return ""
}

// workspace is the folders the agent works in: the workspace folders that
// are not too wide, else the root; none when there is no root.
func (s *Server) workspace() []string {
	if fs := slices.DeleteFunc(s.folders.all(), tooWide); len(fs) > 0 {
		return fs
	}
	if root := s.root(); root != "" {
		return []string{root}
	}
	return nil
}

// projectMarkers name the files and folders that make a directory a
// project's root.
var projectMarkers = []string{".git", ".hg", ".jj", "go.work", "go.mod", "Cargo.toml", "package.json", "pyproject.toml", "setup.py", "pom.xml", "build.gradle", "CMakeLists.txt", "Makefile"}

// projectRoot is the nearest directory at or above dir that holds a
// project marker, short of the home directory and /; "" when none does.
func projectRoot(dir string) string {
	for ; !tooWide(dir); dir = filepath.Dir(dir) {
		for _, m := range projectMarkers {
			if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
				return dir
			}
		}
		if parent := filepath.Dir(dir); parent == dir {
			break
		}
	}
	return ""
}

// tooWide reports whether a directory is too wide to be a workspace: the
// file system's root or the home directory.
func tooWide(dir string) bool {
	dir = filepath.Clean(dir)
	if dir == filepath.Dir(dir) {
		return true
	}
	home, err := os.UserHomeDir()
	return err == nil && dir == filepath.Clean(home)
}

// resetSession ends the current session (its transcript stays): the next
// need starts a new one.
func (s *Server) resetSession(reason string) {
	s.cancelRun()
	s.endSession(reason)
}

// endSession ends the current session, leaving the run under way, if
// any, to finish on it: the next need starts a new one.
func (s *Server) endSession(reason string) {
	s.mu.Lock()
	old := s.sess
	s.sess = nil
	s.mu.Unlock()
	if old != nil {
		old.stopWarm()
		old.agent.Close()
		s.logMessage(protocol.MessageTypeLog, "Reika: a new session will start: %s", reason)
	}
}

// newSession ends the current session, and one that is starting
// (resumed or not): the next need starts a new one, in a new transcript.
func (s *Server) newSession() {
	s.mu.Lock()
	s.sessGen++
	s.mu.Unlock()
	s.resetSession("reika.newSession")
}

// closeSession ends the session when the connection ends.
func (s *Server) closeSession() {
	s.mu.Lock()
	old := s.sess
	s.sess = nil
	s.mu.Unlock()
	if old != nil {
		old.stopWarm()
		old.agent.Close()
	}
}

// warmupWait is how long the warm-up waits for the editor's first open
// document before it builds the prefix without one.
const warmupWait = time.Second

// clipLine makes s one line (each run of white space becomes one space)
// and cuts it to at most n bytes, at a rune boundary, with "…" for what
// was cut. It is the package's one clip.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// oneLine joins a text's lines with spaces: editors show a message's
// blank lines badly (Helix collapses them, Neovim prompts).
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
