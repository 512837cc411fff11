package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/langserver"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/agent/transcript"
	"github.com/reika-lsp/reika/contextwin"
	"github.com/reika-lsp/reika/repomap"
)

// Setup is what a front end hands to Start: where the settings come from,
// the workspace, and the hooks through which the agent reaches the editor.
// Everything else — the engine, the tools, the transcript, the budget and
// the repo map's place in the prefix — Start derives the same way for
// every front end (the language server, demo, check, replay).
type Setup struct {
	// Settings are the editor's startup options (initializationOptions),
	// as the editor sent them; nil for none. They win over the config file
	// and the environment.
	Settings json.RawMessage
	// Pushed are the editor's settings pushes (didChangeConfiguration)
	// merged, nil for none: they win over Settings, but never give a
	// setting that widens trust (config.TrustKeys), which they may carry
	// from the workspace.
	Pushed json.RawMessage
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// ConfigFile is the config file to read: "" means the user's
	// (REIKA_CONFIG, else the config directory), NoConfigFile none.
	ConfigFile string
	// Override, when set, changes the resolved settings last: a command's
	// flags (check --sim, demo) that must win over everything.
	Override func(*config.Settings)
	// HTTPClient, when set, carries every request to the engine.
	HTTPClient *http.Client

	// Folders are the workspace folders the tools are confined to; the
	// first is the root (AGENTS.md, the transcript's workspace).
	Folders []string
	// Buffers give the editor's open documents, which win over the disk.
	Buffers tools.Buffers
	// EditorDiagnostics, when set, holds the errors and warnings the
	// editor sent with the last ask: the diagnostics tool answers from
	// them for the files no language server serves.
	EditorDiagnostics *tools.EditorDiagnostics
	// Proposer hands edits to the editor; Ask puts the agent's questions
	// to the user (a command that does not run unasked, a new host for
	// fetch_url). Nil: edits stay proposed, what needs a yes is refused.
	// A Proposer gets the user's yes to each change of a protected path.
	Proposer tools.Proposer
	Ask      tools.Ask
	// Unasked, when set, says why nobody could be asked where Ask answers
	// tools.Unasked (tools.Config.Unasked): a headless run names its flags.
	Unasked func(tools.Question) string
	// Terminal, when set, runs the commands the sandbox does not contain
	// in the editor's terminal (tools.Config.Terminal).
	Terminal tools.Terminal

	// StateDir is where transcripts go: "" means the user's state
	// directory, NoTranscript keeps none (and nothing is written but
	// spill files in a temporary directory, removed at Close).
	StateDir string
	// Resume is a transcript to continue.
	Resume string
	// RepoMap, when set, is the repo map the prefix carries; it learns the
	// files the agent reads.
	RepoMap RepoMap

	// Toolbox and System replace the tools and the system prompt: a
	// replay of a recorded session answers with the recording's results.
	Toolbox Toolbox
	System  string
	// Engine, when set, carries the requests instead of a client to the
	// connected endpoint (a replay meters them); the connection and its
	// discovery still give the window.
	Engine Engine
	// MaxSteps bounds a run's rounds (0: 200); Temperature, when set, is
	// sent with every request.
	MaxSteps    int
	Temperature *float64
	// MCPServers are MCP servers the front end adds after the config
	// file's: those an ACP client offered (mcpServers) that the user let
	// start. Their tools come after the config file's servers'.
	MCPServers []config.MCPServer
	// ID, when set, is the new session's id (its transcript's): a front
	// end that answered with it before the session started.
	ID string

	// NoSubagents leaves the subagent tool out of the session's tools (a
	// replay of a session recorded without it).
	NoSubagents bool
}

// The values of Setup.ConfigFile and Setup.StateDir that mean none.
const (
	NoConfigFile = "-"
	NoTranscript = "-"
)

// Notice is something Start learnt that the user should know.
type Notice struct {
	Warning bool // a problem to fix; else information for the log
	Text    string
}

// Info describes a started session: what it runs against, and the
// settings it runs with.
type Info struct {
	Settings   *config.Settings
	ConfigFile string
	Connection *engine.Connection
	// StateDir is where the transcript, saved answers and the recap
	// document go; "" when the session keeps no transcript.
	StateDir string
	// Notices are the warnings and facts Start gathered, in order.
	Notices []Notice
	// Sandbox says how commands run: contained, or why not.
	Sandbox Sandboxing
	// MCP says what became of each MCP server the config file names.
	MCP []MCPServer
	// LanguageServers names the workspace's language servers the agent
	// asks (agent/langserver) and their languages, or why there are none.
	LanguageServers string
}

