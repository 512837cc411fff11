package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
)

// startTestSim serves a simulated engine on loopback and returns its /v1
// base URL.
func startTestSim(t *testing.T, cfg sim.Config) (*sim.Server, string) {
	t.Helper()
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { s.Close(); ts.Close() })
	return s, ts.URL + "/v1"
}

// checkEnv is an environment with nothing but kv, and a config directory
// of the test's own, so that the user's files never leak in.
func checkEnv(t *testing.T, kv ...string) func(string) string {
	m := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func runCheckJSON(t *testing.T, env func(string) string, args ...string) (checkReport, int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := checkMain(context.Background(), append([]string{"--json"}, args...), env, &stdout, &stderr)
	var rep checkReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("check --json printed %q (stderr %q): %v", stdout.String(), stderr.String(), err)
	}
	return rep, code, stderr.String()
}

// The acceptance rows of the foundation issue.
func TestCheckAgainstTheSimulatedEngine(t *testing.T) {
	_, llama := startTestSim(t, sim.Config{Ctx: 8192})
	_, vllm := startTestSim(t, sim.Config{Ctx: 16384, Flavor: sim.VLLM})
	_, ollama := startTestSim(t, sim.Config{Ctx: 4096, Flavor: sim.Ollama})

	for _, tc := range []struct {
		name         string
		env          []string
		flavor       string
		window       int
		windowSource string
		windowID     string
		truncation   bool
		warning      string
	}{
		{"llama.cpp", []string{"REIKA_ENDPOINT", llama}, "llamacpp", 8192, "llama.cpp /v1/models meta.n_ctx", "llamacpp-models-n-ctx", false, ""},
		{"the environment wins", []string{"REIKA_ENDPOINT", llama, "REIKA_CONTEXT_WINDOW", "24000"}, "llamacpp", 24000, "env REIKA_CONTEXT_WINDOW", "env", false,
			"larger than the engine's (8192"},
		{"vLLM", []string{"REIKA_ENDPOINT", vllm}, "vllm", 16384, "vLLM /v1/models max_model_len", "vllm-max-model-len", false, ""},
		{"Ollama", []string{"REIKA_ENDPOINT", ollama}, "ollama", 4096, "Ollama /api/ps context_length", "ollama-ps-context-length", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, code, stderr := runCheckJSON(t, checkEnv(t, tc.env...))
			if code != 0 || !rep.OK {
				t.Fatalf("check exit %d, ok %v, error %q, stderr %q; want success", code, rep.OK, rep.Error, stderr)
			}
			if rep.Flavor != tc.flavor || rep.Window != tc.window || rep.WindowSourceText != tc.windowSource || rep.WindowSource != tc.windowID {
				t.Errorf("check = %s window %d (%s: %s); want %s %d (%s: %s)", rep.Flavor, rep.Window, rep.WindowSource, rep.WindowSourceText, tc.flavor, tc.window, tc.windowID, tc.windowSource)
			}
			if rep.Endpoint != tc.env[1] || rep.EndpointSourceText != "env REIKA_ENDPOINT" || rep.EndpointSource != "env" || rep.Model == "" || rep.Reserve != 2048 {
				t.Errorf("check endpoint %q (%s: %s), model %q, reserve %d; want %s from env, a model, 2048", rep.Endpoint, rep.EndpointSource, rep.EndpointSourceText, rep.Model, rep.Reserve, tc.env[1])
			}
			if rep.Budget == nil || rep.Budget.Window != tc.window {
				t.Errorf("check budget = %+v, want one for window %d", rep.Budget, tc.window)
			}
			if rep.ToolCalls == nil || !rep.ToolCalls.OK {
				t.Errorf("check tool calls = %+v, want ok", rep.ToolCalls)
			}
			if got := rep.TruncationRisk != ""; got != tc.truncation {
				t.Errorf("check truncation risk = %q, want reported: %v", rep.TruncationRisk, tc.truncation)
			}
			if tc.warning != "" && !strings.Contains(strings.Join(rep.Warnings, "\n"), tc.warning) {
				t.Errorf("check warnings = %q, want one containing %q", rep.Warnings, tc.warning)
			}
		})
	}
}

func TestCheckJSONFields(t *testing.T) {
	_, base := startTestSim(t, sim.Config{Ctx: 8192})
	var stdout, stderr bytes.Buffer
	if code := checkMain(context.Background(), []string{"--json"}, checkEnv(t, "REIKA_ENDPOINT", base), &stdout, &stderr); code != 0 {
		t.Fatalf("check exit %d: %s", code, stderr.String())
	}
	var fields map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &fields); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"endpoint", "flavor", "model", "window", "window_source", "reserve"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("check --json has no %q field: %s", k, stdout.String())
		}
	}
}

