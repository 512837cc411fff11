// Package config resolves Reika's settings from their layers — built-in
// defaults, the user's config file with its named profiles, environment
// variables, and the editor — and remembers, for every effective value,
// which layer it came from.
//
//	f, path, err := config.ReadFile(config.DefaultPath(os.Getenv))
//	s := config.Resolve(config.Inputs{File: f, FilePath: path, Env: os.Getenv})
//	fmt.Println(s.ContextWindow.Value, "from", s.ContextWindow.Source)
//
// Later layers win: defaults < file (top level) < file (active profile) <
// environment (REIKA_X) < environment for the profile (REIKA_X_<PROFILE>) <
// the editor's startup options < the editor's settings pushes — but the
// settings that widen trust (TrustKeys) never come from a push, which
// editors fill with workspace-level values a repository can carry: such a
// value is left in Settings.Ignored for the front end to tell once. A value that makes no sense (a window of 0 or of 50 million
// tokens, an endpoint that is not a URL) is ignored with a warning that
// names the setting, and the layer below it stays in force.
//
// The MCP servers whose tools the agent gets (mcp_servers, MCPServer) and
// the MCP tools that run unasked (mcp_allow, AllowMCPAlways) come from the
// config file's top level alone: they run programs, so no other layer
// gives them, and what the editor sends of them is ignored with a warning.
//
// Resolve is pure and safe for concurrent use; a Settings value is not
// modified after it is returned.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

// Source says where an effective value came from.
type Source struct {
	Layer  Layer
	Detail string // the variable, the file and profile, …
}

// Layer is one of the places a setting can come from, weakest first.
type Layer int

// A Layer is never persisted: reports print a Source's String, and for
// programs its ID.
const (
	Default Layer = iota
	File
	Env
	// EditorStartup is the editor's startup options (initializationOptions),
	// which the user's own editor config gives: every setting is taken.
	EditorStartup
	// EditorPush is a settings push (workspace/didChangeConfiguration),
	// which editors fill with workspace-level values a repository can
	// carry: the settings that widen trust (TrustKeys) are not taken from
	// it.
	EditorPush
	// Flag is a command-line flag of the running command.
	Flag
)

// layerIDs are the layers' stable identifiers.
var layerIDs = [...]string{Default: "default", File: "config-file", Env: "env", EditorStartup: "editor-startup", EditorPush: "editor-push", Flag: "flag"}

// ID is the layer's stable identifier ("default", "config-file", "env",
// "editor-startup", "editor-push", "flag"), which check --json reports as
// a value's source.
func (l Layer) ID() string {
	if l < 0 || int(l) >= len(layerIDs) {
		return "unknown"
	}
	return layerIDs[l]
}

// ID is the stable identifier of the layer the value came from.
func (s Source) ID() string { return s.Layer.ID() }

// String says in words where the value came from: the layer and, for a
// file or a variable, which one ("env REIKA_CONTEXT_WINDOW").
func (s Source) String() string {
	name := ""
	switch s.Layer {
	case Default:
		name = "default"
	case EditorStartup:
		name = "editor startup options"
	case EditorPush:
		name = "editor settings push"
	default:
		return s.Detail
	}
	if s.Detail != "" {
		return name + " (" + s.Detail + ")"
	}
	return name
}

// IsEditor reports whether the value came from the editor, at startup or
// in a push.
func (l Layer) IsEditor() bool { return l == EditorStartup || l == EditorPush }

// TrustKeys are the settings that widen what the agent may do or where
// the workspace's text goes: the engine it is sent to (endpoint, and the
// profile, which chooses the user's endpoint, key and allow list), the key
// sent with it, the commands that run unasked and web fetches. They come
// from the defaults, the user's config file, REIKA_* and the editor's
// startup options only, never from a settings push (README.md,
// "Configuration").
var TrustKeys = []string{"profile", "endpoint", "api_key_env", "fetch", "bash_allow", "sandbox_env", "language_servers"}

// IsTrustKey reports whether key (snake_case) is one of TrustKeys.
func IsTrustKey(key string) bool {
	for _, k := range TrustKeys {
		if k == key {
			return true
		}
	}
	return false
}

// Value is an effective setting and where it came from.
type Value[T any] struct {
	Value  T
	Source Source
}