// Resolve reads the settings Start would use: defaults, the config file,
// the environment, the editor, then Override. It fails only on a config
// file that cannot be read or parsed; values that make no sense are
// dropped with a warning in Settings.Warnings.
func (st Setup) Resolve() (*config.Settings, string, error) {
	getenv := st.getenv()
	path := st.ConfigFile
	if path == "" {
		path = config.DefaultPath(getenv)
	}
	var file *config.FileContents
	if path != NoConfigFile {
		f, err := config.ReadFile(path)
		if err != nil {
			return nil, path, fmt.Errorf("%v; fix %s", err, path)
		}
		file = f
	} else {
		path = ""
	}
	var editor, pushed map[string]any
	for _, in := range []struct {
		raw json.RawMessage
		to  *map[string]any
	}{{st.Settings, &editor}, {st.Pushed, &pushed}} {
		if len(in.raw) > 0 && string(in.raw) != "null" {
			if err := json.Unmarshal(in.raw, in.to); err != nil {
				return nil, path, fmt.Errorf("the editor's settings are not a JSON object: %v", err)
			}
		}
	}
	s := config.Resolve(config.Inputs{File: file, FilePath: path, Env: getenv, Editor: editor, Pushed: pushed})
	if st.Override != nil {
		st.Override(s)
	}
	return s, path, nil
}

func (st Setup) getenv() func(string) string {
	if st.Getenv != nil {
		return st.Getenv
	}
	return os.Getenv
}

// Start builds a session: it resolves the settings, connects to the engine
// and discovers its model and window, sets up the tools confined to the
// workspace, opens (or resumes) the transcript and wires the repo map into
// the prefix. It makes no request to the model: the prefix is built at the
// first request (Warmup or Run).
func Start(ctx context.Context, st Setup) (*Session, error) {
	settings, path, err := st.Resolve()
	if err != nil {
		return nil, err
	}
	info := &Info{Settings: settings, ConfigFile: path}
	for _, w := range settings.Warnings {
		info.notice(true, w)
	}
	conn, err := st.connect(ctx, settings, info)
	if err != nil {
		return nil, err
	}
	info.StateDir = st.stateDir()
	spill, cleanup, err := spillDir(info.StateDir)
	if err != nil {
		return nil, err
	}
	toolbox := st.Toolbox
	var checker EditChecker
	if toolbox == nil {
		// The workspace's language servers answer the navigation tools
		// (the repo map's index for the rest) and tell the errors each
		// applied edit introduced.
		servers := st.languageServers(settings, info)
		if servers != nil {
			checker, cleanup = servers, closeFirst(servers.Close, cleanup)
		}
		toolbox, cleanup, err = st.builtinTools(settings, path, spill, info, cleanup, servers)
		if err != nil {
			cleanup()
			return nil, err
		}
		toolbox, cleanup = st.mcpTools(ctx, settings, path, toolbox, info, cleanup)
	}
	eng := st.Engine
	if eng == nil {
		eng = engine.NewClient(conn.Options)
	}
	s, err := newSession(sessionConfig{
		Engine:        eng,
		Tools:         toolbox,
		Context:       plannerConfig(settings, conn.Discovery),
		Workspace:     st.root(),
		RepoMap:       st.RepoMap,
		System:        st.System,
		Checker:       checker,
		MaxSteps:      st.MaxSteps,
		Temperature:   st.Temperature,
		TranscriptDir: info.StateDir,
		Resume:        st.Resume,
		Meta:          transcript.Meta{ID: st.ID, Endpoint: conn.Options.BaseURL, Model: conn.Options.Model},
		Debug:         settings.Debug.Value,
		ReasoningBack: settings.ReasoningBack.Value,
		NoSubagents:   st.NoSubagents,
	})
	if err != nil {
		cleanup()
		return nil, err
	}
	if s.resumed != "" {
		info.notice(false, s.resumed)
	}
	if text := s.keepServedModel(conn.Discovery.Models, conn.Discovery); text != "" {
		info.notice(true, text)
	}
	if text := s.rediscoverResumed(ctx, conn); text != "" {
		info.notice(true, text)
	}
	info.Notices = append(info.Notices, s.resumeNotes...)
	if text := s.resumedTools(); text != "" {
		info.notice(true, text)
	}
	for _, text := range s.transcriptNotices() {
		info.notice(true, text)
	}
	s.info, s.cleanup = info, cleanup
	// (A replay's metered engine has the simulator's slots behind it: a
	// subagent there takes a slot of its own as it would on llama.cpp.)
	s.setupSlot(ctx, conn, info.StateDir, &info.Notices)
	s.router = conn.Discovery.Router
	if s.router {
		info.notice(false, engine.RouterNote(conn.Options.Model, conn.Discovery.ModelStatus))
	}
	if conn.Discovery.Flavor == engine.LlamaCpp {
		// (The replay's metered engine is llama.cpp's too: its primer is
		// sized as a user's is.)
		s.countPrimer(ctx, conn.Options)
	}
	if w := s.RoomWarning(); w != "" {
		info.notice(true, w)
	}
	return s, nil
}

