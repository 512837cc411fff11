package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
)

// writeSWAHeader writes the GGUF header of a Gemma 3 model (6 layers,
// window 1024, 2 KV heads of 256): the key/value section discovery reads,
// no tensors.
func writeSWAHeader(t *testing.T) string {
	t.Helper()
	le := binary.LittleEndian
	var b bytes.Buffer
	str := func(s string) { binary.Write(&b, le, uint64(len(s))); b.WriteString(s) }
	pairs := []struct {
		key string
		val any
	}{
		{"general.architecture", "gemma3"}, {"gemma3.block_count", uint32(6)}, {"gemma3.embedding_length", uint32(640)},
		{"gemma3.attention.head_count", uint32(4)}, {"gemma3.attention.head_count_kv", uint32(2)},
		{"gemma3.attention.key_length", uint32(256)}, {"gemma3.attention.value_length", uint32(256)},
		{"gemma3.attention.sliding_window", uint32(1024)},
	}
	b.WriteString("GGUF")
	binary.Write(&b, le, uint32(3))
	binary.Write(&b, le, uint64(0))
	binary.Write(&b, le, uint64(len(pairs)))
	for _, p := range pairs {
		str(p.key)
		switch v := p.val.(type) {
		case string:
			binary.Write(&b, le, uint32(8))
			str(v)
		case uint32:
			binary.Write(&b, le, uint32(4))
			binary.Write(&b, le, v)
		}
	}
	path := filepath.Join(t.TempDir(), "gemma-3-test.gguf")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// check names the cache class, where it came from and what it costs, in
// its JSON and its text.
func TestCheckCache(t *testing.T) {
	_, gemma := startTestSim(t, sim.Config{Ctx: 8192, Model: writeSWAHeader(t)})
	_, plain := startTestSim(t, sim.Config{Ctx: 8192})
	_, vllm := startTestSim(t, sim.Config{Ctx: 8192, Flavor: sim.VLLM})
	for _, tc := range []struct {
		name                       string
		env                        []string
		class, model, source, text string
		mib                        int
		lines                      []string
	}{
		{"the model's GGUF header: SWA", []string{"REIKA_ENDPOINT", gemma}, "checkpointed", "checkpointed (sliding window 1024)", "llamacpp-gguf-header",
			"the GGUF header of llama.cpp /props model_path gemma-3-test.gguf (gemma3: sliding window 1024)", 65, []string{
				"cache class     checkpointed (sliding window 1024)  (the GGUF header of llama.cpp /props model_path gemma-3-test.gguf (gemma3: sliding window 1024))",
				"cache cost      SWA model (window 1024): a change more than 1024 tokens before the prompt's end restarts from a context checkpoint, or from the start; " +
					"--swa-full keeps any prefix, at about 65 MiB more (if llama-server already runs with it, set cache_class dense)",
			}},
		{"the setting wins", []string{"REIKA_ENDPOINT", gemma, "REIKA_CACHE_CLASS", "dense"}, "dense", "dense", "env", "env REIKA_CACHE_CLASS", 65, []string{
			"cache class     dense",
			"(env REIKA_CACHE_CLASS)",
			"cache cost      any common prefix is kept: a change re-prefills from the first changed token",
			"  cache_class       dense",
		}},
		{"a model file not on this machine", []string{"REIKA_ENDPOINT", plain}, "unknown", "unknown", "cache-unknown",
			`llama.cpp /props model_path "models/reika-sim-7b-q4_k_m.gguf" is relative to the server's directory`, 0, []string{
				"cache cost      not known: priced as dense until the engine's cache_n figures say otherwise",
			}},
		{"vLLM", []string{"REIKA_ENDPOINT", vllm}, "blocks", "blocks of 16", "vllm-default-block-size", "vLLM's default block size (its /metrics did not give block_size)", 0, []string{
			"cache cost      whole blocks of 16 tokens are kept: a change re-prefills from the start of its block; " +
				"if the model is a hybrid (Qwen3.5, Nemotron-H, Granite 4 hybrid: recurrent layers beside attention), vLLM keeps its state only " +
				"at the last block boundary of each prompt: set cache_class boundary (REIKA_CACHE_CLASS) and cache_block",
		}},
		{"vLLM and a block told", []string{"REIKA_ENDPOINT", vllm, "REIKA_CACHE_BLOCK", "32"}, "blocks", "blocks of 32", "vllm-default-block-size",
			"vLLM's default block size (its /metrics did not give block_size)", 0, []string{
				"cache cost      whole blocks of 32 tokens are kept",
			}},
		{"vLLM serving a hybrid model, told", []string{"REIKA_ENDPOINT", vllm, "REIKA_CACHE_CLASS", "boundary", "REIKA_CACHE_BLOCK", "528"}, "boundary",
			"last block boundary only (blocks of 528)", "env", "env REIKA_CACHE_CLASS", 0, []string{
				"cache class     last block boundary only (blocks of 528)",
				"cache cost      hybrid model on vLLM (--mamba-cache-mode align): the recurrent state is kept only at the last boundary of blocks of 528 tokens of each prompt, " +
					"so every request re-prefills from up to a block before the last prompt's end (about 264 tokens a request)",
				"  cache_block       528",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := checkEnv(t, tc.env...)
			rep, code, stderr := runCheckJSON(t, env, "--no-tools")
			if code != 0 {
				t.Fatalf("check exit %d: %s", code, stderr)
			}
			if rep.CacheClass != tc.class || rep.CacheModel != tc.model || rep.CacheSource != tc.source || rep.CacheSourceText != tc.text || rep.SWAFullMiB != tc.mib {
				t.Errorf("check --json cache = %q %q (%s: %s), %d MiB; want %q %q (%s: %s), %d MiB",
					rep.CacheClass, rep.CacheModel, rep.CacheSource, rep.CacheSourceText, rep.SWAFullMiB, tc.class, tc.model, tc.source, tc.text, tc.mib)
			}
			var stdout, errOut bytes.Buffer
			if code := checkMain(context.Background(), []string{"--no-tools"}, env, &stdout, &errOut); code != 0 {
				t.Fatalf("check exit %d: %s", code, errOut.String())
			}
			// The table's columns are as wide as its widest value: compare
			// the words.
			words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
			for _, line := range tc.lines {
				if !strings.Contains(words(stdout.String()), words(line)) {
					t.Errorf("check printed\n%s\nwant it to contain %q", stdout.String(), line)
				}
			}
		})
	}
}

func TestCheckJSONCacheFields(t *testing.T) {
	_, base := startTestSim(t, sim.Config{Ctx: 8192})
	var stdout, stderr bytes.Buffer
	if code := checkMain(context.Background(), []string{"--json", "--no-tools"}, checkEnv(t, "REIKA_ENDPOINT", base), &stdout, &stderr); code != 0 {
		t.Fatalf("check exit %d: %s", code, stderr.String())
	}
	var fields map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &fields); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"cache_class", "cache_source", "cache_source_text", "cache_advice", "cache_model"} {
		if v, ok := fields[k].(string); !ok || v == "" {
			t.Errorf("check --json field %q = %v, want a string", k, fields[k])
		}
	}
}