// IsSet reports whether anything above the built-in default gave the value.
func (v Value[T]) IsSet() bool { return v.Source.Layer != Default }

// Settings are the effective settings.
type Settings struct {
	Profile  Value[string]
	Endpoint Value[string] // empty: probe the usual local ports
	Model    Value[string] // empty: the engine's first model
	// APIKeyEnv is the name of the environment variable holding the API
	// key; the key itself is never stored in a file.
	APIKeyEnv     Value[string]
	ContextWindow Value[int] // 0: discover it
	// CacheClass forces how the engine reuses its prompt cache
	// (contextwin.CacheClass: dense, checkpointed, blocks, boundary,
	// unknown); "" discovers it. SWAWindow is a checkpointed model's
	// sliding window (0: recurrent or hybrid); set alone, it means
	// checkpointed. CacheBlock is a blocks or boundary engine's block in
	// tokens (0: the class's default, else what the engine tells).
	CacheClass Value[string]
	SWAWindow  Value[int]
	CacheBlock Value[int]
	// CheckpointMinStep is llama-server's --checkpoint-min-step as the
	// user started it (0 or unset: its default), so that the planner
	// knows which checkpoints a full slot keeps.
	CheckpointMinStep Value[int]
	MaxTokens         Value[int] // 0: no cap beyond the window
	MinGenTokens      Value[int] // 0: learn the reserve
	RepoMapBudget     Value[int] // unset: 5% of the window; set to 0: no repo map
	// ReasoningTemplate is what the engine's chat template renders of the
	// reasoning sent back (contextwin.ReasoningTemplate: drop, turn, all);
	// unset, discovery reads it from the engine.
	ReasoningTemplate Value[string]
	ReasoningRounds   Value[int]
	Debug             Value[bool]
	Minimal           Value[bool]
	Warmup            Value[bool]
	// ReasoningBack sends the model's reasoning back on the assistant
	// messages of the turn that made it (interleaved thinking in a tool
	// loop), as they were sent until a shrink event; off, reasoning stays
	// in the transcript only.
	ReasoningBack Value[bool]
	// BashAllow lists the commands the agent may run without asking: an
	// entry names a program and optionally its first words, and a command
	// line runs when every command in it is covered by an entry and passes
	// its program's rule (agent/tools, allowlist).
	BashAllow Value[[]string]
	// SandboxEnv names the variables of the user's environment a
	// contained command gets besides those the sandbox passes (the
	// shell's, the locale's, the toolchains'): every other is withheld.
	SandboxEnv Value[[]string]
	// Fetch lets the agent fetch public web pages (never local hosts).
	Fetch Value[bool]
	// LanguageServers are the workspace's language servers the agent
	// asks (agent/langserver): entries "language=command args…" replace
	// the default found on PATH for their language, "language=" turns it
	// off, "off" turns every one off. They start programs, so a
	// workspace's settings never give them.
	LanguageServers Value[[]string]
	// SessionHeaders are the HTTP headers every request of a session
	// names it in, for the routers in front of several engine replicas;
	// ParentSessionHeaders those a subagent's request names its parent's
	// session in; SessionFields the body fields ("user",
	// "prompt_cache_key") that carry the session's id too. Unset, the
	// engine client's defaults (engine.SessionHeaders, …; no field); set
	// to an empty list, none.
	SessionHeaders       Value[[]string]
	ParentSessionHeaders Value[[]string]
	SessionFields        Value[[]string]
	Extra                Value[map[string]any]
	// MCPServers are the MCP servers of the user's config file (mcp.go);
	// nothing else gives them.
	MCPServers Value[[]MCPServer]
	// MCPAllow are the MCP tools whose calls run unasked, from the config
	// file alone as well.
	MCPAllow Value[[]string]
	// ACPMCPAllow are the MCP servers an ACP client offers (mcpServers)
	// that start unasked (ACPServerKey), from the config file alone too.
	ACPMCPAllow Value[[]string]

	// Profiles lists the profiles the file defines, sorted.
	Profiles []string
	// Warnings are values that were ignored, each naming the setting and
	// the fix.
	Warnings []string
	// Overrides say which of the editor's settings replaced a value from
	// the config file or the environment, one sentence each: a user who
	// set a profile should know when the editor overrides it.
	Overrides []string
	// Ignored are the trust-widening values a settings push gave that
	// differ from those in force and were not taken, the profile first.
	Ignored []Ignored
}

