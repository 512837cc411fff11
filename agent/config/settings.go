package config

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// setting describes one setting: its key in the file and the editor, its
// environment variable, and how a value is checked.
type setting struct {
	key  string // snake_case, as in the file
	env  string
	kind kind
	// min and max bound an integer setting; 0 for max means no bound.
	min, max int
	// hint says what a good value looks like, for warnings.
	hint string
}

type kind int

const (
	kindString kind = iota
	kindURL
	kindInt
	kindBool
	kindList
)

var settingsTable = []setting{
	{key: "endpoint", env: "REIKA_ENDPOINT", kind: kindURL, hint: "an http(s) URL such as http://127.0.0.1:8080/v1"},
	{key: "model", env: "REIKA_MODEL", kind: kindString},
	{key: "api_key_env", env: "REIKA_API_KEY_ENV", kind: kindString, hint: "the name of an environment variable, such as OPENAI_API_KEY"},
	{key: "context_window", env: "REIKA_CONTEXT_WINDOW", kind: kindInt, min: contextwin.MinWindow, max: contextwin.MaxWindow,
		hint: fmt.Sprintf("a whole number of tokens between %d and %d, such as 32768", contextwin.MinWindow, contextwin.MaxWindow)},
	{key: "cache_class", env: "REIKA_CACHE_CLASS", kind: kindString, hint: "dense, checkpointed, blocks, boundary or unknown"},
	{key: "swa_window", env: "REIKA_SWA_WINDOW", kind: kindInt, min: 0, max: contextwin.MaxWindow,
		hint: "the model's sliding window in tokens, such as 1024; 0 for a recurrent or hybrid model"},
	{key: "cache_block", env: "REIKA_CACHE_BLOCK", kind: kindInt, min: 0, max: 1 << 16,
		hint: "the engine's cache block in tokens, such as 528 (what vLLM logs as its attention block size for a hybrid model); 0 for the class's default"},
	{key: "checkpoint_min_step", env: "REIKA_CHECKPOINT_MIN_STEP", kind: kindInt, min: 0, max: contextwin.MaxWindow,
		hint: "llama-server's --checkpoint-min-step in tokens, such as 1024; 0 for its default"},
	{key: "max_tokens", env: "REIKA_MAX_TOKENS", kind: kindInt, min: 1, max: contextwin.MaxWindow, hint: "a positive number of tokens"},
	{key: "min_gen_tokens", env: "REIKA_MIN_GEN_TOKENS", kind: kindInt, min: 1, max: contextwin.MaxWindow, hint: "a positive number of tokens, such as 4096"},
	{key: "repo_map_budget", env: "REIKA_REPO_MAP_BUDGET", kind: kindInt, min: 0, max: 1_000_000, hint: "a number of characters; 0 leaves the map out"},
	{key: "reasoning_template", env: "REIKA_REASONING_TEMPLATE", kind: kindString, hint: "drop, turn or all"},
	{key: "reasoning_rounds", env: "REIKA_REASONING_ROUNDS", kind: kindInt, min: 0, max: 1000, hint: "a number of rounds, such as 2"},
	{key: "debug", env: "REIKA_DEBUG", kind: kindBool, hint: "1 or 0"},
	{key: "minimal", env: "REIKA_MINIMAL", kind: kindBool, hint: "1 or 0"},
	{key: "warmup", env: "REIKA_WARMUP", kind: kindBool, hint: "1 or 0"},
	{key: "reasoning_back", env: "REIKA_REASONING_BACK", kind: kindBool, hint: "1 or 0"},
	{key: "fetch", env: "REIKA_FETCH", kind: kindBool, hint: "1 or 0"},
	{key: "bash_allow", env: "REIKA_BASH_ALLOW", kind: kindList, hint: "a list of command prefixes (in the environment, separated by commas)"},
	{key: "sandbox_env", env: "REIKA_SANDBOX_ENV", kind: kindList, hint: "a list of variable names (in the environment, separated by commas)"},
	{key: "session_headers", env: "REIKA_SESSION_HEADERS", kind: kindList,
		hint: `a list of HTTP header names such as "x-session-id" ([] sends none; in the environment, separated by commas)`},
	{key: "parent_session_headers", env: "REIKA_PARENT_SESSION_HEADERS", kind: kindList,
		hint: `a list of HTTP header names such as "X-Dynamo-Parent-Session-ID" ([] sends none; in the environment, separated by commas)`},
	{key: "session_fields", env: "REIKA_SESSION_FIELDS", kind: kindList,
		hint: `a list of request body fields among "user" and "prompt_cache_key" (in the environment, separated by commas)`},
	{key: "language_servers", env: "REIKA_LANGUAGE_SERVERS", kind: kindList,
		hint: `a list of "language=command args" entries such as "go=gopls" ("language=" turns one off, "off" all; in the environment, separated by commas)`},
}

