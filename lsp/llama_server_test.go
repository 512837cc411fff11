package lsp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/engine/llamatest"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/internal/testslow"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// A session against a real llama-server (llamatest: Debian's build over a
// tiny random-weight model), through a proxy that takes the replies from
// the simulator and the prefill figures and refusals from the real engine,
// on each class of model: dense (llama), sliding-window (gemma3, a window
// of 512) and recurrent (mamba). The server is told a window of 16384
// tokens; the engine serves 8192. The model reads 66 logs (30 by default)
// of ~900 tokens
// each (the engine's tokenizer spends a token per byte), so the
// conversation outgrows the engine's window and then, folded, the learnt
// one, again and again.
//
// On every class, every request that appends to the previous one is
// reused to the token by the engine's prompt cache (cache_n = the previous
// prompt_tokens), and every request that does not follows a shrink event;
// the real refusal (HTTP 400 exceed_context_size_error) is recovered by
// the emergency fold with one retry, and no later request is larger than
// the window. Where a shrink event restarts the engine depends on the
// class (llamatest's doc: the dense model at the change, the others at a
// checkpoint at or before it, or at 0); the test logs it per event, with
// the checkpoint requests the agent sends after a fold on the others, and
// prefilled/growth per class. No event restarts from token 0, and the
// sliding-window and recurrent models prefill at most 1.03× what the
// dense one does (0.96× measured, their front recap rewritten at every
// fold at a middle recap's size; 1.37× when every engine was priced as
// dense). The
// recurrent model runs once more with llama-server started as check
// advises (--checkpoint-min-step 512) and Reika told so
// (REIKA_CHECKPOINT_MIN_STEP): the slot must keep the checkpoints the
// planner then counts on.
func TestRealLlamaServer(t *testing.T) {
	n := 30 // the conversation outgrows the windows fewer times
	if testslow.Long {
		n = 66
	}
	prefilled := map[string]int{}
	for _, class := range []struct {
		name  string
		model llamatest.Model
		step  int // llama-server's --checkpoint-min-step, Reika told it; 0: neither
	}{{"dense", llamatest.TinyModel, 0}, {"swa", llamatest.TinySWAModel, 0}, {"recurrent", llamatest.TinyRecurrentModel, 0},
		{"recurrent-told-step", llamatest.TinyRecurrentModel, 512}} {
		t.Run(class.name, func(t *testing.T) { prefilled[class.name] = realSession(t, class.name, class.model, n, class.step) })
	}
	dense := prefilled["dense"]
	for _, class := range []string{"swa", "recurrent", "recurrent-told-step"} {
		if p := prefilled[class]; dense > 0 && p > 0 && float64(p) > 1.03*float64(dense) {
			t.Errorf("%s prefilled %d tokens, more than 1.03 × the dense model's %d", class, p, dense)
		} else if dense > 0 && p > 0 {
			t.Logf("%s prefilled %.2f × what the dense model did", class, float64(p)/float64(dense))
		}
	}
}