// Ignored is a trust-widening value of a settings push that was not
// taken.
type Ignored struct {
	Key   string // snake_case, one of TrustKeys
	Name  string // as the editor spelt it ("bashAllow")
	Value any    // as the editor sent it
	// ConfigPath is the user's config file, for the notice.
	ConfigPath string
}

// Notice is the sentence the user reads, once.
func (ig Ignored) Notice() string {
	file := "your config file"
	if ig.ConfigPath != "" {
		file = displayPath(ig.ConfigPath)
	}
	return fmt.Sprintf("%s from the editor's settings push is ignored: settings that widen trust (%s) come from %s, REIKA_* or the editor's startup options",
		ig.Name, strings.Join(TrustKeys, ", "), file)
}

// DefaultReasoningRounds is how many rounds of reasoning stay in the
// request when no window is known.
const DefaultReasoningRounds = 2

// Profile is one named profile of the config file; its fields are also
// allowed at the file's top level, as defaults for every profile.
type Profile struct {
	Endpoint          string   `json:"endpoint,omitempty"`
	Model             string   `json:"model,omitempty"`
	APIKeyEnv         string   `json:"api_key_env,omitempty"`
	ContextWindow     *int     `json:"context_window,omitempty"`
	CacheClass        string   `json:"cache_class,omitempty"`
	SWAWindow         *int     `json:"swa_window,omitempty"`
	CacheBlock        *int     `json:"cache_block,omitempty"`
	CheckpointMinStep *int     `json:"checkpoint_min_step,omitempty"`
	MaxTokens         *int     `json:"max_tokens,omitempty"`
	MinGenTokens      *int     `json:"min_gen_tokens,omitempty"`
	RepoMapBudget     *int     `json:"repo_map_budget,omitempty"`
	ReasoningTemplate string   `json:"reasoning_template,omitempty"`
	ReasoningRounds   *int     `json:"reasoning_rounds,omitempty"`
	Debug             *bool    `json:"debug,omitempty"`
	Minimal           *bool    `json:"minimal,omitempty"`
	Warmup            *bool    `json:"warmup,omitempty"`
	ReasoningBack     *bool    `json:"reasoning_back,omitempty"`
	BashAllow         []string `json:"bash_allow,omitempty"`
	SandboxEnv        []string `json:"sandbox_env,omitempty"`
	LanguageServers   []string `json:"language_servers,omitempty"`
	// SessionHeaders and the two below are pointers so that an empty
	// list (send none) differs from no setting.
	SessionHeaders       *[]string      `json:"session_headers,omitempty"`
	ParentSessionHeaders *[]string      `json:"parent_session_headers,omitempty"`
	SessionFields        *[]string      `json:"session_fields,omitempty"`
	Fetch                *bool          `json:"fetch,omitempty"`
	Extra                map[string]any `json:"extra,omitempty"`
}

// FileContents is the config file:
//
//	{
//	  "profile": "local",
//	  "context_window": 32768,
//	  "profiles": {
//	    "local":  {"endpoint": "http://127.0.0.1:8080/v1"},
//	    "hosted": {"endpoint": "https://api.openai.com/v1", "model": "gpt-4o",
//	               "api_key_env": "OPENAI_API_KEY"}
//	  }
//	}
type FileContents struct {
	Profile
	ActiveProfile string             `json:"profile,omitempty"`
	Profiles      map[string]Profile `json:"profiles,omitempty"`
	// MCPServers are the MCP servers whose tools the agent gets (mcp.go):
	// at the file's top level only, never in a profile, the environment or
	// the editor's settings.
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
	// MCPAllow lists the MCP tools (mcp__server__tool) whose calls run
	// unasked: those the user answered "always" (AllowMCPAlways).
	MCPAllow []string `json:"mcp_allow,omitempty"`
	// ACPMCPAllow lists the MCP servers an ACP client may start unasked,
	// each as ACPServerKey gives it: those the user answered "always" to
	// (AllowACPServerAlways).
	ACPMCPAllow []string `json:"acp_mcp_allow,omitempty"`
}

