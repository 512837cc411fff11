package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/contextwin"
)

// Config says where the tools work and who decides for the user.
type Config struct {
	// Folders are the absolute workspace roots; relative paths are taken
	// against the first.
	Folders []string
	// Buffers gives the open editor documents, which win over the disk;
	// nil reads the disk only.
	Buffers Buffers
	// Proposer hands edits and new files to the front end; nil leaves them
	// proposed but not applied.
	Proposer Proposer
	// Ask puts a question to the user: before a command that does not run
	// unasked, and before fetch_url reaches a new host. Nil asks nobody:
	// what needs a yes is refused, with a reason the model can tell.
	Ask Ask
	// Unasked, when set, says why nobody could be asked, in place of
	// "the user cannot be asked here": what the model is told when Ask
	// answers Unasked to a command or a new host (a headless run names
	// the flag that would allow it).
	Unasked func(Question) string
	// Remember keeps a command the user allowed always; nil offers no
	// "always".
	Remember Remember
	// Sandbox contains commands; nil runs them as they are, and then an
	// allowlisted command asks too once the run has changed a file.
	Sandbox Sandbox
	// Terminal, when set, runs the commands the sandbox does not contain
	// (those the user let out of it, or all of them without a sandbox)
	// where the user sees them: the editor's terminal. They ask as they
	// would otherwise; one the terminal cannot run runs here.
	Terminal Terminal
	// BashAllow lists commands that run without confirmation: each entry
	// names a program and optionally its leading arguments ("go test"),
	// and a command line runs without asking when every command in it is
	// named by an entry and passes its program's rule (see allowlist).
	BashAllow []string
	// BashTimeout stops a command; 0 means 2 minutes.
	BashTimeout time.Duration
	// FetchEnabled offers fetch_url.
	FetchEnabled bool
	// Navigator, when set, answers the navigation tools (definition,
	// references, symbols, hover, diagnostics), which are offered then:
	// always the same five, whatever backs them.
	Navigator Navigator
	// SpillDir is where long outputs are saved for the model to page
	// through with read (which may read there too); "" saves nothing.
	SpillDir string
	// HTTPClient, when set, makes fetch_url's requests (tests). Its
	// transport is used as is: the address checks made at dial time apply
	// only to the default client; URL and redirect checks always apply.
	HTTPClient *http.Client
}

// DefaultBashTimeout is the timeout of a command when Config sets none.
const DefaultBashTimeout = 2 * time.Minute