// realSession runs the session of TestRealLlamaServer, of n reads, on a
// real engine serving model, and returns the tokens it prefilled.
func realSession(t *testing.T, class string, model llamatest.Model, n, step int) int {
	opts := llamatest.Options{Ctx: 8192, Model: model}
	env := map[string]string{"REIKA_CONTEXT_WINDOW": "16384"}
	if step > 0 {
		// Started as check advises, and Reika told so.
		opts.Args = []string{"--checkpoint-min-step", fmt.Sprint(step)}
		env["REIKA_CHECKPOINT_MIN_STEP"] = fmt.Sprint(step)
	}
	real := llamatest.Start(t, opts)
	var proxy *llamatest.Proxy
	script := append(shortReadTurns("a", n), sim.Turn{Content: "Every build passed."})
	e := lsptest.Start(t, lsptest.Config{
		Caps:    lsptest.Full(),
		Files:   shortLogs("a", n),
		Env:     env,
		Engine:  sim.Config{Ctx: 16384, Script: script},
		Timeout: 180 * time.Second, // the dense session alone takes 90 s on one busy core
		Front: func(simURL string) string {
			proxy = llamatest.StartProxy(t, real.URL, simURL)
			return proxy.URL
		},
	})
	e.Open("README.md")
	from := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "Read every build log under logs/, one by one, and tell me whether they passed."}); err != nil {
		t.Fatal(err)
	}
	if end := e.WaitRunEnd(from); !strings.HasPrefix(end.Line, "showMessage info: Reika: Every build passed.") {
		t.Fatalf("the run ended with %q, want the model's answer\n%s", end.Line, e.Dump())
	}
	xs := proxy.Exchanges()
	plan := planEvents(t, e.StateDir)
	var report strings.Builder
	for _, x := range xs {
		fmt.Fprintf(&report, "  #%d %d messages: status %d prompt_tokens=%d cache_n=%d prompt_n=%d %.0f ms %s\n",
			x.Seq, len(messagesOf(t, x.Body)), x.Status, x.PromptTokens, x.CacheN, x.PromptN, x.PromptMS, x.ErrorType)
	}

	// (a) Appends are reused to the token; anything else follows a shrink.
	var prev *llamatest.Exchange     // the last request the engine processed
	var prevTurn *llamatest.Exchange // of them, the last that was not a checkpoint request
	var prevAsk *llamatest.Exchange  // of those, the last that was not a note round
	appends, others, refusals, checkpoints := 0, 0, 0, 0
	planted, missed := 0, 0 // note rounds after a checkpoint request, and those that restarted well before its end
	prefilled, reused, growth, fromZero := 0, 0, 0, 0
	var events []string
	for i := range xs {
		x := &xs[i]
		if x.Status != 200 {
			refusals++
			continue
		}
		if x.PromptTokens > real.Ctx {
			t.Errorf("request #%d of %d tokens was served in a window of %d", x.Seq, x.PromptTokens, real.Ctx)
		}
		prefilled += x.PromptN
		reused += x.CacheN
		maxTokens, _ := sideRequest(t, x.Body)
		switch {
		case isCheckpointRequest(t, x.Body) || prevTurn == nil && maxTokens == 1:
			// A checkpoint request after a fold (one token, no tools), or
			// the primer before the first request (the warm-up's, or the
			// planner's when the ask came first): its prefill counts, it
			// brings nothing new.
			checkpoints++
			events = append(events, fmt.Sprintf("#%d checkpoint request of %d tokens, restart at %d", x.Seq, x.PromptTokens, x.CacheN))
			prev = x
			continue
		case prevTurn != nil && prevTurn != prev && isNoteRequest(t, x.Body) && extends(t, prevTurn.Body, x.Body):
			// A note round after its checkpoint request (the request as
			// it stands, which the round after the note sends again): it
			// appends to the last turn request, and restarts where the
			// engine's checkpoint lets it.
			planted++
			growth += x.PromptTokens - prevTurn.PromptTokens
			if x.CacheN+16 < prev.PromptTokens {
				missed++
			}
			events = append(events, fmt.Sprintf("#%d note round after its checkpoint request of %d tokens, restart at %d", x.Seq, prev.PromptTokens, x.CacheN))
		case prevTurn == nil:
			growth += x.PromptTokens
			if prev != nil {
				events = append(events, fmt.Sprintf("#%d the first request, restart at %d after the primer", x.Seq, x.CacheN))
			}
		case prevTurn != prev:
			// The request after checkpoint requests: new tokens are those
			// the last turn request did not carry.
			others++
			growth += newTokens(t, prevTurn.Body, x.Body, x.Prompt)
			events = append(events, fmt.Sprintf("#%d change at %d of #%d, restart at %d after the checkpoint requests", x.Seq, changePoint(prevTurn.Prompt, x.Prompt), prevTurn.Seq, x.CacheN))
		case prev != prevAsk && prevAsk != nil && isNoteRequest(t, prev.Body) && extends(t, prevAsk.Body, x.Body):
			// A note round after which the planner found no fold was due
			// (the note's count said the request was smaller than it
			// looked): the request appends to the one before the note, and
			// the engine reuses it up to the note's question.
			appends++
			growth += x.PromptTokens - prevAsk.PromptTokens
			if x.CacheN < prevAsk.PromptTokens {
				t.Errorf("request #%d appends to #%d (%d tokens) after a note round but the engine reused %d of them",
					x.Seq, prevAsk.Seq, prevAsk.PromptTokens, x.CacheN)
			}
		case extends(t, prev.Body, x.Body):
			appends++
			growth += x.PromptTokens - prev.PromptTokens
			if x.CacheN != prev.PromptTokens {
				t.Errorf("request #%d appends to #%d (%d tokens) but the engine reused %d of them",
					x.Seq, prev.Seq, prev.PromptTokens, x.CacheN)
			}
			if !strings.HasPrefix(x.Prompt, prev.Prompt) {
				t.Errorf("request #%d appends to #%d but its rendered prompt does not start with #%d's", x.Seq, prev.Seq, prev.Seq)
			}
		default:
			others++
			growth += newTokens(t, prev.Body, x.Body, x.Prompt)
			change := changePoint(prev.Prompt, x.Prompt)
			if x.CacheN == 0 {
				fromZero++
			}
			events = append(events, fmt.Sprintf("#%d change at %d, restart at %d (%d lost)", x.Seq, change, x.CacheN, change-x.CacheN))
		}
		prev, prevTurn = x, x
		if !isNoteRequest(t, x.Body) {
			prevAsk = x
		}
	}
	shrinks := plan["shed"] + plan["fold"] + refusals
	t.Logf("%d requests: %d appends, %d after a shrink, %d refused; %d tokens prefilled, %d reused from the cache (%.0f%%); planned %v",
		len(xs), appends, others, refusals, prefilled, reused, 100*float64(reused)/float64(prefilled+reused), plan)
	for _, ev := range events {
		t.Logf("  %s", ev)
	}
	t.Logf("%s: prefilled/growth %.2f, %d events, %d checkpoint requests, %d from token 0", class, float64(prefilled)/float64(growth), others, checkpoints, fromZero)
	if planted > 0 {
		t.Logf("%s: %d note rounds after a checkpoint request, %d of them restarted well before its end", class, planted, missed)
	}
	if missed > 1 {
		// This model's tokenizer spends a token a byte, so the chat
		// template's generation prompt is some 20 tokens: the checkpoint
		// a note round's checkpoint request leaves, 4 before its end,
		// stands past where the note round parts from it. The planner
		// must learn that from the first, and plant no more.
		t.Errorf("%d note rounds restarted well before the end of their checkpoint request, want at most one", missed)
	}
	if appends < 10 {
		t.Errorf("only %d requests appended: the test tested little\n%s", appends, report.String())
	}
	if plan["shed"]+plan["fold"] == 0 {
		t.Errorf("the session planned %v: want a shed or a fold beside the emergency one", plan)
	}
	if others > shrinks {
		t.Errorf("%d requests rewrote the conversation after %d shrink events\n%s", others, shrinks, report.String())
	}
	if want := n * 15 / 66; shrinks < want { // 15 of 66 reads
		t.Errorf("the session had %d shrink events, want at least %d", shrinks, want)
	}
	if fromZero > 0 {
		t.Errorf("%d events restarted the engine from token 0\n%s", fromZero, report.String())
	}

	// (b) The real refusal is recovered by the emergency fold.
	if refusals != 1 {
		t.Fatalf("the engine refused %d requests, want exactly one (a real overflow, then none)\n%s", refusals, report.String())
	}
	for i, x := range xs {
		if x.Status == 200 {
			continue
		}
		var refusal struct {
			Error struct {
				Type          string `json:"type"`
				NPromptTokens int    `json:"n_prompt_tokens"`
				NCtx          int    `json:"n_ctx"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(x.Error), &refusal); err != nil || x.Status != 400 ||
			refusal.Error.Type != "exceed_context_size_error" || refusal.Error.NCtx != real.Ctx || refusal.Error.NPromptTokens <= real.Ctx {
			t.Fatalf("request #%d was refused with %d %s, want llama.cpp's overflow of its %d-token window", x.Seq, x.Status, x.Error, real.Ctx)
		}
		if i+1 == len(xs) || xs[i+1].Status != 200 || extends(t, x.Body, xs[i+1].Body) {
			t.Fatalf("the refused request #%d was not followed by one shrunk retry\n%s", x.Seq, report.String())
		}
		t.Logf("refused: %d tokens in a %d-token window; the retry #%d: %d tokens, %d reused",
			refusal.Error.NPromptTokens, refusal.Error.NCtx, xs[i+1].Seq, xs[i+1].PromptTokens, xs[i+1].CacheN)
	}
	told := regexp.MustCompile(`^showMessage warning: Reika: the engine refused the request as too long \(\d+ tokens, window 8192\): .*retrying once$`)
	shown := 0
	for _, ev := range e.Events()[from:] {
		if told.MatchString(ev.Line) {
			shown++
		}
	}
	if shown != 1 {
		t.Errorf("the user was told of the refusal %d times, want once\n%s", shown, e.Dump())
	}
	return prefilled
}

// promptTokens is the engine's count of a prefix of a rendered prompt:
// llamatest's vocabulary spends a token per byte, three on a space (it
// becomes U+2581), and three on the U+2581 put in front of the text.
func promptTokens(prefix string) int { return 3 + len(prefix) + 2*strings.Count(prefix, " ") }

// changePoint is the first token at which the rendered prompt b differs
// from a: where a dense engine restarts.
func changePoint(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return promptTokens(b[:i])
}

// newTokens are the tokens of the messages request b carries after the
// last message of request a, the content that arrived since a (what an
// infinite window would have prefilled for b), counted on b's rendered
// prompt: from the ChatML block of the first such message to the end.
func newTokens(t *testing.T, a, b []byte, prompt string) int {
	t.Helper()
	ma, mb := messagesOf(t, a), messagesOf(t, b)
	last := ma[len(ma)-1]
	fresh := 0
	for j := len(mb) - 1; j >= 0 && !bytes.Equal(mb[j], last); j-- {
		fresh++
	}
	if fresh == len(mb) {
		return 0
	}
	// The rendered prompt ends in fresh blocks and the generation prompt.
	i := len(prompt)
	for range fresh + 1 {
		i = strings.LastIndex(prompt[:i], "<|im_start|>")
		if i < 0 {
			return 0
		}
	}
	return promptTokens(prompt[i:]) - 3
}

// messagesOf are a chat request's messages, raw.
func messagesOf(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	return parseBody(t, body).Messages
}

// extends reports whether request b appends to request a: the same tools,
// and a's messages, byte for byte, at the start of b's.
func extends(t *testing.T, a, b []byte) bool {
	t.Helper()
	pa, pb := parseBody(t, a), parseBody(t, b)
	if !bytes.Equal(pa.Tools, pb.Tools) || len(pb.Messages) <= len(pa.Messages) {
		return false
	}
	for i, m := range pa.Messages {
		if !bytes.Equal(m, pb.Messages[i]) {
			return false
		}
	}
	return true
}

// shortReadTurns read logs/PREFIXi.log for i < n, one per turn.
func shortReadTurns(prefix string, n int) []sim.Turn {
	var out []sim.Turn
	for i := range n {
		out = append(out, sim.Turn{Content: fmt.Sprintf("Reading log %s%d.", prefix, i),
			ToolCalls: []sim.ScriptCall{{Name: "read", Arguments: json.RawMessage(fmt.Sprintf(`{"path":"logs/%s%d.log"}`, prefix, i))}}})
	}
	return out
}

// shortLogs are n build logs of 12 lines (about 580 bytes) each.
func shortLogs(prefix string, n int) map[string]string {
	files := map[string]string{"README.md": "# Builds\n"}
	for i := range n {
		var b strings.Builder
		for l := 1; l <= 12; l++ {
			fmt.Fprintf(&b, "build %s%d step %d: compiled pkg%d in %dms\n", prefix, i, l, l, 100+l*7%90)
		}
		files[fmt.Sprintf("logs/%s%d.log", prefix, i)] = b.String()
	}
	return files
}

// isNoteRequest reports whether a request is a note round: tools
// forbidden, a reply of more than a token.
func isNoteRequest(t *testing.T, body []byte) bool {
	n, side := sideRequest(t, body)
	return side && n != 1
}

// isCheckpointRequest reports whether a chat request's body is one of the
// checkpoint requests the agent sends after a fold on an engine that
// restarts from checkpoints: one token, tools forbidden.
func isCheckpointRequest(t *testing.T, body []byte) bool {
	n, side := sideRequest(t, body)
	return side && n == 1
}

// sideRequest reads a request's max_tokens and whether it forbids tools.
func sideRequest(t *testing.T, body []byte) (maxTokens int, side bool) {
	t.Helper()
	var req struct {
		MaxTokens  int             `json:"max_tokens"`
		ToolChoice json.RawMessage `json:"tool_choice"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("a request's body: %v", err)
	}
	return req.MaxTokens, string(req.ToolChoice) == `"none"`
}
