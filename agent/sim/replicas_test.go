package sim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// A router sends chat requests by its policy: round-robin one replica
// after another; session keeps a session on one replica (new ones on the
// least loaded, a subagent beside its parent) and spreads requests
// without an id; prefix-hash keeps a conversation whose first messages
// stay the same. Each replica answers from its own cache, and a session's
// script reaches it on any replica.
func TestReplicas(t *testing.T) {
	send := func(t *testing.T, url string, h map[string]string, first string) {
		t.Helper()
		body := `{"messages":[{"role":"system","content":"sys"},{"role":"user","content":"` + first + `"},{"role":"assistant","content":"ok"},{"role":"user","content":"more"}]}`
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	for _, tc := range []struct {
		route Route
		reqs  []map[string]string
		first []string
		want  []int
	}{
		{RoundRobin, []map[string]string{{SessionHeader: "a"}, {SessionHeader: "a"}, {SessionHeader: "a"}}, nil, []int{1, 1, 1}},
		{SessionRoute, []map[string]string{{SessionHeader: "a"}, {SessionHeader: "b"}, {SessionHeader: "a"}, {SessionHeader: "a/sub-1", ParentHeader: "a"}, {SessionHeader: "c"}},
			nil, []int{3, 1, 1}},
		{SessionRoute, []map[string]string{{}, {}, {}}, nil, []int{1, 1, 1}},
		{PrefixHash, []map[string]string{{}, {}, {}}, []string{"x", "x", "x"}, []int{3}},
	} {
		t.Run(string(tc.route), func(t *testing.T) {
			r, err := NewReplicas(Config{Ctx: 4096}, 3, tc.route)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(r.Handler())
			defer ts.Close()
			r.AppendScriptFor("k", Turn{Content: "scripted"})
			for i, h := range tc.reqs {
				first := "task"
				if tc.first != nil {
					first = tc.first[i]
				}
				if i == 0 {
					h = map[string]string{ScriptHeader: "k", SessionHeader: h[SessionHeader], ParentHeader: h[ParentHeader]}
				}
				send(t, ts.URL, h, first)
			}
			got := slices.DeleteFunc(r.Sent(), func(n int) bool { return n == 0 })
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("requests per replica %v, want %v in some order", r.Sent(), tc.want)
			}
			var scripted int
			for _, s := range r.Servers() {
				for _, rec := range s.Requests() {
					if rec.Source == "script" {
						scripted++
					}
				}
			}
			if scripted != 1 {
				t.Errorf("%d requests answered from the session's script, want the first", scripted)
			}
		})
	}
	if _, err := ParseRoute("random"); err == nil {
		t.Error("ParseRoute(random) = nil error")
	}
}

// vLLM's KV cache of a budget keeps the sequences most recently used
// that fit in it: the blocks two sequences share count once, a sequence
// extended is kept once, and the least recently used goes first.
func TestSharedCacheBudget(t *testing.T) {
	seq := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = prefix + string(rune('a'+i%26))
		}
		return out
	}
	c := &sharedCache{block: 16, budget: 100}
	sys := seq("s", 40)
	a, b := append(slices.Clone(sys), seq("a", 30)...), append(slices.Clone(sys), seq("b", 30)...)
	c.keep(sharedSeq{tokens: a})
	c.keep(sharedSeq{tokens: b})
	if h := c.held(); h != 100 || len(c.seqs) != 2 {
		t.Fatalf("two sequences sharing 40 tokens: held %d in %d sequences, want 100 in 2", h, len(c.seqs))
	}
	c.acquire(context.Background(), a, -1, true) // a used last: b goes first
	c.keep(sharedSeq{tokens: append(slices.Clone(a), seq("x", 10)...)})
	if len(c.seqs) != 1 || len(c.seqs[0].tokens) != 80 {
		t.Errorf("after a grew past the budget: %d sequences, the first of %d tokens; want a alone, 80", len(c.seqs), len(c.seqs[0].tokens))
	}
}

// vLLM serving a hybrid model keeps its recurrent state only at the last
// block boundary of each prompt: a pure append re-prefills from there (up
// to a block), a change restarts at the last kept boundary before it.
func TestHybridCache(t *testing.T) {
	srv, err := New(Config{Flavor: VLLM, Cache: CacheModel{Kind: CacheRecurrent, Block: 64}, Ctx: 4096})
	if err != nil {
		t.Fatal(err)
	}
	c := srv.cache.(*sharedCache)
	tok := func(n int, tag string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = tag + string(rune('a'+i%26))
		}
		return out
	}
	ctx := context.Background()
	first := tok(300, "p") // boundary 256
	h, _ := c.acquire(ctx, first, -1, true)
	h.done(append(slices.Clone(first), tok(20, "r")...), 20)
	appended := append(append(slices.Clone(first), tok(20, "r")...), tok(100, "u")...)
	if h, _ = c.acquire(ctx, appended, -1, true); h.cacheN != 256 {
		t.Errorf("a pure append reuses %d tokens, want 256: the first prompt's last block boundary", h.cacheN)
	}
	h.done(appended, 0) // boundary 384
	changed := append(slices.Clone(appended[:350]), tok(80, "z")...)
	if h, _ = c.acquire(ctx, changed, -1, true); h.cacheN != 256 {
		t.Errorf("a change at 350 reuses %d tokens, want 256: the last kept boundary before it (384 is past it)", h.cacheN)
	}
	dense := &sharedCache{block: 64}
	dh, _ := dense.acquire(ctx, first, -1, true)
	dh.done(first, 0)
	if dh, _ = dense.acquire(ctx, changed[:330], -1, true); dh.cacheN != 256 {
		t.Errorf("a dense model's blocks: reuse %d, want 256 (the whole blocks of the 300 shared)", dh.cacheN)
	}
	if f, k, err := ParseEngine("vllm-hybrid"); err != nil || f != VLLM || k != CacheRecurrent {
		t.Errorf("ParseEngine(vllm-hybrid) = %s, %s, %v", f, k, err)
	}
	if cfg := srv.Config(); cfg.Cache.Block != 64 {
		t.Errorf("block %d, want the configured 64", cfg.Cache.Block)
	}
	if d, _ := New(Config{Flavor: VLLM, Cache: CacheModel{Kind: CacheRecurrent}}); d.Config().Cache.Block != DefaultHybridBlock {
		t.Errorf("a hybrid model's default block %d, want %d", d.Config().Cache.Block, DefaultHybridBlock)
	}
}