func TestCheckFailures(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL + "/v1"
	closed.Close()

	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!doctype html><html><head><title>Grafana</title></head></html>"))
	}))
	defer html.Close()

	loading, loadingURL := startTestSim(t, sim.Config{Ctx: 8192})
	loading.SetLoading(true)

	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"nothing listening", []string{"REIKA_ENDPOINT", closedURL}, "is the engine running?"},
		{"a web page, not an engine", []string{"REIKA_ENDPOINT", html.URL}, `answered an HTML page titled "Grafana"`},
		{"the model is loading", []string{"REIKA_ENDPOINT", loadingURL}, "wait until the model has loaded"},
		{"the key variable is unset", []string{"REIKA_ENDPOINT", closedURL, "REIKA_API_KEY_ENV", "MY_KEY"}, "MY_KEY for the API key, but it is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := checkMain(context.Background(), nil, checkEnv(t, tc.env...), &stdout, &stderr)
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
				t.Errorf("check exit %d, stderr %q; want 1 and one line containing %q", code, stderr.String(), tc.want)
			}
		})
	}
}

// A model that answers in text where a tool call was asked for fails the
// check, with the fix for the engine.
func TestCheckToolCallsFail(t *testing.T) {
	s, base := startTestSim(t, sim.Config{Ctx: 8192, Flavor: sim.VLLM})
	s.AppendScript(sim.Turn{Content: "I cannot call tools."})
	rep, code, stderr := runCheckJSON(t, checkEnv(t, "REIKA_ENDPOINT", base))
	if code != 1 || rep.OK || !strings.Contains(rep.Error, "--enable-auto-tool-choice") || !strings.Contains(stderr, "tool calls do not work") {
		t.Errorf("check = exit %d, ok %v, error %q, stderr %q; want a failure naming vLLM's flag", code, rep.OK, rep.Error, stderr)
	}
}

// An engine whose tool-call parser is off hands the model's call back as
// text: check says so, that Reika reads such calls, and how to turn the
// parser on.
func TestCheckToolCallsAsText(t *testing.T) {
	s, base := startTestSim(t, sim.Config{Ctx: 8192})
	s.AppendScript(sim.Turn{Content: "<tool_call>\n{\"name\": \"ping\", \"arguments\": {\"text\": \"reika\"}}\n</tool_call>"})
	rep, code, stderr := runCheckJSON(t, checkEnv(t, "REIKA_ENDPOINT", base))
	if code != 1 || rep.OK || !strings.Contains(rep.Error, "--jinja") || !strings.Contains(stderr, "tool-call parser is off") ||
		!strings.Contains(stderr, "<tool_call> tags") {
		t.Errorf("check = exit %d, ok %v, error %q, stderr %q; want a failure saying the parser is off, naming --jinja", code, rep.OK, rep.Error, stderr)
	}
}

func TestCheckReadsTheConfigFile(t *testing.T) {
	_, base := startTestSim(t, sim.Config{Ctx: 8192})
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "reika"), 0o755)
	os.WriteFile(filepath.Join(dir, "reika", "config.json"), []byte(`{"profile":"sim","profiles":{"sim":{"endpoint":"`+base+`","context_window":6000}}}`), 0o600)
	env := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return dir
		}
		return ""
	}
	rep, code, _ := runCheckJSON(t, env, "--no-tools")
	if code != 0 || rep.Profile != "sim" || rep.Window != 6000 || !strings.HasSuffix(rep.WindowSourceText, "(profile sim)") || rep.WindowSource != "config-file" {
		t.Errorf("check = exit %d profile %q window %d (%s: %s); want the profile's 6000", code, rep.Profile, rep.Window, rep.WindowSource, rep.WindowSourceText)
	}

	// The editor's settings, as a health check passes them, override the
	// profile's window, and the report says so.
	rep, code, _ = runCheckJSON(t, env, "--no-tools", "--settings", `{"reika": {"contextWindow": 7000}}`)
	if code != 0 || rep.Window != 7000 || len(rep.Overrides) != 1 || !strings.Contains(rep.Overrides[0], "context_window: the editor's 7000 overrides 6000 from file") {
		t.Errorf("check --settings = exit %d window %d overrides %q; want the editor's 7000 said to override the profile's 6000", code, rep.Window, rep.Overrides)
	}

	os.WriteFile(filepath.Join(dir, "reika", "config.json"), []byte(`{"profiles":{"sim":{"endpont":"x"}}}`), 0o600)
	_, code, stderr := runCheckJSON(t, env, "--no-tools")
	if code != 1 || !strings.Contains(stderr, `unknown field "endpont"`) {
		t.Errorf("check with a misspelt key = exit %d, stderr %q; want 1 naming the field", code, stderr)
	}
}