// DefaultPath is the config file's path: $REIKA_CONFIG, else
// reika/config.json in the user's config directory ($XDG_CONFIG_HOME or
// ~/.config on Linux).
func DefaultPath(getenv func(string) string) string {
	if p := getenv("REIKA_CONFIG"); p != "" {
		return p
	}
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		d, err := os.UserConfigDir()
		if err != nil {
			return ""
		}
		dir = d
	}
	return filepath.Join(dir, "reika", "config.json")
}

// ReadFile reads the config file at path. A missing file is no error: it
// returns nil contents.
func ReadFile(path string) (*FileContents, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return ParseFile(path, data)
}

// ParseFile decodes config file contents; unknown keys are an error, so
// that a misspelt setting is not silently ignored.
func ParseFile(path string, data []byte) (*FileContents, error) {
	var f FileContents
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("config file %s: %v; see README.md, Configuration", path, err)
	}
	return &f, nil
}

// Inputs are the layers Resolve combines.
type Inputs struct {
	File     *FileContents // nil: no file
	FilePath string
	Env      func(string) string // nil: no environment
	// Editor holds the editor's startup options (initializationOptions),
	// keyed as in the file ("endpoint", "context_window", …; camelCase
	// "contextWindow" is accepted too), optionally in a "reika" section.
	Editor map[string]any
	// Pushed holds the editor's settings pushes (didChangeConfiguration),
	// keyed the same way; they win over Editor, but for TrustKeys, which
	// they never give.
	Pushed map[string]any
}

// Resolve combines the layers into effective settings.
func Resolve(in Inputs) *Settings {
	env := in.Env
	if env == nil {
		env = func(string) string { return "" }
	}
	r := &resolver{s: &Settings{}}
	s := r.s
	s.ReasoningRounds = Value[int]{DefaultReasoningRounds, Source{Layer: Default}}
	s.Warmup = Value[bool]{true, Source{Layer: Default}}
	s.ReasoningBack = Value[bool]{true, Source{Layer: Default}}
	editor := normaliseKeys(in.Editor)
	pushed, spelt := normaliseKeysSpelt(in.Pushed)

	// The profile comes first: it decides which file section and which
	// per-profile variables apply.
	chosen := r.chooseProfile(in, env, editor, pushed, spelt)
	profile := s.Profile.Value
	// File layers: top level, then the active profile.
	if in.File != nil {
		r.applyProfile(in.File.Profile, fileSource(in.FilePath, ""))
		if p, ok := in.File.Profiles[profile]; ok {
			r.applyProfile(p, fileSource(in.FilePath, "profile "+profile))
		}
	}
	// Environment: the global variable, then the profile's own.
	for _, st := range settingsTable {
		names := []string{st.env}
		if profile != "" {
			names = append(names, st.env+"_"+envSuffix(profile))
		}
		for _, name := range names {
			if v := env(name); v != "" {
				r.setText(st, v, Source{Env, "env " + name})
			}
		}
	}
	r.applyEditor(in.FilePath, editor, pushed, spelt, chosen)
	r.applyMCP(in, editor, pushed)
	return s
}

// chooseProfile sets the active profile — the file's, then REIKA_PROFILE,
// then the editor's startup options; never a push's — and warns when it
// names none the file defines. It returns the profile chosen without the
// editor.
func (r *resolver) chooseProfile(in Inputs, env func(string) string, editor, pushed map[string]any, spelt map[string]string) Value[string] {
	s := r.s
	s.Profile = Value[string]{"", Source{Layer: Default}}
	if in.File != nil {
		for name := range in.File.Profiles {
			s.Profiles = append(s.Profiles, name)
		}
		sort.Strings(s.Profiles)
		switch {
		case in.File.ActiveProfile != "":
			s.Profile = Value[string]{in.File.ActiveProfile, fileSource(in.FilePath, "profile")}
		case len(s.Profiles) == 1:
			s.Profile = Value[string]{s.Profiles[0], fileSource(in.FilePath, "the only profile")}
		case hasProfile(in.File, "default"):
			s.Profile = Value[string]{"default", fileSource(in.FilePath, "profile")}
		}
	}
	if v := env("REIKA_PROFILE"); v != "" {
		s.Profile = Value[string]{v, Source{Env, "env REIKA_PROFILE"}}
	}
	chosen := s.Profile
	if v, ok := editor["profile"].(string); ok && v != "" {
		s.Profile = Value[string]{v, Source{Layer: EditorStartup}}
	}
	if v, ok := pushed["profile"].(string); ok && v != "" && v != s.Profile.Value {
		r.ignore("profile", spelt["profile"], v, in.FilePath)
	}
	profile := s.Profile.Value
	if profile != "" && in.File != nil && !hasProfile(in.File, profile) {
		r.warn("profile %q is not defined in %s (it defines %s); using the file's top-level settings",
			profile, displayPath(in.FilePath), listOrNone(s.Profiles))
	} else if profile != "" && in.File == nil && s.Profile.Source.Layer != Default {
		r.warn("profile %q is selected but there is no config file at %s", profile, displayPath(in.FilePath))
	}
	return chosen
}