// notice adds a notice: a warning, or information for the log.
func (i *Info) notice(warning bool, text string) {
	i.Notices = append(i.Notices, Notice{Warning: warning, Text: text})
}

// connect finds the engine the settings name and discovers its model and
// window, noting what it learnt in info.
func (st Setup) connect(ctx context.Context, settings *config.Settings, info *Info) (*engine.Connection, error) {
	var conf engine.Configured
	if settings.ContextWindow.IsSet() && settings.ContextWindow.Value > 0 {
		conf = engine.Configured{Window: settings.ContextWindow.Value, WindowSource: sourceOf(settings.ContextWindow.Source)}
	}
	if m, src, ok := settings.CacheModel(); ok {
		conf.Cache, conf.CacheSource = m, sourceOf(src)
	}
	if settings.CheckpointMinStep.IsSet() {
		conf.MinStep = settings.CheckpointMinStep.Value
	}
	if settings.CacheBlock.IsSet() {
		conf.Block = settings.CacheBlock.Value
	}
	conn, err := engine.Connect(ctx, engine.Target{
		Endpoint: settings.Endpoint.Value, EndpointSource: sourceOf(settings.Endpoint.Source),
		Model: settings.Model.Value, APIKey: settings.APIKey(st.getenv()), APIKeyEnv: settings.APIKeyEnv.Value,
		Extra: settings.Extra.Value, Configured: conf,
	}, engine.Options{HTTPClient: st.HTTPClient, Identity: identity(settings)})
	if err != nil {
		return nil, err
	}
	info.Connection = conn
	d := conn.Discovery
	for _, w := range d.Warnings {
		info.notice(true, w)
	}
	if d.TruncationRisk != "" {
		info.notice(true, d.TruncationRisk)
	}
	info.notice(false, fmt.Sprintf("%s at %s (%s), model %s, window %d (%s)",
		d.Flavor.Name(), conn.Options.BaseURL, conn.EndpointSource, conn.Options.Model, d.Window, d.WindowSource))
	if pc := info.PromptCache(); pc.Checkpointed {
		// Only the class that costs a re-prefill per change is told at
		// start; check and reika.status name every class.
		info.notice(false, "prompt cache "+pc.Text)
	}
	return conn, nil
}

// identity is where the settings name a session to the engine's routers:
// a list left unset takes the engine client's default (nil), one set
// empty sends none.
func identity(settings *config.Settings) engine.Identity {
	list := func(v config.Value[[]string]) []string {
		if !v.IsSet() {
			return nil
		}
		return append([]string{}, v.Value...)
	}
	return engine.Identity{Headers: list(settings.SessionHeaders), ParentHeaders: list(settings.ParentSessionHeaders), Fields: list(settings.SessionFields)}
}

// PromptCache is how the engine reuses its prompt cache, for a front
// end's status.
type PromptCache struct {
	// Class is the contextwin.CacheClass's name: "dense", "checkpointed",
	// "blocks" or "unknown".
	Class string
	// Text names the model, its source and what a change costs, with
	// advice: "checkpointed (sliding window 1024) (…): SWA model …".
	Text string
	// Checkpointed is set when a change to the prompt restarts from a
	// checkpoint (a sliding-window or recurrent model).
	Checkpointed bool
}