// The settings that widen trust are taken from the editor's startup
// options (--settings) but not from a settings push (--pushed), and the
// report lists the ignored ones with the notice the editor shows.
func TestCheckIgnoredPush(t *testing.T) {
	_, base := startTestSim(t, sim.Config{Ctx: 8192})
	env := checkEnv(t, "REIKA_ENDPOINT", base)
	source := func(rep checkReport, name string) string {
		for _, r := range rep.Settings {
			if r.Name == name {
				return r.Source
			}
		}
		return "(no row)"
	}
	rep, code, _ := runCheckJSON(t, env, "--no-tools", "--pushed", `{"reika": {"bashAllow": ["touch"], "endpoint": "http://203.0.113.9/v1", "contextWindow": 7000}}`)
	if code != 0 || rep.Window != 7000 || rep.Endpoint != base || source(rep, "bash_allow") != "default" {
		t.Errorf("check --pushed = exit %d window %d endpoint %s bash_allow from %s; want the push's window, REIKA_ENDPOINT, the default allow list",
			code, rep.Window, rep.Endpoint, source(rep, "bash_allow"))
	}
	if len(rep.Ignored) != 2 || rep.Ignored[0].Name != "endpoint" || rep.Ignored[1].Name != "bashAllow" ||
		!strings.Contains(rep.Ignored[1].Notice, "bashAllow from the editor's settings push is ignored") {
		t.Errorf("check --pushed ignored = %+v, want endpoint and bashAllow with their notices", rep.Ignored)
	}

	rep, code, _ = runCheckJSON(t, env, "--no-tools", "--settings", `{"reika": {"bashAllow": ["touch"]}}`)
	if code != 0 || len(rep.Ignored) != 0 || source(rep, "bash_allow") != "editor startup options" {
		t.Errorf("check --settings = exit %d ignored %+v bash_allow from %s; want it taken from the startup options", code, rep.Ignored, source(rep, "bash_allow"))
	}

	var stdout, stderr bytes.Buffer
	checkMain(context.Background(), []string{"--no-tools", "--pushed", `{"fetch": true}`}, env, &stdout, &stderr)
	if out := stdout.String(); !strings.Contains(out, "ignored: the settings push widens trust\n  - fetch true: fetch from the editor's settings push is ignored") {
		t.Errorf("check --pushed printed:\n%s\nwant the ignored fetch listed", out)
	}
}

func TestCheckText(t *testing.T) {
	_, base := startTestSim(t, sim.Config{Ctx: 8192})
	var stdout, stderr bytes.Buffer
	code := checkMain(context.Background(), nil, checkEnv(t, "REIKA_ENDPOINT", base, "REIKA_MIN_GEN_TOKENS", "4096"), &stdout, &stderr)
	out := stdout.String()
	for _, want := range []string{
		"engine          llama.cpp",
		"window          8192 tokens",
		"(llama.cpp /v1/models meta.n_ctx)",
		"reserve         4096 tokens",
		"(env REIKA_MIN_GEN_TOKENS; pinned)",
		`ok: the model called ping with "reika"`,
		"shed point",
		"\nok\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check printed\n%s\nwant it to contain %q", out, want)
		}
	}
	if code != 0 {
		t.Errorf("check exit %d (stderr %q), want 0", code, stderr.String())
	}
}

func TestCheckSim(t *testing.T) {
	rep, code, stderr := runCheckJSON(t, checkEnv(t), "--sim")
	if code != 0 || rep.EndpointSourceText != "--sim: the built-in simulated engine" || rep.EndpointSource != "flag" || rep.Window != 16384 || !rep.ToolCalls.OK {
		t.Errorf("check --sim = exit %d, endpoint %s (%s: %s), window %d, tools %+v, stderr %q", code, rep.Endpoint, rep.EndpointSource, rep.EndpointSourceText, rep.Window, rep.ToolCalls, stderr)
	}
}

