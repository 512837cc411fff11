package llamatest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// chatRaw sends one chat request of alternating user and assistant
// messages straight to the engine at url, with max_tokens 1, and returns
// its figures.
func chatRaw(t *testing.T, url string, msgs ...string) Exchange {
	t.Helper()
	return chatWith(t, url, nil, msgs...)
}

// chatWith is chatRaw with more fields in the request's body.
func chatWith(t *testing.T, url string, fields map[string]any, msgs ...string) Exchange {
	t.Helper()
	var m []map[string]string
	for i, c := range msgs {
		m = append(m, map[string]string{"role": []string{"user", "assistant"}[i%2], "content": c})
	}
	req := map[string]any{"messages": m, "max_tokens": 1}
	for k, v := range fields {
		req[k] = v
	}
	body, _ := json.Marshal(req)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
		Timings struct {
			CacheN  int `json:"cache_n"`
			PromptN int `json:"prompt_n"`
		} `json:"timings"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return Exchange{Body: body, Status: resp.StatusCode, PromptTokens: v.Usage.PromptTokens, CacheN: v.Timings.CacheN, PromptN: v.Timings.PromptN}
}

// The classes of model, as TestCheckpointRules and the lsp package's
// real-engine tests run them.
var classes = []struct {
	name  string
	model Model
}{{"dense", TinyModel}, {"swa", TinySWAModel}, {"recurrent", TinyRecurrentModel}}

// letters is n pseudo-random letters a…j (one token each), the same for
// the same seed.
func letters(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(rng.IntN(10))
	}
	return string(b)
}

// changed is s with its byte i replaced by 'z'.
func changed(s string, i int) string { return s[:i] + "z" + s[i+1:] }

// In ChatML over the byte vocabulary, a first user message's byte i is
// the prompt's token 20+i ("<|im_start|>user\n" and the tokenizer's
// leading U+2581), and the prompt ends in the 33 tokens of
// "<|im_end|>\n<|im_start|>assistant\n"; the reply "x" and the next user
// message's header take 29 tokens before its first byte.
const (
	firstContent = 20
	promptTail   = 33
	nextContent  = 29
)

func TestCheckpointRules(t *testing.T) {
	Need(t)
	const la = 3000
	a := letters(la, 1)
	b := letters(200, 2)
	n := firstContent + la + promptTail                            // 3053
	at := func(c int) string { return changed(a, c-firstContent) } // a changed at token c
	n2 := n + nextContent + len(b) + promptTail                    // 3315, the append of "x", b
	atB := func(c int) []string { return []string{a, "x", changed(b, c-n-nextContent)} }
	type want struct{ dense, swa, recurrent int }
	tests := []struct {
		name  string
		args  []string
		steps [][]string // each a request's messages
		want  want       // the last request's cache_n
	}{
		{"append", nil, [][]string{{a}, {a, "x", b}}, want{n, n, n}},
		{"resend", nil, [][]string{{a}, {a}}, want{n - 1, n - 1, n - 4}},
		{"change in the middle", nil, [][]string{{a}, {at(1500)}}, want{1500, 0, 0}},
		{"change after the first checkpoint", nil, [][]string{{a}, {at(2600)}}, want{2600, 2600, n - 516}},
		{"change at the sliding window's edge", nil, [][]string{{a}, {at(n - 513)}}, want{n - 513, n - 513, n - 516}},
		{"change before the sliding window's edge", nil, [][]string{{a}, {at(n - 514)}}, want{n - 514, n - 517, n - 516}},
		{"change at the first checkpoint", nil, [][]string{{a}, {at(n - 516)}}, want{n - 516, n - 517, n - 516}},
		{"change just before the first checkpoint", nil, [][]string{{a}, {at(n - 517)}}, want{n - 517, n - 517, 0}},
		{"change two before the first checkpoint", nil, [][]string{{a}, {at(n - 518)}}, want{n - 518, 0, 0}},
		// The append began at n, where the slot's state was: it made a
		// checkpoint there, and at n2-4.
		{"a checkpoint where the append began", nil, [][]string{{a}, {a, "x", b}, atB(3100)}, want{3100, 3100, n}},
		// It processed n…n2 only: no checkpoint at n2-516, which it did
		// not process (the sliding window still reaches 2900: n2-513 is
		// 2802).
		{"no checkpoint in the reused part", nil, [][]string{{a}, {a, "x", b}, {at(2900), "x", b}}, want{2900, 2900, n - 516}},
		// --ctx-checkpoints 2: the append's two checkpoints dropped the
		// oldest two, n-516 and n-4.
		{"the oldest dropped", []string{"-ctxcp", "2"}, [][]string{{a}, {a, "x", b}, {at(2800), "x", b}}, want{2800, 0, 0}},
		{"the oldest kept", nil, [][]string{{a}, {a, "x", b}, {at(2800), "x", b}}, want{2800, n - 517, n - 516}},
	}
	if n != 3053 || n2 != 3315 {
		t.Fatalf("the prompts are %d and %d tokens, want 3053 and 3315", n, n2)
	}
	for _, c := range classes {
		t.Run(c.name, func(t *testing.T) {
			for _, tt := range tests {
				s := Start(t, Options{Ctx: 8192, Model: c.model, Args: tt.args})
				var got []Exchange
				for _, msgs := range tt.steps {
					got = append(got, chatRaw(t, s.URL, msgs...))
				}
				last := got[len(got)-1]
				w := map[string]int{"dense": tt.want.dense, "swa": tt.want.swa, "recurrent": tt.want.recurrent}[c.name]
				if last.Status != 200 || last.CacheN != w || last.CacheN+last.PromptN != last.PromptTokens {
					t.Errorf("%s: the last request: status %d, cache_n %d + prompt_n %d of %d, want cache_n %d",
						tt.name, last.Status, last.CacheN, last.PromptN, last.PromptTokens, w)
				}
				var figures []string
				for _, x := range got {
					figures = append(figures, fmt.Sprintf("%d/%d", x.CacheN, x.PromptTokens))
				}
				t.Logf("%-40s cache_n/prompt_tokens %s", tt.name, strings.Join(figures, " "))
			}
		})
	}
}
