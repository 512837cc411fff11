package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const sampleFile = `{
  "profile": "local",
  "context_window": 16384,
  "profiles": {
    "local":  {"endpoint": "http://127.0.0.1:8080/v1", "max_tokens": 4096},
    "box":    {"endpoint": "gpu-box:8000", "model": "Qwen/Qwen2.5-Coder-32B", "context_window": 32768},
    "hosted": {"endpoint": "https://api.openai.com/v1", "model": "gpt-4o", "api_key_env": "OPENAI_API_KEY",
               "extra": {"top_p": 0.9}}
  }
}`

func mustParse(t *testing.T) *FileContents {
	t.Helper()
	f, err := ParseFile("/cfg/reika/config.json", []byte(sampleFile))
	if err != nil {
		t.Fatalf("ParseFile: %v", err)
	}
	return f
}

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestResolveLayers(t *testing.T) {
	f := mustParse(t)
	for _, tc := range []struct {
		name   string
		env    func(string) string
		editor map[string]any
		check  func(t *testing.T, s *Settings)
	}{
		{
			name: "file profile and top level",
			check: func(t *testing.T, s *Settings) {
				want(t, "profile", s.Profile.Value, "local")
				want(t, "endpoint", s.Endpoint.Value, "http://127.0.0.1:8080/v1")
				want(t, "endpoint source", s.Endpoint.Source.String(), "file /cfg/reika/config.json (profile local)")
				want(t, "window", s.ContextWindow.Value, 16384)
				want(t, "window source", s.ContextWindow.Source.String(), "file /cfg/reika/config.json")
				want(t, "max tokens", s.MaxTokens.Value, 4096)
				want(t, "reasoning rounds source", s.ReasoningRounds.Source.String(), "default")
			},
		},
		{
			name: "REIKA_PROFILE picks another profile, whose window beats the top level",
			env:  envOf("REIKA_PROFILE", "box"),
			check: func(t *testing.T, s *Settings) {
				want(t, "profile source", s.Profile.Source.String(), "env REIKA_PROFILE")
				want(t, "endpoint", s.Endpoint.Value, "http://gpu-box:8000/v1")
				want(t, "endpoint source", s.Endpoint.Source.String(), "file /cfg/reika/config.json (profile box) (http:// added, /v1 added)")
				want(t, "window", s.ContextWindow.Value, 32768)
				want(t, "max tokens", s.MaxTokens.Value, 0)
			},
		},
		{
			name: "global environment beats the file",
			env:  envOf("REIKA_CONTEXT_WINDOW", "24000", "REIKA_ENDPOINT", "http://127.0.0.1:9999/v1/", "REIKA_DEBUG", "1"),
			check: func(t *testing.T, s *Settings) {
				want(t, "window", s.ContextWindow.Value, 24000)
				want(t, "window source", s.ContextWindow.Source.String(), "env REIKA_CONTEXT_WINDOW")
				want(t, "endpoint", s.Endpoint.Value, "http://127.0.0.1:9999/v1")
				want(t, "debug", s.Debug.Value, true)
			},
		},
		{
			name: "the profile's variable beats the global one",
			env:  envOf("REIKA_CONTEXT_WINDOW", "24000", "REIKA_CONTEXT_WINDOW_LOCAL", "12000"),
			check: func(t *testing.T, s *Settings) {
				want(t, "window", s.ContextWindow.Value, 12000)
				want(t, "window source", s.ContextWindow.Source.String(), "env REIKA_CONTEXT_WINDOW_LOCAL")
			},
		},
		{
			name:   "the editor beats everything, camelCase accepted",
			env:    envOf("REIKA_CONTEXT_WINDOW", "24000"),
			editor: map[string]any{"contextWindow": float64(20000), "profile": "hosted"},
			check: func(t *testing.T, s *Settings) {
				want(t, "window", s.ContextWindow.Value, 20000)
				want(t, "window source", s.ContextWindow.Source.String(), "editor startup options")
				want(t, "model", s.Model.Value, "gpt-4o")
				want(t, "api key env", s.APIKeyEnv.Value, "OPENAI_API_KEY")
				want(t, "extra top_p", s.Extra.Value["top_p"], any(0.9))
				want(t, "overrides", strings.Join(s.Overrides, "; "),
					`profile: the editor's "hosted" overrides "local" from file /cfg/reika/config.json (profile); context_window: the editor's 20000 overrides 24000 from env REIKA_CONTEXT_WINDOW`)
			},
		},
		{
			name: "absurd windows are ignored with a warning naming the setting",
			env:  envOf("REIKA_CONTEXT_WINDOW", "0"),
			check: func(t *testing.T, s *Settings) {
				want(t, "window", s.ContextWindow.Value, 16384)
				wantWarning(t, s, "REIKA_CONTEXT_WINDOW = 0 is out of range")
			},
		},
		{
			name: "negative window",
			env:  envOf("REIKA_CONTEXT_WINDOW", "-5"),
			check: func(t *testing.T, s *Settings) {
				want(t, "window", s.ContextWindow.Value, 16384)
				wantWarning(t, s, "REIKA_CONTEXT_WINDOW = -5 is out of range")
			},
		},
		{
			name: "window over ten million",
			env:  envOf("REIKA_CONTEXT_WINDOW", "50000000"),
			check: func(t *testing.T, s *Settings) {
				want(t, "window", s.ContextWindow.Value, 16384)
				wantWarning(t, s, "REIKA_CONTEXT_WINDOW = 50000000 is out of range")
			},
		},
		{
			name: "a window that is not a number",
			env:  envOf("REIKA_CONTEXT_WINDOW", "32k"),
			check: func(t *testing.T, s *Settings) {
				wantWarning(t, s, `REIKA_CONTEXT_WINDOW="32k" is not a whole number of tokens`)
			},
		},
		{
			name: "a bad endpoint keeps the file's",
			env:  envOf("REIKA_ENDPOINT", "ftp://x"),
			check: func(t *testing.T, s *Settings) {
				want(t, "endpoint", s.Endpoint.Value, "http://127.0.0.1:8080/v1")
				wantWarning(t, s, `REIKA_ENDPOINT: "ftp://x": scheme "ftp" is not http or https`)
			},
		},
		{
			name: "an unknown profile is reported",
			env:  envOf("REIKA_PROFILE", "nope"),
			check: func(t *testing.T, s *Settings) {
				want(t, "window", s.ContextWindow.Value, 16384)
				wantWarning(t, s, `profile "nope" is not defined in /cfg/reika/config.json (it defines box, hosted, local)`)
			},
		},
		{
			name: "lists: the bash allowlist from the environment and the editor",
			env:  envOf("REIKA_BASH_ALLOW", "go test, make check ,"),
			check: func(t *testing.T, s *Settings) {
				want(t, "allow", strings.Join(s.BashAllow.Value, "|"), "go test|make check")
				want(t, "allow source", s.BashAllow.Source.String(), "env REIKA_BASH_ALLOW")
			},
		},
		{
			name:   "the editor's allowlist",
			editor: map[string]any{"bashAllow": []any{"npm test"}, "fetch": true},
			check: func(t *testing.T, s *Settings) {
				want(t, "allow", strings.Join(s.BashAllow.Value, "|"), "npm test")
				want(t, "fetch", s.Fetch.Value, true)
			},
		},
		{
			name: "a key instead of a variable name",
			env:  envOf("REIKA_API_KEY_ENV", "sk-abc def"),
			check: func(t *testing.T, s *Settings) {
				wantWarning(t, s, "must name an environment variable")
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Resolve(Inputs{File: f, FilePath: "/cfg/reika/config.json", Env: tc.env, Editor: tc.editor})
			tc.check(t, s)
		})
	}
}