// applyEditor applies the editor's layers, its startup options then its
// pushes (but for the trust keys, which a push never gives), and records
// where the editor overrides the file or the environment. chosen is the
// profile the layers below the editor chose.
func (r *resolver) applyEditor(filePath string, editor, pushed map[string]any, spelt map[string]string, chosen Value[string]) {
	s := r.s
	before := map[string]Source{}
	values := map[string]any{}
	s.Each(func(key string, v any, src Source) { before[key], values[key] = src, v })
	if s.Profile.Source.Layer.IsEditor() && chosen.Source.Layer != Default && chosen.Value != s.Profile.Value {
		r.override("profile", s.Profile.Value, chosen.Value, chosen.Source)
	}
	for _, st := range settingsTable {
		if v, ok := editor[st.key]; ok && v != nil {
			r.setAny(st, v, Source{Layer: EditorStartup})
		}
	}
	for _, st := range settingsTable {
		v, ok := pushed[st.key]
		if !ok || v == nil {
			continue
		}
		if IsTrustKey(st.key) {
			if r.wouldChange(st, v) {
				r.ignore(st.key, spelt[st.key], v, filePath)
			}
			continue
		}
		r.setAny(st, v, Source{Layer: EditorPush})
	}
	s.Each(func(key string, v any, src Source) {
		if was := before[key]; key != "profile" && src.Layer.IsEditor() && (was.Layer == File || was.Layer == Env) &&
			!reflect.DeepEqual(v, values[key]) {
			r.override(key, v, values[key], was)
		}
	})
	for _, e := range []struct {
		m     map[string]any
		layer Layer
	}{{editor, EditorStartup}, {pushed, EditorPush}} {
		if v, ok := e.m["extra"]; ok {
			if m, ok := v.(map[string]any); ok {
				s.Extra = Value[map[string]any]{m, Source{Layer: e.layer}}
			} else {
				r.warn("editor setting extra must be an object of request fields; ignored")
			}
		}
	}
}

func hasProfile(f *FileContents, name string) bool {
	_, ok := f.Profiles[name]
	return ok
}

func fileSource(path, detail string) Source {
	d := "file " + displayPath(path)
	if detail != "" {
		d += " (" + detail + ")"
	}
	return Source{File, d}
}

// displayPath shortens the home directory to ~ for messages.
func displayPath(p string) string {
	if p == "" {
		return "(none)"
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(p, home+string(filepath.Separator)) {
		return "~" + p[len(home):]
	}
	return p
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// envSuffix turns a profile name into the suffix of its variables:
// "my-box" → "MY_BOX".
func envSuffix(profile string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(profile) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// normaliseKeys accepts the editor's camelCase keys ("contextWindow") as
// well as the file's snake_case ones, and a nested "reika" section.
func normaliseKeys(m map[string]any) map[string]any {
	out, _ := normaliseKeysSpelt(m)
	return out
}

// normaliseKeysSpelt is normaliseKeys, and the editor's spelling of each
// key.
func normaliseKeysSpelt(m map[string]any) (out map[string]any, spelt map[string]string) {
	if inner, ok := m["reika"].(map[string]any); ok {
		m = inner
	}
	out, spelt = make(map[string]any, len(m)), make(map[string]string, len(m))
	for k, v := range m {
		out[snakeCase(k)], spelt[snakeCase(k)] = v, k
	}
	return out, spelt
}

func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r - 'A' + 'a')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