type resolver struct{ s *Settings }

func (r *resolver) warn(format string, args ...any) {
	r.s.Warnings = append(r.s.Warnings, fmt.Sprintf(format, args...))
}

func (r *resolver) applyProfile(p Profile, src Source) {
	set := func(key string, v any) {
		for _, st := range settingsTable {
			if st.key == key {
				r.setAny(st, v, src)
				return
			}
		}
	}
	if p.Endpoint != "" {
		set("endpoint", p.Endpoint)
	}
	if p.Model != "" {
		set("model", p.Model)
	}
	if p.APIKeyEnv != "" {
		set("api_key_env", p.APIKeyEnv)
	}
	if p.CacheClass != "" {
		set("cache_class", p.CacheClass)
	}
	if p.ReasoningTemplate != "" {
		set("reasoning_template", p.ReasoningTemplate)
	}
	for _, f := range []struct {
		key string
		v   *int
	}{
		{"context_window", p.ContextWindow}, {"swa_window", p.SWAWindow}, {"cache_block", p.CacheBlock}, {"checkpoint_min_step", p.CheckpointMinStep}, {"max_tokens", p.MaxTokens}, {"min_gen_tokens", p.MinGenTokens},
		{"repo_map_budget", p.RepoMapBudget}, {"reasoning_rounds", p.ReasoningRounds},
	} {
		if f.v != nil {
			set(f.key, *f.v)
		}
	}
	for _, f := range []struct {
		key string
		v   *bool
	}{{"debug", p.Debug}, {"minimal", p.Minimal}, {"warmup", p.Warmup}, {"reasoning_back", p.ReasoningBack}, {"fetch", p.Fetch}} {
		if f.v != nil {
			set(f.key, *f.v)
		}
	}
	if p.SandboxEnv != nil {
		set("sandbox_env", toAny(p.SandboxEnv))
	}
	if p.BashAllow != nil {
		set("bash_allow", toAny(p.BashAllow))
	}
	if p.LanguageServers != nil {
		set("language_servers", toAny(p.LanguageServers))
	}
	for _, f := range []struct {
		key string
		v   *[]string
	}{{"session_headers", p.SessionHeaders}, {"parent_session_headers", p.ParentSessionHeaders}, {"session_fields", p.SessionFields}} {
		if f.v != nil {
			set(f.key, toAny(*f.v))
		}
	}
	if p.Extra != nil {
		r.s.Extra = Value[map[string]any]{p.Extra, src}
	}
}

// wouldChange reports whether v, taken for st, would change the value in
// force: a push that repeats the startup options' or the file's value
// (Neovim and Helix push what they sent at startup) ignores nothing.
func (r *resolver) wouldChange(st setting, v any) bool {
	scratch := *r.s
	scratch.Warnings = nil
	(&resolver{s: &scratch}).setAny(st, v, Source{Layer: EditorPush})
	return !reflect.DeepEqual(scratch.Values()[st.key], r.s.Values()[st.key])
}

// ignore records a trust-widening value of a push that is not taken.
func (r *resolver) ignore(key, name string, v any, configPath string) {
	if name == "" {
		name = key
	}
	r.s.Ignored = append(r.s.Ignored, Ignored{Key: key, Name: name, Value: v, ConfigPath: configPath})
}

// override notes that the editor's value of a setting replaced one from
// the file or the environment.
func (r *resolver) override(key string, now, was any, src Source) {
	r.s.Overrides = append(r.s.Overrides, fmt.Sprintf("%s: the editor's %v overrides %v from %s", key, show(now), show(was), src))
}

