package llamatest

import "testing"

// llama.cpp goes on with a last assistant message, unclosed (unless
// started with --no-prefill-assistant, or its template thinks): the
// prompt ends with the message's text, and the request that carries the
// whole of it reuses every token of that prompt, on every class. The
// planner's checkpoint requests of a recap's rest stand on this.
func TestPrefillIsTheStartOfTheTurn(t *testing.T) {
	Need(t)
	const la, lb, cut = 1500, 600, 300
	a, b := letters(la, 1), letters(lb, 2)
	for _, c := range classes {
		t.Run(c.name, func(t *testing.T) {
			s := Start(t, Options{Ctx: 8192, Model: c.model})
			prefill := chatRaw(t, s.URL, a, b[:cut])
			whole := chatRaw(t, s.URL, a, b, "next")
			if want := firstContent + la + promptTail + cut; prefill.Status != 200 || prefill.PromptTokens != want {
				t.Errorf("the prefill: status %d, %d prompt tokens, want 200 and %d (the assistant's text unclosed)", prefill.Status, prefill.PromptTokens, want)
			}
			if whole.Status != 200 || whole.CacheN != prefill.PromptTokens {
				t.Errorf("the whole message's request: status %d, cache_n %d, want 200 and the prefill's %d", whole.Status, whole.CacheN, prefill.PromptTokens)
			}
		})
	}
}
