package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/contextwin"
)

// propsWithPath is the real /props of the c8192-np1 capture with its
// model_path replaced.
func propsWithPath(t *testing.T, path string) []byte {
	t.Helper()
	var props map[string]any
	if err := json.Unmarshal(readCapture(t, "llama.cpp/c8192-np1/04-props.json"), &props); err != nil {
		t.Fatal(err)
	}
	props["model_path"] = path
	b, err := json.Marshal(props)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDiscoverCacheLlamaCpp(t *testing.T) {
	gemma := writeFile(t, "gemma-3-test.gguf", writeGGUF(gemma3Header(), 300))
	mamba := writeFile(t, "mamba.gguf", writeGGUF([]kvPair{{"general.architecture", 0, "mamba"}, {"mamba.ssm.state_size", ggufUint32, 16}}, 1))
	qwen := writeFile(t, "qwen3.gguf", writeGGUF([]kvPair{{"general.architecture", 0, "qwen3"}, {"qwen3.block_count", ggufUint32, 2}}, 1))
	garbage := writeFile(t, "garbage.gguf", []byte("GGUF\x03\x00\x00\x00 cut short"))
	for _, tc := range []struct {
		name     string
		path     string
		want     contextwin.CacheModel
		sourceID string
		text     string // in the source's text
		mib      int
		advice   string // in CacheAdvice
	}{
		{"gemma3's header: sliding window", gemma, contextwin.CacheModel{Class: contextwin.CacheCheckpointed, SWA: 1024},
			"llamacpp-gguf-header", "gemma-3-test.gguf (gemma3: sliding window 1024)", 65, "SWA model (window 1024)"},
		{"mamba's header: recurrent", mamba, contextwin.CacheModel{Class: contextwin.CacheCheckpointed},
			"llamacpp-gguf-header", "mamba: recurrent layers (mamba.ssm.*)", 0, "--ctx-checkpoints N"},
		{"qwen3's header: dense", qwen, contextwin.CacheModel{Class: contextwin.CacheDense},
			"llamacpp-gguf-header", "qwen3: no sliding window", 0, "any common prefix is kept"},
		{"a relative model_path (the capture's)", "models/tiny-random-llama.gguf", contextwin.CacheModel{Class: contextwin.CacheUnknown},
			"cache-unknown", `"models/tiny-random-llama.gguf" is relative`, 0, "not known"},
		{"a broken file", garbage, contextwin.CacheModel{Class: contextwin.CacheUnknown},
			"cache-unknown", "could not be read", 0, "not known"},
		{"no model_path", "", contextwin.CacheModel{Class: contextwin.CacheUnknown},
			"cache-unknown", "gives no model_path", 0, "not known"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeEngine(t, map[string]route{
				"GET /v1/models": {body: readCapture(t, "llama.cpp/c8192-np1/02-v1-models.json")},
				"GET /props":     {body: propsWithPath(t, tc.path)},
			})
			d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Cache != tc.want || d.EngineCache != tc.want || d.CacheSource.ID != tc.sourceID || !strings.Contains(d.CacheSource.Text, tc.text) {
				t.Errorf("Discover cache = %+v (%+v), engine %+v; want %+v from %s (%q)", d.Cache, d.CacheSource, d.EngineCache, tc.want, tc.sourceID, tc.text)
			}
			if d.SWAFullMiB != tc.mib {
				t.Errorf("Discover SWAFullMiB = %d, want %d", d.SWAFullMiB, tc.mib)
			}
			if a := d.CacheAdvice(); !strings.Contains(a, tc.advice) {
				t.Errorf("CacheAdvice() = %q, want it to hold %q", a, tc.advice)
			}
			if len(d.Warnings) != 0 {
				t.Errorf("Discover warnings = %q, want none", d.Warnings)
			}
		})
	}
}