// show prints a setting's value for a message.
func show(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case []string:
		return strconv.Quote(strings.Join(v, ", "))
	case map[string]any:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return fmt.Sprint(v)
}

// setText applies a value given as text (an environment variable).
func (r *resolver) setText(st setting, text string, src Source) {
	text = strings.TrimSpace(text)
	switch st.kind {
	case kindInt:
		n, err := strconv.Atoi(strings.ReplaceAll(text, "_", ""))
		if err != nil {
			r.warn("%s=%q is not %s; ignored", strings.TrimPrefix(src.Detail, "env "), text, st.hint)
			return
		}
		r.setInt(st, n, src)
	case kindList:
		var list []string
		for _, item := range strings.Split(text, ",") {
			if item = strings.TrimSpace(item); item != "" {
				list = append(list, item)
			}
		}
		r.setList(st, list, src)
	case kindBool:
		b, ok := parseBool(text)
		if !ok {
			r.warn("%s=%q is not %s; ignored", strings.TrimPrefix(src.Detail, "env "), text, st.hint)
			return
		}
		r.setBool(st, b, src)
	default:
		r.setString(st, text, src)
	}
}

// setAny applies a value decoded from JSON (the file or the editor).
func (r *resolver) setAny(st setting, v any, src Source) {
	name := st.key + " (" + src.String() + ")"
	switch st.kind {
	case kindInt:
		switch n := v.(type) {
		case int:
			r.setInt(st, n, src)
		case float64:
			if n != math.Trunc(n) || math.Abs(n) > 1e15 {
				r.warn("%s = %v is not %s; ignored", name, v, st.hint)
				return
			}
			r.setInt(st, int(n), src)
		case string:
			r.setText(st, n, src)
		default:
			r.warn("%s = %v is not %s; ignored", name, v, st.hint)
		}
	case kindList:
		items, ok := v.([]any)
		if !ok {
			r.warn("%s = %v is not %s; ignored", name, v, st.hint)
			return
		}
		var list []string
		for _, it := range items {
			str, ok := it.(string)
			if !ok || strings.TrimSpace(str) == "" {
				r.warn("%s holds %v, which is not a command; ignored", name, it)
				return
			}
			list = append(list, strings.TrimSpace(str))
		}
		r.setList(st, list, src)
	case kindBool:
		switch b := v.(type) {
		case bool:
			r.setBool(st, b, src)
		case string:
			r.setText(st, b, src)
		default:
			r.warn("%s = %v is not %s; ignored", name, v, st.hint)
		}
	default:
		s, ok := v.(string)
		if !ok {
			r.warn("%s = %v is not a string; ignored", name, v)
			return
		}
		r.setString(st, s, src)
	}
}

func (r *resolver) setInt(st setting, n int, src Source) {
	if n < st.min || st.max > 0 && n > st.max {
		r.warn("%s = %d is out of range: want %s; ignored", describe(st, src), n, st.hint)
		return
	}
	v := Value[int]{n, src}
	switch st.key {
	case "context_window":
		r.s.ContextWindow = v
	case "swa_window":
		r.s.SWAWindow = v
	case "cache_block":
		r.s.CacheBlock = v
	case "checkpoint_min_step":
		r.s.CheckpointMinStep = v
	case "max_tokens":
		r.s.MaxTokens = v
	case "min_gen_tokens":
		r.s.MinGenTokens = v
	case "repo_map_budget":
		r.s.RepoMapBudget = v
	case "reasoning_rounds":
		r.s.ReasoningRounds = v
	}
}

func (r *resolver) setBool(st setting, b bool, src Source) {
	v := Value[bool]{b, src}
	switch st.key {
	case "debug":
		r.s.Debug = v
	case "minimal":
		r.s.Minimal = v
	case "warmup":
		r.s.Warmup = v
	case "reasoning_back":
		r.s.ReasoningBack = v
	case "fetch":
		r.s.Fetch = v
	}
}

func (r *resolver) setList(st setting, list []string, src Source) {
	switch st.key {
	case "bash_allow":
		r.s.BashAllow = Value[[]string]{list, src}
	case "sandbox_env":
		r.s.SandboxEnv = Value[[]string]{list, src}
	case "language_servers":
		r.s.LanguageServers = Value[[]string]{list, src}
	case "session_headers", "parent_session_headers", "session_fields":
		r.setIdentity(st, list, src)
	}
}