// PromptCache is the prompt cache of the model the session started with,
// as discovery found it or the settings forced it (Session.PromptCache is
// the current model's); the zero value before a connection.
func (i *Info) PromptCache() PromptCache {
	if i.Connection == nil || i.Connection.Discovery == nil {
		return PromptCache{}
	}
	return promptCache(i.Connection.Discovery)
}

// promptCache is the prompt cache d tells of.
func promptCache(d *engine.Discovery) PromptCache {
	return PromptCache{
		Class:        string(d.Cache.Class),
		Text:         fmt.Sprintf("%s (%s): %s", d.Cache, d.CacheSource, d.CacheAdvice()),
		Checkpointed: d.Cache.Class == contextwin.CacheCheckpointed,
	}
}

// plannerConfig is the planner's configuration: the window discovery
// found, divided as the settings say.
func plannerConfig(settings *config.Settings, d *engine.Discovery) contextwin.Config {
	c := contextwin.Config{
		Window:          d.Window,
		MaxTokens:       settings.MaxTokens.Value,
		OutputLimit:     d.OutputLimit,
		ReasoningRounds: settings.ReasoningRounds.Value,
		Minimal:         settings.Minimal.Value,
		MapChars:        settings.RepoMapBudget.Value,
		MapCharsSet:     settings.RepoMapBudget.IsSet(),
		Cache:           d.Cache,
		Reasoning:       d.Reasoning,
	}
	if settings.ReasoningTemplate.IsSet() {
		c.Reasoning = contextwin.ReasoningTemplate(settings.ReasoningTemplate.Value)
	}
	if settings.MinGenTokens.IsSet() {
		c.Reserve = settings.MinGenTokens.Value
	}
	return c
}

// root is the workspace's root: its first folder, "" for none.
func (st Setup) root() string {
	if len(st.Folders) > 0 {
		return st.Folders[0]
	}
	return ""
}

// stateDir is where the session's transcript goes; "" for none.
func (st Setup) stateDir() string {
	switch st.StateDir {
	case NoTranscript:
		return ""
	case "":
		return transcript.Dir(st.getenv())
	}
	return st.StateDir
}

// builtinTools sets up the built-in tools, confined to the workspace, with their
// commands contained when the system allows it (info.Sandbox says how).
// The cleanup it returns removes the commands' temporary directory, then
// does what done did.
func (st Setup) builtinTools(settings *config.Settings, configPath, spill string, info *Info, done func(), servers *langserver.Servers) (Toolbox, func(), error) {
	var box tools.Sandbox
	cleanup := done
	// Commands get a temporary directory of their own: the system's is
	// shared with every other program of the user.
	if temp, err := tempDir("reika-cmd-"); err != nil {
		info.Sandbox = Sandboxing{Line: fmt.Sprintf("no sandbox: no temporary directory for commands (%v); commands ask", err)}
	} else {
		cleanup = func() { os.RemoveAll(temp); done() }
		c, sb := newContainer(st.Folders, temp, settings.APIKeyEnv.Value, settings.SandboxEnv.Value, st.getenv())
		info.Sandbox = sb
		if c != nil {
			box = c
		}
	}
	ts, err := tools.New(tools.Config{
		Sandbox:      box,
		Folders:      st.Folders,
		Buffers:      st.Buffers,
		Proposer:     st.Proposer,
		Ask:          st.Ask,
		Unasked:      st.Unasked,
		Terminal:     st.Terminal,
		Remember:     remember(configPath),
		BashAllow:    settings.BashAllow.Value,
		FetchEnabled: settings.Fetch.Value,
		SpillDir:     spill,
		Navigator:    st.navigator(servers),
	})
	if err != nil {
		return nil, cleanup, err
	}
	return ts, cleanup, nil
}

// languageServers are the workspace's language servers (agent/langserver)
// the settings give: language_servers, else the known ones on PATH, none
// started until asked. Nil when there are none, or no workspace folder.
func (st Setup) languageServers(settings *config.Settings, info *Info) *langserver.Servers {
	list, warnings := langserver.Configured(settings.LanguageServers.Value, nil)
	for _, w := range warnings {
		info.notice(true, w)
	}
	info.LanguageServers = serversLine(list, settings.LanguageServers)
	if len(list) == 0 || len(st.Folders) == 0 {
		return nil
	}
	return langserver.New(langserver.Options{Folders: st.Folders, Servers: list, Text: st.text, APIKeyEnv: settings.APIKeyEnv.Value,
		Fallback: st.mapNavigator()})
}