func TestDiscoverCacheSWAFullAdvice(t *testing.T) {
	gemma := writeFile(t, "g.gguf", writeGGUF(gemma3Header(), 0))
	srv := fakeEngine(t, map[string]route{
		"GET /v1/models": {body: readCapture(t, "llama.cpp/c8192-np1/02-v1-models.json")},
		"GET /props":     {body: propsWithPath(t, gemma)},
	})
	d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{})
	if err != nil {
		t.Fatal(err)
	}
	want := "SWA model (window 1024): a change more than 1024 tokens before the prompt's end restarts from a context checkpoint, or from the start; " +
		"--swa-full keeps any prefix, at about 65 MiB more (if llama-server already runs with it, set cache_class dense); " +
		"else a full slot (--ctx-checkpoints, default 32) keeps its old checkpoints --checkpoint-min-step apart (default 8192): " +
		"start llama-server with --checkpoint-min-step 256 so that one stands every 256 tokens of the window, and set REIKA_CHECKPOINT_MIN_STEP=256 (checkpoint_min_step) to tell Reika; or --ctx-checkpoints N for more"
	if got := d.CacheAdvice(); got != want {
		t.Errorf("CacheAdvice() =\n%q, want\n%q", got, want)
	}
}

// No engine tells its --checkpoint-min-step: the setting gives it to the
// planner's cache model, whatever the class discovery found, and the
// advice then names it instead of asking for it.
func TestDiscoverConfiguredMinStep(t *testing.T) {
	mamba := writeFile(t, "mamba.gguf", writeGGUF([]kvPair{{"general.architecture", 0, "mamba"}, {"mamba.ssm.state_size", ggufUint32, 16}}, 1))
	srv := fakeEngine(t, map[string]route{
		"GET /v1/models": {body: readCapture(t, "llama.cpp/c8192-np1/02-v1-models.json")},
		"GET /props":     {body: propsWithPath(t, mamba)},
	})
	d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{MinStep: 256})
	if err != nil {
		t.Fatal(err)
	}
	if want := (contextwin.CacheModel{Class: contextwin.CacheCheckpointed, MinStep: 256}); d.Cache != want {
		t.Errorf("Cache = %+v, want %+v", d.Cache, want)
	}
	want := "recurrent/hybrid model: each change restarts from a checkpoint, or from the start; " +
		"a full slot (--ctx-checkpoints, default 32) keeps its old checkpoints 256 tokens apart (checkpoint_min_step, as llama-server's --checkpoint-min-step must be)"
	if got := d.CacheAdvice(); got != want {
		t.Errorf("CacheAdvice() =\n%q, want\n%q", got, want)
	}
}

func TestDiscoverConfiguredCacheWins(t *testing.T) {
	gemma := writeFile(t, "g.gguf", writeGGUF(gemma3Header(), 0))
	srv := fakeEngine(t, map[string]route{
		"GET /v1/models": {body: readCapture(t, "llama.cpp/c8192-np1/02-v1-models.json")},
		"GET /props":     {body: propsWithPath(t, gemma)},
	})
	conf := Configured{Cache: contextwin.CacheModel{Class: contextwin.CacheDense}, CacheSource: Source{"env", "env REIKA_CACHE_CLASS"}}
	d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, conf)
	if err != nil {
		t.Fatal(err)
	}
	if d.Cache != conf.Cache || d.CacheSource != conf.CacheSource {
		t.Errorf("Discover cache = %+v (%s), want the configured %+v (%s)", d.Cache, d.CacheSource, conf.Cache, conf.CacheSource)
	}
	if d.EngineCache.Class != contextwin.CacheCheckpointed || d.EngineCache.SWA != 1024 {
		t.Errorf("Discover engine cache = %+v, want what the header says (checkpointed, 1024)", d.EngineCache)
	}
}

