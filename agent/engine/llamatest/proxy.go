package llamatest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/internal/testslow"
)

// Exchange is one chat request through the proxy and what the real engine
// made of it.
type Exchange struct {
	Seq  int    // from 1, in the order the requests were served
	Body []byte // the request as the client sent it
	// Prompt is the real engine's rendering of the request
	// (POST /apply-template): the text it tokenized.
	Prompt string
	// Status is the real engine's status: 200, or its refusal, which the
	// client got as the engine sent it (ErrorType is its error.type, e.g.
	// exceed_context_size_error, and Error its body).
	Status    int
	ErrorType string
	Error     string
	// PromptTokens (usage.prompt_tokens), CacheN and PromptN
	// (timings.cache_n and prompt_n) are the real engine's figures, the
	// ones the client read on the simulator's reply.
	PromptTokens, CacheN, PromptN int
	// PromptMS is the real engine's prefill time.
	PromptMS float64
}

// Proxy serves the OpenAI chat API in front of two engines: each chat
// request goes to the real engine with max_tokens 1 (and not streamed),
// which gives its prefill figures or its refusal, and then, unchanged, to
// the simulator, whose reply the client gets with the real figures put in
// its usage and timings (streamed or not, in llama.cpp's shapes). A
// refusal of the real engine reaches the client as the engine sent it, and
// the simulator never sees that request. The slot calls (GET /slots and
// POST /slots/{id}?action=…) go to the real engine, whose slots hold the
// cache, and so do GET /props and POST /tokenize, which tell the model
// (its file, whose header gives its cache class) and count in its
// tokens; every other request (discovery: /v1/models, /health, …) goes
// to the simulator.
//
// Chat requests are served one at a time, in the order they arrive, so
// the real engine's slot sees the client's sequence of prompts.
type Proxy struct {
	// URL is the proxy's base URL, without /v1.
	URL string

	real, replies string
	client        *http.Client
	other, engine *httputil.ReverseProxy

	chat      sync.Mutex // held through one chat exchange
	mu        sync.Mutex
	exchanges []Exchange
}

// StartProxy serves a Proxy on a free loopback port until the test ends.
// real is the llama-server's base URL, replies the simulator's (both
// without /v1).
func StartProxy(t testing.TB, real, replies string) *Proxy {
	t.Helper()
	target, err := url.Parse(replies)
	if err != nil {
		t.Fatalf("the simulator's URL %q: %v", replies, err)
	}
	realURL, err := url.Parse(real)
	if err != nil {
		t.Fatalf("the engine's URL %q: %v", real, err)
	}
	p := &Proxy{real: real, replies: replies, client: &http.Client{Timeout: testslow.Scale(30 * time.Second)},
		other: httputil.NewSingleHostReverseProxy(target), engine: httputil.NewSingleHostReverseProxy(realURL)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	p.URL = "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- sim.ServeHandler(ctx, ln, p, func() {}) }()
	t.Cleanup(func() {
		stop()
		<-served
	})
	return p
}

// Exchanges returns the chat requests served so far, in order.
func (p *Proxy) Exchanges() []Exchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Exchange(nil), p.exchanges...)
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/props" || r.URL.Path == "/tokenize" {
		p.engine.ServeHTTP(w, r)
		return
	}
	if r.URL.Path == "/slots" || strings.HasPrefix(r.URL.Path, "/slots/") {
		// A slot action waits for the chat exchange under way, as the
		// engine's own queue would.
		p.chat.Lock()
		defer p.chat.Unlock()
		p.engine.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		p.other.ServeHTTP(w, r)
		return
	}
	p.chat.Lock()
	defer p.chat.Unlock()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	x, refusal, err := p.probe(r.Context(), body)
	p.mu.Lock()
	x.Seq = len(p.exchanges) + 1
	p.exchanges = append(p.exchanges, x)
	p.mu.Unlock()
	if err != nil {
		http.Error(w, "llamatest proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	if refusal != nil {
		w.Header().Set("Content-Type", refusal.contentType)
		w.WriteHeader(x.Status)
		w.Write(refusal.body)
		return
	}
	p.reply(w, r, body, x)
}

// response is an engine's answer, read whole.
type response struct {
	status      int
	contentType string
	body        []byte
}