// setIdentity sets one of the lists that name a session to the
// engine's routers: header names must be HTTP tokens, fields "user" or
// "prompt_cache_key". An empty list is kept as one: it sends none.
func (r *resolver) setIdentity(st setting, list []string, src Source) {
	for _, v := range list {
		if st.key == "session_fields" && v != "user" && v != "prompt_cache_key" || st.key != "session_fields" && !headerName(v) {
			r.warn("%s holds %q: want %s; ignored", describe(st, src), v, st.hint)
			return
		}
	}
	if list == nil {
		list = []string{}
	}
	v := Value[[]string]{list, src}
	switch st.key {
	case "session_headers":
		r.s.SessionHeaders = v
	case "parent_session_headers":
		r.s.ParentSessionHeaders = v
	default:
		r.s.SessionFields = v
	}
}

// headerName reports whether s is an HTTP header name (an RFC 9110
// token) that a request may carry a session's id in: not one the client
// itself sends (the key's Authorization among them).
func headerName(s string) bool {
	switch strings.ToLower(s) {
	case "", "authorization", "content-type", "content-length", "host", "accept", "accept-encoding", "cookie", "transfer-encoding", "connection", "user-agent":
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

func toAny(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

func (r *resolver) setString(st setting, s string, src Source) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	switch st.key {
	case "endpoint":
		u, note, err := NormalizeEndpoint(s)
		if err != nil {
			r.warn("%s: %v; want %s; ignored", describe(st, src), err, st.hint)
			return
		}
		if note != "" {
			src.Detail += " (" + note + ")"
		}
		r.s.Endpoint = Value[string]{u, src}
	case "model":
		r.s.Model = Value[string]{s, src}
	case "cache_class":
		c, err := contextwin.ParseCacheClass(s)
		if err != nil {
			r.warn("%s = %q is not %s; ignored", describe(st, src), s, st.hint)
			return
		}
		r.s.CacheClass = Value[string]{string(c), src}
	case "reasoning_template":
		t, err := contextwin.ParseReasoningTemplate(s)
		if err != nil {
			r.warn("%s = %q is not %s; ignored", describe(st, src), s, st.hint)
			return
		}
		r.s.ReasoningTemplate = Value[string]{string(t), src}
	case "api_key_env":
		if strings.ContainsAny(s, " =") || len(s) > 100 {
			r.warn("%s must name an environment variable, not hold the key itself; ignored", describe(st, src))
			return
		}
		r.s.APIKeyEnv = Value[string]{s, src}
	}
}

func describe(st setting, src Source) string {
	if src.Layer == Env {
		return strings.TrimPrefix(src.Detail, "env ")
	}
	return st.key + " (" + src.String() + ")"
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off":
		return false, true
	}
	return false, false
}

// NormalizeEndpoint checks an endpoint URL and puts it in the form the
// client wants: a scheme (http:// is added to a bare host:port), no
// trailing slash, and /v1 when no path was given. The note says what was
// added, if anything.
func NormalizeEndpoint(raw string) (endpoint, note string, err error) {
	s := strings.TrimSpace(raw)
	var notes []string
	if !strings.Contains(s, "://") {
		s = "http://" + s
		notes = append(notes, "http:// added")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", "", fmt.Errorf("%q is not a URL", raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", "", fmt.Errorf("%q: scheme %q is not http or https", raw, u.Scheme)
	}
	if u.Hostname() == "" {
		return "", "", fmt.Errorf("%q has no host", raw)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", "", fmt.Errorf("%q: port %q is not a port number", raw, p)
		}
	}
	if u.User != nil {
		return "", "", fmt.Errorf("%q carries credentials; put the key in an environment variable and name it in api_key_env", raw)
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimRight(u.Path, "/")
	if u.Path == "" {
		u.Path = "/v1"
		notes = append(notes, "/v1 added")
	}
	u.RawPath = ""
	return u.String(), strings.Join(notes, ", "), nil
}

// APIKey returns the key from the variable the settings name, if any.
func (s *Settings) APIKey(getenv func(string) string) string {
	if s.APIKeyEnv.Value == "" || getenv == nil {
		return ""
	}
	return strings.TrimSpace(getenv(s.APIKeyEnv.Value))
}

// Changes lists the settings whose values differ in next, in Each's order,
// as "context_window 16384 → 32768".
func (s *Settings) Changes(next *Settings) []string {
	was := s.Values()
	var changed []string
	next.Each(func(key string, v any, _ Source) {
		if !reflect.DeepEqual(was[key], v) {
			changed = append(changed, fmt.Sprintf("%s %s → %s", key, show(was[key]), show(v)))
		}
	})
	return changed
}

// Values are the settings' values by key, as Each lists them.
func (s *Settings) Values() map[string]any {
	m := map[string]any{}
	s.Each(func(key string, v any, _ Source) { m[key] = v })
	return m
}

// Each lists every setting with its value and source, in a fixed order,
// for reports.
func (s *Settings) Each(f func(key string, value any, src Source)) {
	f("profile", s.Profile.Value, s.Profile.Source)
	f("endpoint", s.Endpoint.Value, s.Endpoint.Source)
	f("model", s.Model.Value, s.Model.Source)
	f("api_key_env", s.APIKeyEnv.Value, s.APIKeyEnv.Source)
	f("context_window", s.ContextWindow.Value, s.ContextWindow.Source)
	f("cache_class", s.CacheClass.Value, s.CacheClass.Source)
	f("swa_window", s.SWAWindow.Value, s.SWAWindow.Source)
	f("cache_block", s.CacheBlock.Value, s.CacheBlock.Source)
	f("checkpoint_min_step", s.CheckpointMinStep.Value, s.CheckpointMinStep.Source)
	f("max_tokens", s.MaxTokens.Value, s.MaxTokens.Source)
	f("min_gen_tokens", s.MinGenTokens.Value, s.MinGenTokens.Source)
	f("repo_map_budget", s.RepoMapBudget.Value, s.RepoMapBudget.Source)
	f("reasoning_template", s.ReasoningTemplate.Value, s.ReasoningTemplate.Source)
	f("reasoning_rounds", s.ReasoningRounds.Value, s.ReasoningRounds.Source)
	f("debug", s.Debug.Value, s.Debug.Source)
	f("minimal", s.Minimal.Value, s.Minimal.Source)
	f("warmup", s.Warmup.Value, s.Warmup.Source)
	f("reasoning_back", s.ReasoningBack.Value, s.ReasoningBack.Source)
	f("fetch", s.Fetch.Value, s.Fetch.Source)
	f("bash_allow", s.BashAllow.Value, s.BashAllow.Source)
	f("sandbox_env", s.SandboxEnv.Value, s.SandboxEnv.Source)
	f("language_servers", s.LanguageServers.Value, s.LanguageServers.Source)
	f("session_headers", s.SessionHeaders.Value, s.SessionHeaders.Source)
	f("parent_session_headers", s.ParentSessionHeaders.Value, s.ParentSessionHeaders.Source)
	f("session_fields", s.SessionFields.Value, s.SessionFields.Source)
	f("extra", s.Extra.Value, s.Extra.Source)
}

// CacheModel is the cache model the settings force and the layer that
// gave it: cache_class, with swa_window as a checkpointed model's window
// and cache_block as a blocks or boundary engine's block;
// swa_window alone means a checkpointed model of that window. ok is false
// when neither is set: discovery decides.
func (s *Settings) CacheModel() (m contextwin.CacheModel, src Source, ok bool) {
	switch {
	case s.CacheClass.IsSet() && s.CacheClass.Value != "":
		m.Class, src = contextwin.CacheClass(s.CacheClass.Value), s.CacheClass.Source
	case s.SWAWindow.IsSet():
		m.Class, src = contextwin.CacheCheckpointed, s.SWAWindow.Source
	default:
		return m, src, false
	}
	if m.Class == contextwin.CacheCheckpointed && s.SWAWindow.IsSet() {
		m.SWA = s.SWAWindow.Value
	}
	if (m.Class == contextwin.CacheBlocks || m.Class == contextwin.CacheBoundary) && s.CacheBlock.IsSet() {
		m.Block = s.CacheBlock.Value
	}
	return m, src, true
}
