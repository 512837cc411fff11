package llamatest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
)

// The same model writes the same bytes; another seed, other weights; the
// header is GGUF version 3 with the tensors and metadata its architecture
// declares.
func TestWriteModelIsDeterministic(t *testing.T) {
	write := func(m Model) []byte {
		var b bytes.Buffer
		if err := WriteModel(&b, m); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	tests := []struct {
		name         string
		m            Model
		tensors, kvs uint64
	}{
		{"llama", TinyModel, uint64(3 + 9*TinyModel.Blocks), 20},
		{"gemma3", TinySWAModel, uint64(2 + 13*TinySWAModel.Blocks), 22},
		{"mamba", TinyRecurrentModel, uint64(2 + 10*TinyRecurrentModel.Blocks), 23},
	}
	for _, tt := range tests {
		a, b := write(tt.m), write(tt.m)
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: two writes differ", tt.name)
		}
		other := tt.m
		other.Seed++
		if c := write(other); len(c) != len(a) || bytes.Equal(c, a) {
			t.Errorf("%s: seed %d wrote %d bytes equal to seed %d's: %v", tt.name, other.Seed, len(c), tt.m.Seed, bytes.Equal(c, a))
		}
		if got := string(a[:4]); got != "GGUF" {
			t.Fatalf("%s: magic = %q, want GGUF", tt.name, got)
		}
		version, tensors, kvs := binary.LittleEndian.Uint32(a[4:]), binary.LittleEndian.Uint64(a[8:]), binary.LittleEndian.Uint64(a[16:])
		if version != 3 || tensors != tt.tensors || kvs != tt.kvs {
			t.Errorf("%s header: version %d, %d tensors, %d metadata = want 3, %d, %d", tt.name, version, tensors, kvs, tt.tensors, tt.kvs)
		}
		if arch := "general.architecture"; !bytes.Contains(a, append([]byte(arch), 8, 0, 0, 0, byte(len(tt.name)))) {
			t.Errorf("%s: no %s of %d bytes", tt.name, arch, len(tt.name))
		}
		if len(a)%ggufAlignment != 0 {
			t.Errorf("%s: the file is %d bytes, not a multiple of the alignment %d", tt.name, len(a), ggufAlignment)
		}
	}
	// The zero Arch is the llama.
	explicit := TinyModel
	explicit.Arch = ArchLlama
	if !bytes.Equal(write(explicit), write(TinyModel)) {
		t.Error("Arch llama writes other bytes than the zero Arch")
	}
	for _, bad := range []Model{
		{Embd: 30, Blocks: 1, Heads: 4, FF: 8},
		{Arch: ArchGemma3, Embd: 32, Blocks: 1, Heads: 2, FF: 64},
		{Arch: "rwkv", Embd: 32, Blocks: 1},
	} {
		if err := WriteModel(io.Discard, bad); err == nil {
			t.Errorf("WriteModel(%+v) was accepted", bad)
		}
	}
}

// The patch puts the real figures in a completion, in a stream's usage
// chunk and in the timings of its last chunk, and leaves the rest alone.
func TestPatchPutsTheRealFigures(t *testing.T) {
	x := Exchange{PromptTokens: 300, CacheN: 200, PromptN: 100, PromptMS: 50}
	tests := []struct{ in, want string }{
		{`{"choices":[],"usage":{"completion_tokens":5,"prompt_tokens":40,"total_tokens":45,"prompt_tokens_details":{"cached_tokens":0}},` +
			`"timings":{"cache_n":0,"prompt_n":40,"prompt_ms":20,"prompt_per_token_ms":0.5,"prompt_per_second":2000,"predicted_n":5}}`,
			`{"choices":[],"timings":{"cache_n":200,"predicted_n":5,"prompt_ms":50,"prompt_n":100,"prompt_per_second":2000,"prompt_per_token_ms":0.5},` +
				`"usage":{"completion_tokens":5,"prompt_tokens":300,"prompt_tokens_details":{"cached_tokens":200},"total_tokens":305}}`},
		{`{"choices":[{"delta":{"content":"hi"}}],"usage":null}`, `{"choices":[{"delta":{"content":"hi"}}],"usage":null}`},
		{`[DONE]`, `[DONE]`},
	}
	for _, tt := range tests {
		if got := string(x.patch([]byte(tt.in))); got != tt.want {
			t.Errorf("patch(%s) =\n%s, want\n%s", tt.in, got, tt.want)
		}
	}
}