// Behind llama.cpp's router mode (reika-lsp sim --router), check names the
// mode and shows the model's status and the window and cache class of the
// model itself, from the router's /v1/models and /props?model=: a router
// answers a bare /props with an error. A model put to sleep is told as
// having lost its cache.
func TestCheckLlamaRouter(t *testing.T) {
	model := writeSWAHeader(t)
	cfg, _, err := parseSimFlags([]string{"--router", "--ctx", "8192", "--model", model}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv, base := startTestSim(t, cfg)
	env := checkEnv(t, "REIKA_ENDPOINT", base, "REIKA_MODEL", model)
	rep, code, stderr := runCheckJSON(t, env, "--no-tools")
	if code != 0 {
		t.Fatalf("check exit %d: %s", code, stderr)
	}
	if !rep.Router || rep.ModelStatus != "loaded" || rep.Window != 8192 || rep.CacheClass != "checkpointed" {
		t.Errorf("check --json: router %v, status %q, window %d, class %q; want the router's loaded model, 8192, checkpointed",
			rep.Router, rep.ModelStatus, rep.Window, rep.CacheClass)
	}
	if err := srv.SetModelStatus(sim.ModelSleeping); err != nil {
		t.Fatal(err)
	}
	var stdout, errOut bytes.Buffer
	if code := checkMain(context.Background(), []string{"--no-tools"}, env, &stdout, &errOut); code != 0 {
		t.Fatalf("check exit %d: %s", code, errOut.String())
	}
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, line := range []string{
		"router mode",
		"model status sleeping (llama.cpp router: model " + model + " is sleeping: its prompt cache is gone",
		"window 8192 tokens",
		"cache class checkpointed (sliding window 1024)",
	} {
		if !strings.Contains(words(stdout.String()), words(line)) {
			t.Errorf("check printed\n%s\nwant it to contain %q", stdout.String(), line)
		}
	}
}
