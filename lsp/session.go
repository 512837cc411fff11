package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/agent/transcript"
)

// session is the agent session of this connection, with what it was built
// from.
type session struct {
	agent    *agent.Session
	settings *config.Settings
	conn     *engine.Connection
	root     string
	stateDir string
	// recapURI is the document showRecap opened, "" before.
	recapURI string
}

// settings resolves the effective settings: defaults, the config file,
// the environment, the editor.
func (s *Server) settings() (*config.Settings, string, error) {
	path := config.DefaultPath(s.opts.Getenv)
	file, err := config.ReadFile(path)
	if err != nil {
		return nil, path, err
	}
	s.mu.Lock()
	editor := s.editor
	s.mu.Unlock()
	in := config.Inputs{File: file, FilePath: path, Env: s.opts.Getenv}
	json.Unmarshal(editor, &in.Editor) // checked to be an object (or null) when it came
	return config.Resolve(in), path, nil
}

// session returns the agent session, connecting to the engine the first
// time (and after the settings changed). It tells the user, once, what
// they must fix: a config file that does not parse, an engine that does
// not answer, no known window.
func (s *Server) session(ctx context.Context) (*session, error) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	folders := s.folders.all()
	if sess != nil {
		return sess, nil
	}

	st, path, err := s.settings()
	if err != nil {
		return nil, fmt.Errorf("%v; fix %s", err, path)
	}
	for _, w := range st.Warnings {
		s.showMessage(protocol.MessageTypeWarning, "Reika: %s", w)
	}
	conn, err := engine.Connect(ctx, st, s.opts.Getenv, engine.Options{HTTPClient: s.opts.HTTPClient})
	if err != nil {
		return nil, err
	}
	d := conn.Discovery
	for _, w := range d.Warnings {
		s.showMessage(protocol.MessageTypeWarning, "Reika: %s", w)
	}
	if d.TruncationRisk != "" {
		s.showMessage(protocol.MessageTypeWarning, "Reika: %s", d.TruncationRisk)
	}
	s.logMessage(protocol.MessageTypeInfo, "Reika: %s at %s (%s), model %s, window %d (%s)",
		d.Flavor.Name(), conn.Options.BaseURL, conn.EndpointSource, conn.Options.Model, d.Window, d.WindowSource)

	root := s.root()
	if len(folders) == 0 && root != "" {
		folders = []string{root}
	}
	stateDir := s.stateDir()
	spill := filepath.Join(filepath.Dir(stateDir), "spill")
	if err := os.MkdirAll(spill, 0o700); err != nil {
		return nil, fmt.Errorf("spill directory: %w", err)
	}
	ts, err := tools.New(tools.Config{
		Folders:      folders,
		Buffers:      s.docs,
		Proposer:     s.propose,
		Confirm:      s.confirmBash,
		BashAllow:    st.BashAllow.Value,
		FetchEnabled: st.Fetch.Value,
		SpillDir:     spill,
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	resume := s.resumeFrom
	s.resumeFrom = ""
	s.mu.Unlock()
	reserve := 0
	if st.MinGenTokens.IsSet() {
		reserve = st.MinGenTokens.Value
	}
	a, err := agent.NewSession(agent.Config{
		Engine:          engine.NewClient(conn.Options),
		Tools:           ts,
		Window:          d.Window,
		Reserve:         reserve,
		MaxTokens:       st.MaxTokens.Value,
		OutputLimit:     d.OutputLimit,
		ReasoningRounds: st.ReasoningRounds.Value,
		Minimal:         st.Minimal.Value,
		Workspace:       root,
		RepoMap:         s.repoMap(func() int { return mapBudget(st.RepoMapBudget.IsSet(), st.RepoMapBudget.Value, d.Window) }),
		TranscriptDir:   stateDir,
		Resume:          resume,
		Meta:            transcript.Meta{Endpoint: conn.Options.BaseURL, Model: conn.Options.Model},
		Debug:           st.Debug.Value,
	})
	if err != nil {
		return nil, err
	}
	sess = &session{agent: a, settings: st, conn: conn, root: root, stateDir: stateDir}
	s.mu.Lock()
	s.sess = sess
	s.mu.Unlock()
	s.sendStatus(a.Chip(), false)
	if st.Warmup.Value {
		s.goOwned(func(ctx context.Context) {
			// The prefix carries the repo map of the open documents: give
			// the editor a moment to open the first one.
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

// root is the first workspace folder, else the working directory.
func (s *Server) root() string {
	if f, ok := s.folders.first(); ok {
		return f
	}
	wd, _ := os.Getwd()
	return wd
}

// stateDir is where the transcripts go.
func (s *Server) stateDir() string {
	if s.opts.StateDir != "" {
		return s.opts.StateDir
	}
	return transcript.Dir(s.opts.Getenv)
}

// resetSession ends the current session (its transcript stays): the next
// need starts a new one.
func (s *Server) resetSession(reason string) {
	s.cancelRun()
	s.mu.Lock()
	old := s.sess
	s.sess = nil
	s.mu.Unlock()
	if old != nil {
		old.agent.Close()
		s.logMessage(protocol.MessageTypeLog, "Reika: a new session will start: %s", reason)
	}
}

// closeSession ends the session when the connection ends.
func (s *Server) closeSession() {
	s.mu.Lock()
	old := s.sess
	s.sess = nil
	s.mu.Unlock()
	if old != nil {
		old.agent.Close()
	}
}

// confirmBash asks the user whether the model may run a command.
func (s *Server) confirmBash(ctx context.Context, command string) bool {
	if !s.caps().messageActions {
		return false
	}
	const run, deny = "Run it", "Don't run"
	return s.ask(ctx, protocol.MessageTypeWarning, fmt.Sprintf("Reika wants to run: %s", clipLine(command, 300)), run, deny) == run
}

// warmupWait is how long the warm-up waits for the editor's first open
// document before it builds the prefix without one.
const warmupWait = time.Second

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