// serversLine names the servers and their languages for check, or says
// why there are none.
func serversLine(list []langserver.Server, set config.Value[[]string]) string {
	if len(list) == 0 {
		if set.IsSet() {
			return "none (language_servers, " + set.Source.String() + ")"
		}
		return "none on PATH (gopls, rust-analyzer, pyright-langserver, typescript-language-server, clangd; or set language_servers)"
	}
	var parts []string
	for _, s := range list {
		parts = append(parts, s.Name+" ("+strings.Join(s.Languages, ", ")+")")
	}
	return strings.Join(parts, ", ")
}

// text is a file's text as the agent sees it: the editor's buffer when
// the file is open there, else the disk.
func (st Setup) text(abs string) (string, error) {
	if st.Buffers != nil {
		if text, _, ok := st.Buffers.Open(abs); ok {
			return text, nil
		}
	}
	b, err := os.ReadFile(abs)
	return string(b), err
}

// closeFirst returns a cleanup that calls close, then then.
func closeFirst(close func() error, then func()) func() {
	return func() {
		close()
		then()
	}
}

// navigator answers the navigation tools when the RepoMap has an index
// (MapIndex): the workspace's language servers, when there are any, with
// the map's answers for the files they do not serve; else the map alone.
// Without an index it is nil and the tools are not offered.
func (st Setup) navigator(servers *langserver.Servers) tools.Navigator {
	mapNav := st.mapNavigator()
	if mapNav == nil || servers == nil {
		return mapNav
	}
	return servers
}

// mapNavigator answers from the repo map's index when the RepoMap has
// one, else nil. (A nil *mapNavigator would be a non-nil Navigator:
// hence the branch.)
func (st Setup) mapNavigator() tools.Navigator {
	idx, ok := st.RepoMap.(MapIndex)
	if !ok {
		return nil
	}
	return newMapNavigator(idx, st.Folders, st.Buffers, st.EditorDiagnostics)
}

// sourceOf is the engine's form of a setting's source.
func sourceOf(s config.Source) engine.Source { return engine.Source{ID: s.ID(), Text: s.String()} }

// remember keeps an "always" of the user in the user-level config file;
// nil when there is none to keep it in.
func remember(path string) tools.Remember {
	if path == "" {
		return nil
	}
	return func(entry string) error { return config.AllowAlways(path, entry) }
}

// RoomWarning says ahead of the first request when the window leaves the
// conversation little or no room beside the fixed prefix, priced at 4
// bytes a token with the repo map at its full size.
func (s *Session) RoomWarning() string {
	b := s.Budget()
	if b.Window == 0 {
		return ""
	}
	system, _ := s.systemPrompt()
	if s.cfg.RepoMap != nil {
		system += strings.Repeat(" ", b.RepoMapChars)
	}
	prefix := (NewPrefix(system, s.tools).Chars + 3) / 4
	fix := "set a larger window (REIKA_CONTEXT_WINDOW and the engine's context size)"
	if !s.cfg.Context.Minimal {
		fix += " or minimal mode (REIKA_MINIMAL=1), which leaves the repo map and AGENTS.md out"
	}
	switch {
	case prefix+minRound > b.Usable:
		return fmt.Sprintf("window too small: the fixed prefix (system prompt, tools, repo map: about %d tokens) leaves no room for a round "+
			"in the %d tokens a %d-token window leaves for the prompt; %s", prefix, b.Usable, b.Window, fix)
	case prefix > b.Usable/2:
		return fmt.Sprintf("small window: the fixed prefix (about %d tokens) takes more than half of the %d tokens a %d-token window leaves "+
			"for the prompt, so the conversation will be folded often; %s", prefix, b.Usable, b.Window, fix)
	}
	return ""
}

// minRound is the least room a round needs beside the prefix, in tokens:
// an instruction, a call and a short result.
const minRound = 512