func TestResolveNothing(t *testing.T) {
	s := Resolve(Inputs{})
	if s.Endpoint.Value != "" || s.Endpoint.IsSet() {
		t.Errorf("Resolve(nothing).Endpoint = %+v, want unset", s.Endpoint)
	}
	if s.ContextWindow.Value != 0 {
		t.Errorf("Resolve(nothing).ContextWindow = %d, want 0", s.ContextWindow.Value)
	}
	if !s.Warmup.Value {
		t.Errorf("Resolve(nothing).Warmup = false, want true")
	}
	if !s.ReasoningBack.Value {
		t.Errorf("Resolve(nothing).ReasoningBack = false, want true")
	}
	if len(s.Warnings) != 0 {
		t.Errorf("Resolve(nothing).Warnings = %q, want none", s.Warnings)
	}
}

func TestParseFileRejectsUnknownKeys(t *testing.T) {
	_, err := ParseFile("c.json", []byte(`{"contextwindow": 8192}`))
	if err == nil || !strings.Contains(err.Error(), `unknown field "contextwindow"`) {
		t.Errorf("ParseFile(misspelt key) error = %v, want one naming the field", err)
	}
	_, err = ParseFile("c.json", []byte(`{"profiles": `))
	if err == nil {
		t.Errorf("ParseFile(truncated) error = nil, want one")
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	if f, err := ReadFile(filepath.Join(dir, "missing.json")); f != nil || err != nil {
		t.Errorf("ReadFile(missing) = %v, %v; want nil, nil", f, err)
	}
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, []byte(sampleFile), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(p)
	if err != nil || f == nil || len(f.Profiles) != 3 {
		t.Fatalf("ReadFile = %v, %v; want three profiles", f, err)
	}
}

func TestDefaultPath(t *testing.T) {
	if got := DefaultPath(envOf("REIKA_CONFIG", "/x/c.json")); got != "/x/c.json" {
		t.Errorf("DefaultPath(REIKA_CONFIG) = %q, want /x/c.json", got)
	}
	if got := DefaultPath(envOf("XDG_CONFIG_HOME", "/xdg")); got != "/xdg/reika/config.json" {
		t.Errorf("DefaultPath(XDG_CONFIG_HOME) = %q, want /xdg/reika/config.json", got)
	}
}

func TestNormalizeEndpoint(t *testing.T) {
	for _, tc := range []struct{ in, want, note, err string }{
		{"http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1", "", ""},
		{"http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1", "", ""},
		{"127.0.0.1:8080", "http://127.0.0.1:8080/v1", "http:// added, /v1 added", ""},
		{"https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1", "", ""},
		{"http://localhost:11434", "http://localhost:11434/v1", "/v1 added", ""},
		{"http://[::1]:8080/v1?x=1", "http://[::1]:8080/v1", "", ""},
		{"http://:8080", "", "", "has no host"},
		{"http://127.0.0.1:99999/v1", "", "", "is not a port number"},
		{"http://user:pw@host/v1", "", "", "carries credentials"},
		{"unix:///tmp/sock", "", "", "is not http or https"},
	} {
		got, note, err := NormalizeEndpoint(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("NormalizeEndpoint(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || note != tc.note {
			t.Errorf("NormalizeEndpoint(%q) = %q, %q, %v; want %q, %q", tc.in, got, note, err, tc.want, tc.note)
		}
	}
}

func TestAPIKey(t *testing.T) {
	s := Resolve(Inputs{Env: envOf("REIKA_API_KEY_ENV", "MY_KEY")})
	if got := s.APIKey(envOf("MY_KEY", " sk-1 ")); got != "sk-1" {
		t.Errorf("APIKey = %q, want sk-1", got)
	}
	if got := Resolve(Inputs{}).APIKey(envOf("MY_KEY", "sk-1")); got != "" {
		t.Errorf("APIKey with no variable named = %q, want empty", got)
	}
}

func want[T comparable](t *testing.T, what string, got, wantV T) {
	t.Helper()
	if got != wantV {
		t.Errorf("%s = %v, want %v", what, got, wantV)
	}
}

func wantWarning(t *testing.T, s *Settings, sub string) {
	t.Helper()
	for _, w := range s.Warnings {
		if strings.Contains(w, sub) {
			return
		}
	}
	t.Errorf("warnings = %q, want one containing %q", s.Warnings, sub)
}

func TestChanges(t *testing.T) {
	a := Resolve(Inputs{Editor: map[string]any{"context_window": float64(16384), "endpoint": "http://127.0.0.1:8080/v1"}})
	b := Resolve(Inputs{Editor: map[string]any{"contextWindow": float64(32768), "endpoint": "http://127.0.0.1:8080/v1"}})
	if got := strings.Join(a.Changes(b), "; "); got != "context_window 16384 → 32768" {
		t.Errorf("Changes = %q, want only the window", got)
	}
	if got := a.Changes(a); len(got) != 0 {
		t.Errorf("Changes of the same settings = %q, want none", got)
	}
}

// TestTrustFromUserLevel: the settings that widen trust are taken from
// the editor's startup options but never from a settings push, which
// editors fill with workspace-level values; an ignored one is named once
// in Ignored, and a push that repeats the value in force ignores nothing.
func TestTrustFromUserLevel(t *testing.T) {
	const path = "/cfg/reika/config.json"
	widen := map[string]any{"bashAllow": []any{"touch"}, "endpoint": "http://evil.example:8080/v1",
		"fetch": true, "apiKeyEnv": "OPENAI_API_KEY", "profile": "hosted"}
	names := func(s *Settings) string {
		var n []string
		for _, ig := range s.Ignored {
			n = append(n, ig.Name)
		}
		return strings.Join(n, " ")
	}
	t.Run("push ignored", func(t *testing.T) {
		s := Resolve(Inputs{File: mustParse(t), FilePath: path, Pushed: map[string]any{"reika": widen}})
		want(t, "bash_allow", len(s.BashAllow.Value), 0)
		want(t, "endpoint", s.Endpoint.Value, "http://127.0.0.1:8080/v1")
		want(t, "endpoint source", s.Endpoint.Source.String(), "file /cfg/reika/config.json (profile local)")
		want(t, "fetch", s.Fetch.Value, false)
		want(t, "api_key_env", s.APIKeyEnv.Value, "")
		want(t, "profile", s.Profile.Value, "local")
		want(t, "ignored", names(s), "profile endpoint apiKeyEnv fetch bashAllow")
		want(t, "warnings", len(s.Warnings), 0)
		want(t, "notice", s.Ignored[4].Notice(), "bashAllow from the editor's settings push is ignored: settings that widen trust "+
			"(profile, endpoint, api_key_env, fetch, bash_allow, sandbox_env, language_servers) come from /cfg/reika/config.json, REIKA_* or the editor's startup options")
	})
	t.Run("startup taken", func(t *testing.T) {
		s := Resolve(Inputs{File: mustParse(t), FilePath: path, Editor: widen})
		want(t, "bash_allow", strings.Join(s.BashAllow.Value, ","), "touch")
		want(t, "bash_allow source", s.BashAllow.Source.String(), "editor startup options")
		want(t, "endpoint", s.Endpoint.Value, "http://evil.example:8080/v1")
		want(t, "fetch", s.Fetch.Value, true)
		want(t, "api_key_env", s.APIKeyEnv.Value, "OPENAI_API_KEY")
		want(t, "profile", s.Profile.Value, "hosted")
		want(t, "ignored", names(s), "")
	})
	t.Run("push repeats the startup options", func(t *testing.T) {
		s := Resolve(Inputs{Editor: widen, Pushed: map[string]any{"bash_allow": []any{"touch"}, "endpoint": "evil.example:8080",
			"fetch": "1", "api_key_env": "OPENAI_API_KEY", "profile": "hosted"}})
		want(t, "ignored", names(s), "")
		want(t, "bash_allow source", s.BashAllow.Source.String(), "editor startup options")
	})
	t.Run("push takes the other settings", func(t *testing.T) {
		s := Resolve(Inputs{Editor: map[string]any{"contextWindow": float64(20000)},
			Pushed: map[string]any{"contextWindow": float64(30000), "model": "m", "extra": map[string]any{"top_p": 0.5}, "bashAllow": []any{"touch"}}})
		want(t, "window", s.ContextWindow.Value, 30000)
		want(t, "window source", s.ContextWindow.Source.String(), "editor settings push")
		want(t, "model", s.Model.Value, "m")
		want(t, "extra source", s.Extra.Source.String(), "editor settings push")
		want(t, "ignored", names(s), "bashAllow")
		want(t, "notice names no file", s.Ignored[0].Notice(), "bashAllow from the editor's settings push is ignored: settings that widen trust "+
			"(profile, endpoint, api_key_env, fetch, bash_allow, sandbox_env, language_servers) come from your config file, REIKA_* or the editor's startup options")
	})
	t.Run("environment and file still win over the defaults, a push changes neither", func(t *testing.T) {
		s := Resolve(Inputs{File: mustParse(t), FilePath: path, Env: envOf("REIKA_BASH_ALLOW", "go test", "REIKA_FETCH", "1"),
			Pushed: map[string]any{"bashAllow": []any{"touch"}, "fetch": false}})
		want(t, "bash_allow", strings.Join(s.BashAllow.Value, ","), "go test")
		want(t, "bash_allow source", s.BashAllow.Source.String(), "env REIKA_BASH_ALLOW")
		want(t, "fetch", s.Fetch.Value, true)
		want(t, "endpoint source", s.Endpoint.Source.String(), "file /cfg/reika/config.json (profile local)")
		want(t, "ignored", names(s), "fetch bashAllow")
	})
}

// TestReasoningBack: on by default, turned off by the environment, the
// file or the editor (camelCase), each named as the source.
func TestReasoningBack(t *testing.T) {
	off := false
	tests := []struct {
		name string
		in   Inputs
		want Layer
	}{
		{"environment", Inputs{Env: func(k string) string {
			if k == "REIKA_REASONING_BACK" {
				return "0"
			}
			return ""
		}}, Env},
		{"file", Inputs{File: &FileContents{Profile: Profile{ReasoningBack: &off}}}, File},
		{"editor", Inputs{Editor: map[string]any{"reasoningBack": false}}, EditorStartup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Resolve(tt.in)
			if s.ReasoningBack.Value || s.ReasoningBack.Source.Layer != tt.want {
				t.Errorf("ReasoningBack = %+v, want false from layer %v", s.ReasoningBack, tt.want)
			}
			if len(s.Warnings) != 0 {
				t.Errorf("Warnings = %q, want none", s.Warnings)
			}
		})
	}
}

// The headers and fields that name a session come from every layer; an
// empty list is set (it sends none), unset is the client's default, and a
// header the client sends itself or a field it does not know is refused
// with a warning.
func TestSessionIdentity(t *testing.T) {
	none := []string{}
	s := Resolve(Inputs{
		File: &FileContents{Profile: Profile{ParentSessionHeaders: &none}},
		Env: func(k string) string {
			if k == "REIKA_SESSION_HEADERS" {
				return "x-session-id, X-Team-Session"
			}
			return ""
		},
		Editor: map[string]any{"sessionFields": []any{"prompt_cache_key"}},
	})
	if got := s.SessionHeaders; !reflect.DeepEqual(got.Value, []string{"x-session-id", "X-Team-Session"}) || got.Source.Layer != Env {
		t.Errorf("SessionHeaders = %+v, want the environment's two", got)
	}
	if got := s.ParentSessionHeaders; got.Value == nil || len(got.Value) != 0 || !got.IsSet() {
		t.Errorf("ParentSessionHeaders = %+v, want set and empty", got)
	}
	if got := s.SessionFields; !reflect.DeepEqual(got.Value, []string{"prompt_cache_key"}) || got.Source.Layer != EditorStartup {
		t.Errorf("SessionFields = %+v, want the editor's prompt_cache_key", got)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("Warnings = %q, want none", s.Warnings)
	}
	bad := Resolve(Inputs{Editor: map[string]any{"session_headers": []any{"Authorization"}, "session_fields": []any{"metadata"}}})
	if bad.SessionHeaders.IsSet() || bad.SessionFields.IsSet() || len(bad.Warnings) != 2 {
		t.Errorf("Authorization and metadata: headers %+v, fields %+v, warnings %q; want both refused with a warning each",
			bad.SessionHeaders, bad.SessionFields, bad.Warnings)
	}
}