// Set is the agent's tools over one workspace. It is safe for concurrent
// use; its definitions never change.
type Set struct {
	folders  []folder
	buffers  Buffers
	proposer Proposer
	asker    Ask
	unasked  func(Question) string
	remember Remember
	sandbox  Sandbox
	terminal Terminal
	allow    atomic.Pointer[allowlist]
	// hosts are the hosts fetch_url may reach in this session.
	hostsMu      sync.Mutex
	hosts        map[string]bool
	bashTimeout  time.Duration
	fetchEnabled bool
	nav          Navigator
	spillDir     string
	spillSeq     atomic.Int64 // numbers the spill files
	client       *http.Client
	defs         []engine.Tool

	// lookup resolves a host name for fetch_url's dialer; tests replace it.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// New checks the configuration and builds the tools.
func New(cfg Config) (*Set, error) {
	if len(cfg.Folders) == 0 {
		return nil, errors.New("tools: no workspace folder")
	}
	s := &Set{
		buffers:      cfg.Buffers,
		proposer:     cfg.Proposer,
		asker:        cfg.Ask,
		unasked:      cfg.Unasked,
		remember:     cfg.Remember,
		sandbox:      cfg.Sandbox,
		terminal:     cfg.Terminal,
		hosts:        map[string]bool{},
		bashTimeout:  cfg.BashTimeout,
		fetchEnabled: cfg.FetchEnabled,
		nav:          cfg.Navigator,
	}
	for _, root := range cfg.Folders {
		if !filepath.IsAbs(root) {
			return nil, fmt.Errorf("tools: workspace folder %q is not an absolute path", root)
		}
		root = filepath.Clean(root)
		st, err := os.Stat(root)
		if err != nil {
			return nil, fmt.Errorf("tools: workspace folder: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("tools: workspace folder %s is not a directory", root)
		}
		real, err := filepath.EvalSymlinks(root)
		if err != nil {
			return nil, fmt.Errorf("tools: workspace folder: %w", err)
		}
		s.folders = append(s.folders, folder{root: root, real: real})
	}
	s.allow.Store(newAllowlist(cfg.BashAllow, s.insideWorkspace))
	if s.bashTimeout <= 0 {
		s.bashTimeout = DefaultBashTimeout
	}
	if cfg.SpillDir != "" {
		if !filepath.IsAbs(cfg.SpillDir) {
			return nil, fmt.Errorf("tools: spill dir %q is not an absolute path", cfg.SpillDir)
		}
		s.spillDir = filepath.Clean(cfg.SpillDir)
	}
	s.client = s.fetchClient(cfg.HTTPClient)
	s.defs = definitions(s.bashTimeout, s.fetchEnabled, s.nav != nil)
	return s, nil
}

func (s *Set) insideWorkspace(p string) bool {
	_, err := s.resolve(p, false)
	return err == nil
}

// allowlist is the allow list in force.
func (s *Set) allowlist() *allowlist { return s.allow.Load() }

// allowAlso adds an entry to the allow list in force, for the rest of the
// session (the user answered "always"; Remember kept it for later ones).
func (s *Set) allowAlso(entry string) {
	for {
		old := s.allow.Load()
		next := old.with(entry)
		if s.allow.CompareAndSwap(old, next) {
			return
		}
	}
}

// Definitions returns the tools to offer the model, always in the same
// order and with the same bytes: they are part of the prompt prefix the
// engine caches.
func (s *Set) Definitions() []engine.Tool {
	defs := make([]engine.Tool, len(s.defs))
	for i, d := range s.defs {
		d.Parameters = append(json.RawMessage(nil), d.Parameters...)
		defs[i] = d
	}
	return defs
}

// Run runs one tool call. Every failure — an unknown tool, bad arguments,
// a refused path, even a bug — comes back as a Result with Error set and
// a sentence the model can act on.
func (s *Set) Run(ctx context.Context, call engine.ToolCall) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res = failf("the %s tool failed on an internal error (%v); this is a bug in Reika, not in your call: try another way", call.Name, r)
		}
	}()
	var run func(context.Context, json.RawMessage) Result
	switch call.Name {
	case ReadTool:
		run = s.read
	case GlobTool:
		run = s.glob
	case GrepTool:
		run = s.grep
	case EditTool:
		run = s.edit
	case WriteTool:
		run = s.write
	case BashTool:
		run = s.bash
	case FetchTool:
		if !s.fetchEnabled {
			return failf("%s is turned off for this session; work with the files in the workspace", FetchTool)
		}
		run = s.fetch
	case DefinitionTool, ReferencesTool, HoverTool:
		name := call.Name
		run = func(ctx context.Context, args json.RawMessage) Result { return s.navAt(ctx, name, args) }
	case SymbolsTool:
		run = s.symbols
	case DiagnosticsTool:
		run = s.diagnostics
	default:
		names := make([]string, len(s.defs))
		for i, d := range s.defs {
			names[i] = d.Name
		}
		return failf("there is no tool named %q; the tools are %s", call.Name, strings.Join(names, ", "))
	}
	if s.nav == nil && navTool(call.Name) {
		return failf("%s needs a language server or the repo map, and this session has neither; use grep and read", call.Name)
	}
	if r := s.planRefusal(ctx, call.Name); r != nil {
		return *r
	}
	args, err := rawArgs(call.Arguments)
	if err != nil {
		return failf("the arguments of %s are not a JSON object (%v); send them as an object, such as %s", call.Name, err, exampleArgs[call.Name])
	}
	res = run(ctx, args)
	return s.spill(call.Name, res)
}

// exampleArgs show the model the shape of each tool's arguments.
var exampleArgs = map[string]string{
	ReadTool:  `{"path":"main.go"}`,
	GlobTool:  `{"pattern":"**/*.go"}`,
	GrepTool:  `{"pattern":"func main"}`,
	EditTool:  `{"path":"main.go","old_text":"…","new_text":"…"}`,
	WriteTool: `{"path":"notes.md","content":"…"}`,
	BashTool:  `{"command":"go test ./..."}`,
	FetchTool: `{"url":"https://go.dev/doc/"}`,

	DefinitionTool:  `{"symbol":"Session.Run"}`,
	ReferencesTool:  `{"path":"agent/run.go","line":42,"column":7}`,
	SymbolsTool:     `{"path":"agent/run.go"}`,
	HoverTool:       `{"path":"agent/run.go","line":42,"column":7}`,
	DiagnosticsTool: `{"paths":["agent/run.go"]}`,
}