// spillDir is where long results are saved for the model to page through:
// beside the transcripts, or a temporary directory removed at Close when
// the session keeps none.
func spillDir(stateDir string) (dir string, cleanup func(), err error) {
	if stateDir != "" {
		dir = filepath.Join(filepath.Dir(stateDir), "spill")
		if err := os.MkdirAll(dir, 0o700); err == nil {
			return dir, func() {}, nil
		}
		// A state folder that cannot be written (full, read-only) costs
		// the spill files their place beside the transcripts, not the
		// session: they go to a temporary directory, as without one.
	}
	dir, err = tempDir("reika-spill-")
	if err != nil {
		return "", nil, fmt.Errorf("spill directory: %w", err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// Info describes how the session was started; nil for one a test built
// without Start.
func (s *Session) Info() *Info { return s.info }

// Debug reports whether the prefix-cache line is on (REIKA_DEBUG).
func (s *Session) Debug() bool { return s.cfg.Debug }

// SaveMarkdown writes the whole transcript as Markdown beside it and
// returns the file's path.
func (s *Session) SaveMarkdown() (string, error) {
	path := s.TranscriptPath()
	if path == "" {
		return "", errors.New("this session keeps no transcript")
	}
	s.sync()
	recs, _, err := transcript.Read(path) // what a resume would read
	if err != nil {
		return "", err
	}
	out := strings.TrimSuffix(path, ".jsonl") + ".md"
	if err := os.WriteFile(out, []byte(transcript.Markdown(recs)), 0o600); err != nil {
		return "", fmt.Errorf("save the transcript: %w", err)
	}
	return out, nil
}

// LatestTranscript is the newest transcript of workspace in stateDir ("":
// the user's state directory) other than skip, or "" when there is none.
func LatestTranscript(getenv func(string) string, stateDir, workspace string, skip ...string) string {
	if stateDir == "" {
		if getenv == nil {
			getenv = os.Getenv
		}
		stateDir = transcript.Dir(getenv)
	}
	return transcript.Latest(stateDir, workspace, skip...)
}

// Transcripts lists the sessions of workspace ("": every workspace) in
// stateDir ("": the user's state directory), both front ends', newest
// first.
func Transcripts(getenv func(string) string, stateDir, workspace string) []transcript.Summary {
	if stateDir == "" {
		if getenv == nil {
			getenv = os.Getenv
		}
		stateDir = transcript.Dir(getenv)
	}
	return transcript.List(stateDir, workspace)
}

// DeleteTranscript removes the transcript of the session id from stateDir
// ("": the user's state directory). It fails on an id that is not a plain
// name or names no transcript.
func DeleteTranscript(getenv func(string) string, stateDir, id string) error {
	if id == "" || id != filepath.Base(id) || strings.HasPrefix(id, ".") {
		return fmt.Errorf("%q is not a session id", id)
	}
	if stateDir == "" {
		if getenv == nil {
			getenv = os.Getenv
		}
		stateDir = transcript.Dir(getenv)
	}
	path := filepath.Join(stateDir, id+".jsonl")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no transcript of session %s in %s", id, stateDir)
	}
	return os.Remove(path)
}

// TranscriptByID is the transcript of the session id of workspace in
// stateDir ("": the user's state directory): the file a session of either
// front end wrote, which Setup.Resume continues. It fails on an id that is
// not a plain name, names no transcript, or one of another workspace.
func TranscriptByID(getenv func(string) string, stateDir, workspace, id string) (string, error) {
	if id == "" || id != filepath.Base(id) || strings.HasPrefix(id, ".") {
		return "", fmt.Errorf("%q is not a session id", id)
	}
	if stateDir == "" {
		if getenv == nil {
			getenv = os.Getenv
		}
		stateDir = transcript.Dir(getenv)
	}
	path := filepath.Join(stateDir, id+".jsonl")
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("no transcript of session %s in %s", id, stateDir)
	}
	if ws := transcript.Workspace(path); ws != workspace {
		return "", fmt.Errorf("session %s is of the workspace %s, not %s: open that folder to load it", id, ws, workspace)
	}
	return path, nil
}

// MapFiles is the RepoMap of m for a front end without an editor: the files
// the agent reads join it under their workspace paths.
func MapFiles(m *repomap.Map) RepoMap { return mapFiles{m} }

type mapFiles struct{ m *repomap.Map }

func (f mapFiles) Render(budget int) string { return f.m.Render(budget) }

func (f mapFiles) Learn(t tools.FileText) {
	if len(t.Text) <= MapFileMax {
		f.m.Update(t.Path, []byte(t.Text))
	}
}

// MapFileMax bounds a file the repo map learns from a read: a larger one
// says little in a map and costs much to parse.
const MapFileMax = 4 << 20