// check says which slot a session pins and whether llama.cpp keeps its
// cache across restarts, and how to make it.
func TestCheckSlots(t *testing.T) {
	_, plain := startTestSim(t, sim.Config{Ctx: 8192, Slots: 2})
	_, saving := startTestSim(t, sim.Config{Ctx: 8192, Slots: 2, SlotSavePath: t.TempDir()})
	for _, tc := range []struct {
		name, url, cache string
	}{
		{"no --slot-save-path", plain, "--slot-save-path DIR"},
		{"--slot-save-path", saving, "saved across restarts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, code, stderr := runCheckJSON(t, checkEnv(t, "REIKA_ENDPOINT", tc.url))
			if code != 0 || rep.Slot == nil || *rep.Slot < 0 || *rep.Slot > 1 || !strings.Contains(rep.Cache, tc.cache) {
				t.Errorf("check: exit %d (%s), slot %v, cache %q; want a slot and a cache line with %q", code, stderr, rep.Slot, rep.Cache, tc.cache)
			}
			if !strings.Contains(rep.SlotSharing, "sessions beyond 2 share the least recently used") {
				t.Errorf("check's slot line = %q, want how sessions beyond the slots share them", rep.SlotSharing)
			}
			if !strings.Contains(rep.Subagents, "a slot of their own (2 slots)") {
				t.Errorf("check's subagents line = %q, want a slot of their own", rep.Subagents)
			}
		})
	}
}

// check names the config file's MCP servers: their tools, or why one did
// not start.
func TestCheckMCPServers(t *testing.T) {
	_, base := startTestSim(t, sim.Config{Ctx: 8192})
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "reika"), 0o755)
	missing := filepath.Join(t.TempDir(), "no-such-server")
	os.WriteFile(filepath.Join(dir, "reika", "config.json"), []byte(`{"endpoint":"`+base+`","mcp_servers":[{"name":"gone","command":"`+missing+`"}]}`), 0o600)
	env := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return dir
		}
		return ""
	}
	rep, code, _ := runCheckJSON(t, env, "--no-tools")
	if code != 0 || len(rep.MCP) != 1 || rep.MCP[0].Name != "gone" || !strings.Contains(rep.MCP[0].Error, "no-such-server") {
		t.Fatalf("check = exit %d, mcp_servers %+v; want gone, not started", code, rep.MCP)
	}
	var text bytes.Buffer
	printCheck(&text, &rep)
	if !strings.Contains(text.String(), "mcp gone") || !strings.Contains(text.String(), "not started: ") {
		t.Errorf("check's text lacks the server:\n%s", text.String())
	}
}

// check names the language servers the agent asks, from language_servers
// (here one of the user's, the defaults on PATH turned off) or PATH.
func TestCheckLanguageServers(t *testing.T) {
	_, base := startTestSim(t, sim.Config{Ctx: 8192})
	for _, tc := range []struct{ servers, want string }{
		{"python=my-pyls --stdio,go=,rust=,typescript=,javascript=,typescriptreact=,javascriptreact=,c=,cpp=", "my-pyls (python)"},
		{"off", "none (language_servers, env REIKA_LANGUAGE_SERVERS)"},
	} {
		env := func(k string) string {
			switch k {
			case "REIKA_ENDPOINT":
				return base
			case "REIKA_LANGUAGE_SERVERS":
				return tc.servers
			}
			return ""
		}
		rep, code, _ := runCheckJSON(t, env, "--no-tools")
		if code != 0 || rep.LanguageServers != tc.want {
			t.Errorf("check with %q = exit %d, language_servers %q; want %q", tc.servers, code, rep.LanguageServers, tc.want)
		}
		var text bytes.Buffer
		printCheck(&text, &rep)
		if !strings.Contains(text.String(), "lang servers  ") {
			t.Errorf("check's text lacks the language servers:\n%s", text.String())
		}
	}
}

// check's tool-call probe is a side call of no session: it names none to
// the engine's routers, whatever the settings add.
func TestCheckProbeSendsNoSession(t *testing.T) {
	s, base := startTestSim(t, sim.Config{Ctx: 8192})
	rep, code, stderr := runCheckJSON(t, checkEnv(t, "REIKA_ENDPOINT", base, "REIKA_SESSION_HEADERS", "X-Team-Session", "REIKA_SESSION_FIELDS", "user"))
	if code != 0 || !rep.ToolCalls.OK {
		t.Fatalf("check = exit %d, tools %+v: %s", code, rep.ToolCalls, stderr)
	}
	reqs := s.Requests()
	if len(reqs) == 0 {
		t.Fatal("check sent no chat request")
	}
	for _, r := range reqs {
		for _, k := range []string{"X-Team-Session", "x-session-id", "X-Dynamo-Session-ID"} {
			if v := r.Headers.Get(k); v != "" {
				t.Errorf("the probe (request %d) carries %s %q, want none", r.Seq, k, v)
			}
		}
		if strings.Contains(string(r.Body), `"user":`) {
			t.Errorf("the probe (request %d) carries a user field: %s", r.Seq, r.Body)
		}
	}
}