// The recipe holds on the real engine: one token per byte (a space costs
// three), the prompt cache reuses an append to the token, and a prompt
// longer than the window is refused with llama.cpp's 400.
func TestRealEngine(t *testing.T) {
	s := Start(t, Options{Ctx: 1024})
	chat := func(msgs ...string) (int, map[string]any) {
		t.Helper()
		var m []map[string]string
		for i, c := range msgs {
			m = append(m, map[string]string{"role": []string{"user", "assistant"}[i%2], "content": c})
		}
		body, _ := json.Marshal(map[string]any{"messages": m, "max_tokens": 1})
		resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, v
	}
	figures := func(v map[string]any) string {
		usage, _ := v["usage"].(map[string]any)
		timings, _ := v["timings"].(map[string]any)
		return fmt.Sprintf("prompt_tokens=%v cache_n=%v prompt_n=%v", usage["prompt_tokens"], timings["cache_n"], timings["prompt_n"])
	}
	// ChatML puts 50 bytes around the first message:
	// "<|im_start|>user\n" + "abc" + "<|im_end|>\n<|im_start|>assistant\n";
	// the tokenizer adds a space in front (U+2581, three bytes).
	if status, v := chat("abc"); status != 200 || figures(v) != "prompt_tokens=56 cache_n=0 prompt_n=56" {
		t.Fatalf("first request: %d %s, want 200 prompt_tokens=56 cache_n=0 prompt_n=56", status, figures(v))
	}
	// Then "x y<|im_end|>\n" (16 tokens: the space is three) and the
	// user's "<|im_start|>user\ndef<|im_end|>\n<|im_start|>assistant\n".
	if status, v := chat("abc", "x y", "def"); status != 200 || figures(v) != "prompt_tokens=125 cache_n=56 prompt_n=69" {
		t.Fatalf("an append: %d %s, want 200 prompt_tokens=125 cache_n=56 prompt_n=69", status, figures(v))
	}
	status, v := chat(strings.Repeat("z", 1100))
	errv, _ := v["error"].(map[string]any)
	if status != 400 || errv["type"] != "exceed_context_size_error" || errv["n_ctx"] != 1024.0 || errv["n_prompt_tokens"] != 1153.0 {
		t.Fatalf("an overlong prompt: %d %v, want 400 exceed_context_size_error of 1153 tokens in 1024", status, v)
	}
}

// Each class loads in the real engine as its kind of memory, which the
// startup log at -lv 4 tells, and serves a chat request with the same
// tokenizer and template.
func TestRealEngineClasses(t *testing.T) {
	tests := []struct {
		name  string
		model Model
		logs  []string
	}{
		{"dense", TinyModel, []string{"arch                  = llama", "n_swa                 = 0", "llama_kv_cache: size ="}},
		{"swa", TinySWAModel, []string{"arch                  = gemma3", "n_swa                 = 512",
			"creating non-SWA KV cache", "(  1024 cells,   1 layers,  1/1 seqs)"}},
		{"swa mixed", Model{Arch: ArchGemma3, Embd: 32, Blocks: 6, Heads: 2, FF: 64, Window: 512, Context: 131072, Seed: 1},
			[]string{"n_swa                 = 512", "(  1024 cells,   5 layers,  1/1 seqs)", "(  1024 cells,   1 layers,  1/1 seqs)"}},
		{"recurrent", TinyRecurrentModel, []string{"arch                  = mamba", "ssm_d_state           = 16", "llama_memory_recurrent: size ="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Start(t, Options{Ctx: 1024, Model: tt.model, Args: []string{"-lv", "4"}})
			// The log is copied from the process's output as it comes: under
			// load its last lines may follow /health's answer.
			log := s.Log()
			for deadline := time.Now().Add(testslow.Scale(10 * time.Second)); time.Now().Before(deadline); log = s.Log() {
				if !slices.ContainsFunc(tt.logs, func(w string) bool { return !strings.Contains(log, w) }) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			for _, want := range tt.logs {
				if !strings.Contains(log, want) {
					t.Errorf("the startup log has no %q\n%s", want, log)
				}
			}
			x := chatRaw(t, s.URL, "abc")
			if x.Status != 200 || x.PromptTokens != 56 || x.CacheN != 0 || x.PromptN != 56 {
				t.Errorf("a first request: %+v, want 200 with 56 tokens, none cached", x)
			}
		})
	}
}

// TestRealEngineTakesReasoningBack: llama-server accepts an assistant
// message that carries reasoning_content beside an empty content, as the
// agent sends a reasoning-only reply back; this model's ChatML template
// renders none of it (the prompt has the same tokens without it), and
// /props says whether the template preserves reasoning.
func TestRealEngineTakesReasoningBack(t *testing.T) {
	s := Start(t, Options{Ctx: 1024})
	prompt := func(assistant map[string]any) (int, float64) {
		t.Helper()
		msgs := []map[string]any{{"role": "user", "content": "abc"}, assistant, {"role": "user", "content": "def"}}
		body, _ := json.Marshal(map[string]any{"messages": msgs, "max_tokens": 1})
		resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v struct {
			Usage struct {
				PromptTokens float64 `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, v.Usage.PromptTokens
	}
	status, plain := prompt(map[string]any{"role": "assistant", "content": ""})
	if status != 200 {
		t.Fatalf("an empty assistant message: status %d, want 200", status)
	}
	if status, n := prompt(map[string]any{"role": "assistant", "content": "", "reasoning_content": "Nothing to do."}); status != 200 || n != plain {
		t.Errorf("a reasoning-only assistant message: status %d, %v prompt tokens; want 200 and %v, as without the reasoning", status, n, plain)
	}
	resp, err := http.Get(s.URL + "/props")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var props struct {
		Caps map[string]any `json:"chat_template_caps"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&props); err != nil {
		t.Fatal(err)
	}
	if v, ok := props.Caps["supports_preserve_reasoning"].(bool); !ok || v {
		t.Errorf("/props chat_template_caps.supports_preserve_reasoning = %v (%T), want false for ChatML", props.Caps["supports_preserve_reasoning"], props.Caps["supports_preserve_reasoning"])
	}
}