// probe sends the request to the real engine with max_tokens 1, not
// streamed, and asks it how it renders the request. It returns the real
// engine's answer when that is a refusal.
func (p *Proxy) probe(ctx context.Context, body []byte) (Exchange, *response, error) {
	x := Exchange{Body: body}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return x, nil, fmt.Errorf("the request is not a JSON object: %w", err)
	}
	top["max_tokens"] = json.RawMessage("1")
	top["stream"] = json.RawMessage("false")
	delete(top, "stream_options")
	probe, err := json.Marshal(top)
	if err != nil {
		return x, nil, err
	}
	if tmpl, err := p.post(ctx, p.real+"/apply-template", probe); err == nil && tmpl.status == http.StatusOK {
		var v struct {
			Prompt string `json:"prompt"`
		}
		if json.Unmarshal(tmpl.body, &v) == nil {
			x.Prompt = v.Prompt
		}
	}
	resp, err := p.post(ctx, p.real+"/v1/chat/completions", probe)
	if err != nil {
		return x, nil, fmt.Errorf("the real engine: %w", err)
	}
	x.Status = resp.status
	if resp.status != http.StatusOK {
		var e struct {
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		json.Unmarshal(resp.body, &e)
		x.ErrorType, x.Error = e.Error.Type, string(resp.body)
		return x, resp, nil
	}
	var v struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
		Timings struct {
			CacheN   int     `json:"cache_n"`
			PromptN  int     `json:"prompt_n"`
			PromptMS float64 `json:"prompt_ms"`
		} `json:"timings"`
	}
	if err := json.Unmarshal(resp.body, &v); err != nil {
		return x, nil, fmt.Errorf("the real engine's answer is not JSON: %w", err)
	}
	x.PromptTokens, x.CacheN, x.PromptN, x.PromptMS = v.Usage.PromptTokens, v.Timings.CacheN, v.Timings.PromptN, v.Timings.PromptMS
	return x, nil, nil
}

func (p *Proxy) post(ctx context.Context, url string, body []byte) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &response{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: b}, nil
}

// reply forwards the request to the simulator and copies its answer to
// the client, event by event when streamed, with x's figures put in.
func (p *Proxy) reply(w http.ResponseWriter, r *http.Request, body []byte, x Exchange) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, p.replies+r.URL.Path, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, "llamatest proxy: the simulator: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for _, h := range []string{"Content-Type", "Cache-Control", "Server"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	if resp.StatusCode != http.StatusOK {
		io.Copy(w, resp.Body)
		return
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return
		}
		w.Write(x.patch(b))
		return
	}
	rc := http.NewResponseController(w)
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadBytes('\n')
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			line = append(append([]byte("data: "), x.patch(bytes.TrimRight(data, "\r\n"))...), '\n')
		}
		if _, werr := w.Write(line); werr != nil {
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			rc.Flush()
		}
		if err != nil {
			rc.Flush()
			return
		}
	}
}

// patch puts the real engine's prompt figures in a completion or a
// stream chunk: usage.prompt_tokens (and total_tokens,
// prompt_tokens_details.cached_tokens) and timings.cache_n, prompt_n,
// prompt_ms and the rates derived from it. Anything that is not a JSON
// object with those fields ("[DONE]", a chunk without figures) passes
// unchanged.
func (x Exchange) patch(data []byte) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return data
	}
	changed := false
	if raw, ok := top["usage"]; ok {
		var u map[string]json.RawMessage
		if json.Unmarshal(raw, &u) == nil && u != nil {
			var completion int
			json.Unmarshal(u["completion_tokens"], &completion)
			u["prompt_tokens"] = number(x.PromptTokens)
			u["total_tokens"] = number(x.PromptTokens + completion)
			u["prompt_tokens_details"] = json.RawMessage(fmt.Sprintf(`{"cached_tokens":%d}`, x.CacheN))
			top["usage"], changed = mustJSON(u), true
		}
	}
	if raw, ok := top["timings"]; ok {
		var tm map[string]json.RawMessage
		if json.Unmarshal(raw, &tm) == nil && tm != nil {
			tm["cache_n"] = number(x.CacheN)
			tm["prompt_n"] = number(x.PromptN)
			tm["prompt_ms"] = mustJSON(x.PromptMS)
			perToken, perSecond := 0.0, 0.0
			if x.PromptN > 0 && x.PromptMS > 0 {
				perToken, perSecond = x.PromptMS/float64(x.PromptN), 1e3*float64(x.PromptN)/x.PromptMS
			}
			tm["prompt_per_token_ms"] = mustJSON(perToken)
			tm["prompt_per_second"] = mustJSON(perSecond)
			top["timings"], changed = mustJSON(tm), true
		}
	}
	if !changed {
		return data
	}
	return mustJSON(top)
}

func number(n int) json.RawMessage { return json.RawMessage(fmt.Sprint(n)) }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llamatest: marshal %T: %v", v, err))
	}
	return b
}
