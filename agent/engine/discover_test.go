package engine

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// route is one canned answer of a fake engine.
type route struct {
	status int
	body   []byte
}

// fakeEngine serves canned bodies by "METHOD /path"; anything else is a
// 404 like a real server's.
func fakeEngine(t *testing.T, routes map[string]route) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, ok := routes[r.Method+" "+r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}`))
			return
		}
		if rt.status == 0 {
			rt.status = 200
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rt.status)
		w.Write(rt.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// outgoing is an HTTP client that notes every request it sends and can
// route any host name to a test server, so that a test can play a hosted
// or private host without the network.
type outgoing struct {
	mu   sync.Mutex
	urls []string
}

func (rec *outgoing) client(routeTo string) *http.Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if routeTo != "" {
				addr = routeTo
			}
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		rec.mu.Lock()
		rec.urls = append(rec.urls, r.Method+" "+r.URL.String())
		rec.mu.Unlock()
		return tr.RoundTrip(r)
	})}
}

func (rec *outgoing) hosts() map[string]bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	hs := map[string]bool{}
	for _, u := range rec.urls {
		hs[hostOf(strings.SplitN(u, " ", 2)[1])] = true
	}
	return hs
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestDiscoverLlamaCpp(t *testing.T) {
	for _, tc := range []struct {
		name       string
		models     string
		props      string
		window     int
		source     string
		slots      int
		trained    int
		wantModels []string
	}{
		{"new build, one slot", "llama.cpp/c8192-np1/02-v1-models.json", "llama.cpp/c8192-np1/04-props.json",
			8192, "llama.cpp /v1/models meta.n_ctx", 1, 32768, []string{"models/tiny-random-llama.gguf"}},
		{"four slots, KV not unified: the per-slot window", "llama.cpp/c8192-np4/02-v1-models.json", "llama.cpp/c8192-np4/04-props.json",
			2048, "llama.cpp /v1/models meta.n_ctx", 4, 32768, nil},
		{"four slots sharing one KV pool", "llama.cpp/c8192-np-auto/02-v1-models.json", "llama.cpp/c8192-np-auto/04-props.json",
			8192, "llama.cpp /v1/models meta.n_ctx", 4, 32768, nil},
		{"old build: no n_ctx in meta, /props has it", "docs-samples/llamacpp_v1_models_readme.json", "docs-samples/llamacpp_props.json",
			1024, "llama.cpp /props n_ctx", 1, 131072, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeEngine(t, map[string]route{
				"GET /v1/models": {body: readCapture(t, tc.models)},
				"GET /props":     {body: readCapture(t, tc.props)},
			})
			d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{})
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			if d.Flavor != LlamaCpp || d.Window != tc.window || d.WindowSource.Text != tc.source || d.Slots != tc.slots || d.TrainedWindow != tc.trained {
				t.Errorf("Discover = flavor %q window %d (%s) slots %d trained %d; want llamacpp %d (%s) %d %d",
					d.Flavor, d.Window, d.WindowSource, d.Slots, d.TrainedWindow, tc.window, tc.source, tc.slots, tc.trained)
			}
			if tc.wantModels != nil && (len(d.Models) != 1 || d.Models[0] != tc.wantModels[0] || d.Model != tc.wantModels[0]) {
				t.Errorf("Discover models = %q, model %q; want %q", d.Models, d.Model, tc.wantModels)
			}
			if len(d.Warnings) != 0 {
				t.Errorf("Discover warnings = %q, want none", d.Warnings)
			}
		})
	}
}

func TestDiscoverLlamaCppBuildInfo(t *testing.T) {
	srv := fakeEngine(t, map[string]route{
		"GET /v1/models": {body: readCapture(t, "llama.cpp/c8192-np1/02-v1-models.json")},
		"GET /props":     {body: readCapture(t, "llama.cpp/c8192-np1/04-props.json")},
	})
	d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != "b9928-81ff7abe5" {
		t.Errorf("Discover().Version = %q, want b9928-81ff7abe5", d.Version)
	}
}

func TestDiscoverVLLM(t *testing.T) {
	srv := fakeEngine(t, map[string]route{
		"GET /v1/models": {body: readCapture(t, "docs-samples/vllm_v1_models_constructed.json")},
	})
	d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Flavor != VLLM || d.Window != 32768 || d.WindowSource != (Source{"vllm-max-model-len", "vLLM /v1/models max_model_len"}) || d.Model != "Qwen/Qwen2.5-Coder-7B-Instruct" {
		t.Errorf("Discover = %q %d (%s) model %q; want vllm 32768 from max_model_len", d.Flavor, d.Window, d.WindowSource, d.Model)
	}
}

func TestDiscoverOllama(t *testing.T) {
	models := []byte(`{"object":"list","data":[{"id":"mistral:latest","object":"model","created":1717000000,"owned_by":"library"}]}`)
	show := readCapture(t, "docs-samples/ollama_api_show_docs.json")
	for _, tc := range []struct {
		name   string
		routes map[string]route
		window int
		source string
	}{
		{"nothing says the window: the docs' /api/show has no num_ctx", map[string]route{
			"GET /api/ps":    {body: readCapture(t, "docs-samples/ollama_api_ps_docs.json")},
			"POST /api/show": {body: show},
		}, 0, ""},
		{"num_ctx in the parameters", map[string]route{
			"GET /api/ps":    {body: readCapture(t, "docs-samples/ollama_api_ps_docs.json")},
			"POST /api/show": {body: []byte(`{"parameters":"num_ctx                        8192\nstop \"x\"","model_info":{"general.architecture":"llama","llama.context_length":131072}}`)},
		}, 8192, "Ollama /api/show num_ctx"},
		{"the loaded model's context in /api/ps wins", map[string]route{
			"GET /api/ps":    {body: []byte(`{"models":[{"name":"mistral:latest","model":"mistral:latest","context_length":16384}]}`)},
			"POST /api/show": {body: []byte(`{"parameters":"num_ctx 8192"}`)},
		}, 16384, "Ollama /api/ps context_length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.routes["GET /v1/models"] = route{body: models}
			tc.routes["GET /api/version"] = route{body: []byte(`{"version":"0.12.3"}`)}
			srv := fakeEngine(t, tc.routes)
			d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Flavor != Ollama || d.Window != tc.window || d.WindowSource.Text != tc.source || d.Version != "0.12.3" {
				t.Errorf("Discover = %q %d (%s) version %q; want ollama %d (%s)", d.Flavor, d.Window, d.WindowSource, d.Version, tc.window, tc.source)
			}
			if !strings.Contains(d.TruncationRisk, "silently drops") {
				t.Errorf("Discover().TruncationRisk = %q, want the silent truncation named", d.TruncationRisk)
			}
			if tc.window == 0 && !hasWarning(d, "set REIKA_CONTEXT_WINDOW") {
				t.Errorf("Discover().Warnings = %q, want the no-window warning", d.Warnings)
			}
		})
	}
}

func TestDiscoverOllamaTrainedLength(t *testing.T) {
	srv := fakeEngine(t, map[string]route{
		"GET /v1/models": {body: []byte(`{"object":"list","data":[{"id":"llama3:8b","owned_by":"library"}]}`)},
		"POST /api/show": {body: readCapture(t, "docs-samples/ollama_api_show_docs.json")},
	})
	d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{})
	if err != nil {
		t.Fatal(err)
	}
	if d.TrainedWindow != 8192 || d.Window != 0 {
		t.Errorf("Discover() trained %d window %d; want 8192 trained and no window (trained is not usable)", d.TrainedWindow, d.Window)
	}
}

func TestDiscoverLMStudio(t *testing.T) {
	t.Run("loaded instance", func(t *testing.T) {
		srv := fakeEngine(t, map[string]route{
			"GET /v1/models":     {body: []byte(`{"object":"list","data":[{"id":"google/gemma-4-26b-a4b","object":"model","owned_by":"organization_owner"}]}`)},
			"GET /api/v1/models": {body: readCapture(t, "docs-samples/lmstudio_api_v1_models.json")},
		})
		d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Flavor != LMStudio || d.Window != 4096 || d.TrainedWindow != 262144 {
			t.Errorf("Discover = %q window %d trained %d; want lmstudio 4096 (loaded), 262144 trained", d.Flavor, d.Window, d.TrainedWindow)
		}
	})
	t.Run("not loaded", func(t *testing.T) {
		srv := fakeEngine(t, map[string]route{
			"GET /v1/models":     {body: []byte(`{"object":"list","data":[{"id":"meta-llama-3.1-8b-instruct","object":"model","owned_by":"organization_owner"}]}`)},
			"GET /api/v0/models": {body: readCapture(t, "docs-samples/lmstudio_api_v0_models.json")},
		})
		d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Window != 0 || d.TrainedWindow != 131072 || !hasWarning(d, "has not loaded") {
			t.Errorf("Discover = window %d trained %d warnings %q; want no window, 131072 trained, a not-loaded warning", d.Window, d.TrainedWindow, d.Warnings)
		}
	})
}

func TestDiscoverConfiguredWindowWins(t *testing.T) {
	srv := fakeEngine(t, map[string]route{
		"GET /v1/models": {body: readCapture(t, "llama.cpp/c8192-np1/02-v1-models.json")},
		"GET /props":     {body: readCapture(t, "llama.cpp/c8192-np1/04-props.json")},
	})
	d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{Window: 4096, WindowSource: Source{"env", "env REIKA_CONTEXT_WINDOW"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Window != 4096 || d.WindowSource.Text != "env REIKA_CONTEXT_WINDOW" || d.EngineWindow != 8192 || len(d.Warnings) != 0 {
		t.Errorf("Discover = %d (%s), engine %d, warnings %q; want 4096 from env, engine 8192, no warning", d.Window, d.WindowSource, d.EngineWindow, d.Warnings)
	}
	d, err = Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{Window: 24000, WindowSource: Source{"env", "env REIKA_CONTEXT_WINDOW"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Window != 24000 || !hasWarning(d, "larger than the engine's (8192") {
		t.Errorf("Discover = %d, warnings %q; want 24000 with a warning that the engine has 8192", d.Window, d.Warnings)
	}
}

// A hosted endpoint's window comes from the catalog; a loopback or private
// one is never looked up, even for a model the catalog knows. The outgoing
// proves that every request went to the endpoint's own host.
func TestDiscoverCatalogOnlyForHostedHosts(t *testing.T) {
	srv := fakeEngine(t, map[string]route{
		"GET /v1/models": {body: []byte(`{"object":"list","data":[{"id":"gpt-4o","object":"model","owned_by":"system"},` +
			`{"id":"qwen/qwen3-coder-30b","object":"model","owned_by":"system"}]}`)},
	})
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		base      string
		model     string
		window    int
		source    string
		output    int
		flavor    Flavor
		wantHosts []string
	}{
		{"http://api.openai.com/v1", "gpt-4o", 128000, "models.dev catalog (openai/gpt-4o)", 16384, Hosted, []string{"api.openai.com"}},
		{"http://127.0.0.1:9/v1", "gpt-4o", 0, "", 0, Generic, []string{"127.0.0.1"}},
		{"http://192.168.1.20:8080/v1", "gpt-4o", 0, "", 0, Generic, []string{"192.168.1.20"}},
		{"http://gpu-box:8000/v1", "gpt-4o", 0, "", 0, Generic, []string{"gpu-box"}},
		{"http://[::1]:8080/v1", "gpt-4o", 0, "", 0, Generic, []string{"::1"}},
		// The catalog itself lists local providers (LM Studio at
		// 127.0.0.1:1234); they are still never looked up.
		{"http://127.0.0.1:1234/v1", "qwen/qwen3-coder-30b", 0, "", 0, Generic, []string{"127.0.0.1"}},
		{"http://localhost:8080/v1", "qwen3-coder-30b-a3b", 0, "", 0, Generic, []string{"localhost"}},
	} {
		t.Run(tc.base, func(t *testing.T) {
			var rec outgoing
			d, err := Discover(context.Background(), Options{BaseURL: tc.base, Model: tc.model, HTTPClient: rec.client(addr)}, Configured{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Window != tc.window || d.WindowSource.Text != tc.source || d.OutputLimit != tc.output || d.Flavor != tc.flavor {
				t.Errorf("Discover(%s) = %q window %d (%q) output %d; want %q %d (%q) %d", tc.base, d.Flavor, d.Window, d.WindowSource, d.OutputLimit,
					tc.flavor, tc.window, tc.source, tc.output)
			}
			hosts := rec.hosts()
			if len(hosts) != len(tc.wantHosts) || !hosts[tc.wantHosts[0]] {
				t.Errorf("Discover(%s) contacted %v, want only %v (requests: %q)", tc.base, hosts, tc.wantHosts, rec.urls)
			}
			if tc.window == 0 && !hasWarning(d, "no context window known") {
				t.Errorf("Discover(%s).Warnings = %q, want the no-window warning", tc.base, d.Warnings)
			}
		})
	}
}

func TestDiscoverSendsTheKeyOnlyToTheEndpoint(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
		w.Write([]byte(`{"data":[{"id":"m","max_model_len":4096,"owned_by":"vllm"}]}`))
	}))
	defer srv.Close()
	if _, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1", APIKey: "sk-test"}, Configured{}); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0] != "Bearer sk-test" {
		t.Errorf("Authorization sent = %q, want Bearer sk-test", got)
	}
}

func TestDiscoverFailures(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	for _, tc := range []struct {
		name   string
		routes map[string]route
		base   string
		kind   Kind
		msg    string
	}{
		{name: "nothing listening", base: closedURL + "/v1", kind: Unreachable, msg: "is the engine running?"},
		{name: "HTML page from a proxy", routes: map[string]route{
			"GET /v1/models": {status: 502, body: []byte("<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>")},
		}, kind: Server, msg: `an HTML page titled "502 Bad Gateway"`},
		{name: "HTML on 200 (a web UI, not an API)", routes: map[string]route{
			"GET /v1/models": {body: []byte("<!DOCTYPE html><html><title>Open WebUI</title></html>")},
		}, kind: BadResponse, msg: `answered an HTML page titled "Open WebUI" where JSON was expected`},
		{name: "model still loading", routes: map[string]route{
			"GET /v1/models": {status: 503, body: []byte(`{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`)},
		}, kind: Loading, msg: "wait until the model has loaded"},
		{name: "garbage JSON", routes: map[string]route{
			"GET /v1/models": {body: []byte(`{"data": [`)},
		}, kind: BadResponse, msg: "where JSON was expected"},
		{name: "wrong key", routes: map[string]route{
			"GET /v1/models": {status: 401, body: readCapture(t, "docs-samples/llamacpp_error_generic_readme.json")},
		}, kind: Auth, msg: "Invalid API Key"},
		{name: "wrong path", routes: map[string]route{}, kind: NotFound, msg: "HTTP 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.base
			if base == "" {
				base = fakeEngine(t, tc.routes).URL + "/v1"
			}
			_, err := Discover(context.Background(), Options{BaseURL: base}, Configured{})
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Discover() error = %v; want kind %q containing %q", err, tc.kind, tc.msg)
			}
		})
	}
}

func TestDiscoverTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	_, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1", Timeouts: Timeouts{Probe: 100 * time.Millisecond}}, Configured{})
	if !errors.Is(err, Timeout) {
		t.Errorf("Discover(silent server) error = %v, want a Timeout", err)
	}
}

func TestDiscoverMissingFields(t *testing.T) {
	for _, body := range []string{`{}`, `{"data":[]}`, `{"data":[{"id":"x"}]}`, `{"data":[{"id":"x","meta":null,"max_model_len":"big"}]}`} {
		srv := fakeEngine(t, map[string]route{"GET /v1/models": {body: []byte(body)}})
		d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{})
		if strings.Contains(body, "big") {
			// A field of the wrong type is garbage, not a missing field.
			if !errors.Is(err, BadResponse) {
				t.Errorf("Discover(%s) error = %v, want BadResponse", body, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Discover(%s) error = %v, want warnings only", body, err)
			continue
		}
		if d.Window != 0 || !hasWarning(d, "set REIKA_CONTEXT_WINDOW") {
			t.Errorf("Discover(%s) = window %d warnings %q; want none and the no-window warning", body, d.Window, d.Warnings)
		}
		if len(d.Models) == 0 && !hasWarning(d, "lists no models; set REIKA_MODEL") {
			t.Errorf("Discover(%s).Warnings = %q, want the no-model warning", body, d.Warnings)
		}
	}
}

func TestDiscoverAbsurdEngineWindow(t *testing.T) {
	for _, n := range []string{"0", "-1", "12", "50000000"} {
		srv := fakeEngine(t, map[string]route{
			"GET /v1/models": {body: []byte(`{"data":[{"id":"m","owned_by":"vllm","max_model_len":` + n + `}]}`)},
		})
		d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Window != 0 || !hasWarning(d, "set REIKA_CONTEXT_WINDOW") {
			t.Errorf("Discover(max_model_len %s) = window %d, warnings %q; want none, and a warning naming the setting", n, d.Window, d.Warnings)
		}
		if (n == "12" || n == "50000000") && !hasWarning(d, "cannot be right") {
			t.Errorf("Discover(max_model_len %s) warnings %q; want the figure called out", n, d.Warnings)
		}
	}
}

// FindLocal tries the usual ports; here only Ollama's answers.
func TestFindLocal(t *testing.T) {
	srv := fakeEngine(t, map[string]route{"GET /v1/models": {body: []byte(`{"data":[{"id":"qwen3:8b","owned_by":"library"}]}`)}})
	addr := strings.TrimPrefix(srv.URL, "http://")
	var rec outgoing
	onlyOllama := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Port() != "11434" {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
		}
		return rec.client(addr).Do(r)
	})}
	base, err := FindLocal(context.Background(), Options{HTTPClient: onlyOllama})
	if err != nil || base != "http://127.0.0.1:11434/v1" {
		t.Errorf("FindLocal() = %q, %v; want http://127.0.0.1:11434/v1", base, err)
	}

	none := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	})}
	_, err = FindLocal(context.Background(), Options{HTTPClient: none})
	if err == nil || !strings.Contains(err.Error(), "8080 (llama.cpp), 8000 (vLLM), 30000 (SGLang), 11434 (Ollama), 1234 (LM Studio)") ||
		!strings.Contains(err.Error(), "set REIKA_ENDPOINT") {
		t.Errorf("FindLocal(nothing) error = %v, want the ports tried and the fix", err)
	}
}

func TestIsLocalHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:8080": true, "localhost": true, "LOCALHOST:1234": true, "[::1]:8080": true, "::1": true,
		"10.0.0.5": true, "172.16.3.4": true, "192.168.1.20": true, "100.100.1.2": true, "169.254.0.1": true,
		"fd12::1": true, "fe80::1%eth0": true, "0.0.0.0": true, "gpu-box": true, "box.local": true, "ai.lan": true,
		"x.internal": true, "nas.home.arpa": true, "::ffff:192.168.0.1": true,
		"api.openai.com": false, "openrouter.ai": false, "8.8.8.8": false, "172.32.0.1": false, "2001:4860::8888": false,
		"100.128.0.1": false,
	} {
		if got := IsLocalHost(host); got != want {
			t.Errorf("IsLocalHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func hasWarning(d *Discovery, sub string) bool {
	for _, w := range d.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// Whether the model takes images comes from llama.cpp's /props modalities
// (false in the captures, a model without its mmproj; true with one) and
// Ollama's /api/show capabilities (the docs' sample lists "vision"); vLLM
// says nothing.
func TestDiscoverImages(t *testing.T) {
	props := readCapture(t, "llama.cpp/c8192-np1/04-props.json")
	withVision := []byte(strings.Replace(string(props), `"modalities":{"vision":false`, `"modalities":{"vision":true`, 1))
	if string(withVision) == string(props) {
		t.Fatal("the capture has no modalities to change")
	}
	ollamaModels := []byte(`{"object":"list","data":[{"id":"llava:latest","object":"model","created":1717000000,"owned_by":"library"}]}`)
	for _, tc := range []struct {
		name   string
		routes map[string]route
		images bool
		source string
	}{
		{"llama.cpp without an mmproj", map[string]route{
			"GET /v1/models": {body: readCapture(t, "llama.cpp/c8192-np1/02-v1-models.json")}, "GET /props": {body: props}},
			false, "llama.cpp /props modalities.vision"},
		{"llama.cpp with an mmproj", map[string]route{
			"GET /v1/models": {body: readCapture(t, "llama.cpp/c8192-np1/02-v1-models.json")}, "GET /props": {body: withVision}},
			true, "llama.cpp /props modalities.vision"},
		{"Ollama, a vision model", map[string]route{
			"GET /v1/models": {body: ollamaModels}, "POST /api/show": {body: readCapture(t, "docs-samples/ollama_api_show_docs.json")}},
			true, "Ollama /api/show capabilities"},
		{"vLLM says nothing", map[string]route{
			"GET /v1/models": {body: readCapture(t, "docs-samples/vllm_v1_models_constructed.json")}},
			false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeEngine(t, tc.routes)
			d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Images != tc.images || d.ImagesSource != tc.source {
				t.Errorf("Discover images = %v (%q), want %v (%q)", d.Images, d.ImagesSource, tc.images, tc.source)
			}
		})
	}
}