func TestDiscoverCacheOllama(t *testing.T) {
	models := []byte(`{"object":"list","data":[{"id":"gemma3:latest","object":"model","created":1717000000,"owned_by":"library"}]}`)
	show := readCapture(t, "docs-samples/ollama_api_show_docs.json")
	var swa map[string]any
	if err := json.Unmarshal(show, &swa); err != nil {
		t.Fatal(err)
	}
	swa["model_info"] = map[string]any{"general.architecture": "gemma3", "gemma3.attention.sliding_window": 1024, "gemma3.block_count": 34}
	swaShow, _ := json.Marshal(swa)
	for _, tc := range []struct {
		name   string
		show   []byte
		want   contextwin.CacheModel
		text   string
		advice string
	}{
		{"the docs' llama", show, contextwin.CacheModel{Class: contextwin.CacheDense}, "Ollama /api/show model_info (llama: no sliding window or recurrent layers)", "any common prefix"},
		{"gemma3", swaShow, contextwin.CacheModel{Class: contextwin.CacheCheckpointed, SWA: 1024}, "Ollama /api/show model_info (gemma3: sliding window 1024)",
			"Ollama keeps its cache for a change within the last 1024 tokens"},
		{"no model_info", []byte(`{"parameters":"num_ctx 8192"}`), contextwin.CacheModel{Class: contextwin.CacheUnknown}, "gave no model_info", "not known"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeEngine(t, map[string]route{
				"GET /v1/models":   {body: models},
				"POST /api/show":   {body: tc.show},
				"GET /api/version": {body: []byte(`{"version":"0.12.0"}`)},
			})
			d, err := Discover(context.Background(), Options{BaseURL: srv.URL + "/v1"}, Configured{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Cache != tc.want || !strings.Contains(d.CacheSource.Text, tc.text) {
				t.Errorf("Discover cache = %+v (%s), want %+v (%s)", d.Cache, d.CacheSource, tc.want, tc.text)
			}
			if a := d.CacheAdvice(); !strings.Contains(a, tc.advice) {
				t.Errorf("CacheAdvice() = %q, want it to hold %q", a, tc.advice)
			}
		})
	}
}

func TestDiscoverCacheVLLMAndSGLang(t *testing.T) {
	vllmModels := readCapture(t, "docs-samples/vllm_v1_models_constructed.json")
	metrics := []byte("# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n" +
		`vllm:cache_config_info{block_size="32",cache_dtype="auto",enable_prefix_caching="True",gpu_memory_utilization="0.9"} 1.0` + "\n")
	sglangModels := []byte(`{"object":"list","data":[{"id":"qwen","object":"model","owned_by":"sglang","max_model_len":32768}]}`)
	for _, tc := range []struct {
		name   string
		routes map[string]route
		want   contextwin.CacheModel
		source string
	}{
		{"vLLM without /metrics: its default", map[string]route{"GET /v1/models": {body: vllmModels}},
			contextwin.CacheModel{Class: contextwin.CacheBlocks, Block: 16}, "vllm-default-block-size"},
		{"vLLM's /metrics", map[string]route{"GET /v1/models": {body: vllmModels}, "GET /metrics": {body: metrics}},
			contextwin.CacheModel{Class: contextwin.CacheBlocks, Block: 32}, "vllm-metrics-block-size"},
		{"SGLang without server info: pages of 1", map[string]route{"GET /v1/models": {body: sglangModels}},
			contextwin.CacheModel{Class: contextwin.CacheDense}, "sglang-default-page-size"},
		{"SGLang with pages of 64", map[string]route{"GET /v1/models": {body: sglangModels}, "GET /get_server_info": {body: []byte(`{"page_size":64}`)}},
			contextwin.CacheModel{Class: contextwin.CacheBlocks, Block: 64}, "sglang-server-info-page-size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Discover(context.Background(), Options{BaseURL: fakeEngine(t, tc.routes).URL + "/v1"}, Configured{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Cache != tc.want || d.CacheSource.ID != tc.source {
				t.Errorf("Discover cache = %+v (%+v), want %+v from %s", d.Cache, d.CacheSource, tc.want, tc.source)
			}
		})
	}
}