// navTool reports whether name is one of the navigation tools.
func navTool(name string) bool {
	switch name {
	case DefinitionTool, ReferencesTool, SymbolsTool, HoverTool, DiagnosticsTool:
		return true
	}
	return false
}

func failf(format string, args ...any) Result {
	return Result{Error: true, Content: fmt.Sprintf(format, args...)}
}

// rawArgs checks that the arguments are a JSON object. Empty arguments
// are an empty object, and an object sent as a JSON string (some models
// encode twice) is unwrapped.
func rawArgs(s string) (json.RawMessage, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("{}"), nil
	}
	if s[0] == '"' {
		var inner string
		if err := json.Unmarshal([]byte(s), &inner); err == nil {
			s = strings.TrimSpace(inner)
		}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("got null")
	}
	return json.RawMessage(s), nil
}

// decode unmarshals arguments already checked by rawArgs into v, saying
// which field has the wrong type.
func decode(tool string, args json.RawMessage, v any) *Result {
	if err := json.Unmarshal(args, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			r := failf("the %q argument of %s must be a %s, not a JSON %s; for example %s", te.Field, tool, jsonKind(te.Type.Kind().String()), te.Value, exampleArgs[tool])
			return &r
		}
		r := failf("the arguments of %s do not fit (%v); send an object such as %s", tool, err, exampleArgs[tool])
		return &r
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int32", "int64", "float64":
		return "number"
	}
	return goKind
}

// flexInt is an integer argument that also accepts a numeric string or a
// whole float ("10", 10.0), as models write them.
type flexInt struct {
	n   int
	set bool
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if unq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(unq)
		if s == "" {
			return nil
		}
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x != float64(int64(x)) || x > 1e9 || x < -1e9 {
		return fmt.Errorf("%s is not a whole number", string(b))
	}
	f.n, f.set = int(x), true
	return nil
}

// spill saves a long result to a file in the spill dir, keeps its head
// and tail in the content and says where the whole is.
func (s *Set) spill(tool string, res Result) Result {
	if s.spillDir == "" || res.Payload.Spill != "" || !contextwin.ShouldSpill(res.Payload, len(res.Content)) {
		return res
	}
	f, err := s.createSpill(strings.ReplaceAll(tool, "_", "-"))
	if err != nil {
		return res
	}
	_, werr := f.WriteString(res.Content)
	if cerr := f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return res
	}
	res.Payload.Spill = f.Name()
	lines := strings.Count(res.Content, "\n") + 1
	res.Content = headTail(res.Content, spillKeep, f.Name()) +
		fmt.Sprintf("\n[the whole output (%s) is saved in %s; page through it with %s and offset/limit]", plural(lines, "line"), f.Name(), ReadTool)
	return res
}

// Spill is what the model reads of a long result of tool: its head and
// tail, and the file in the spill dir that holds the whole (as bash's,
// grep's and fetch_url's are), for a toolbox that wraps this one.
func (s *Set) Spill(tool string, res Result) Result { return s.spill(tool, res) }

// SpillText saves text to a new file in the spill dir, named after what
// it is, and returns its path, which the read tool may open; "" when there
// is no spill dir or the file could not be written.
func (s *Set) SpillText(what, text string) string {
	if s.spillDir == "" {
		return ""
	}
	f, err := s.createSpill(what)
	if err != nil {
		return ""
	}
	_, werr := f.WriteString(text)
	if cerr := f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return ""
	}
	return f.Name()
}

// spillKeep is how much of a spilled result stays in the content.
const spillKeep = 64 << 10

// createSpill creates a new file in the spill dir, named what-N.txt with
// N counting the set's spill files from 1. The model reads these paths:
// os.CreateTemp's random part varies in length, and one run of the same
// session would differ from the next by its bytes (the demo's summary
// did). A name already taken (a resumed session's dir) is skipped.
func (s *Set) createSpill(what string) (*os.File, error) {
	if err := os.MkdirAll(s.spillDir, 0o700); err != nil {
		return nil, err
	}
	for range 10000 {
		name := filepath.Join(s.spillDir, fmt.Sprintf("%s-%d.txt", what, s.spillSeq.Add(1)))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("no free name %s-N.txt in %s", what, s.spillDir)
}
