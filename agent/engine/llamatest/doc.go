// Package llamatest runs a real llama.cpp server for tests: llama-server
// from Debian (installed by .ci/install-llama as llama-server-ci) over a
// tiny random-weight model this package writes itself, and a proxy that
// puts the real engine's prefill figures on the simulator's replies.
//
// The model's text is gibberish, so a test cannot take its replies; what
// is real is everything before the first generated token: the chat
// template, the tokenizer (one token per byte, see WriteModel), the KV
// cache of the slot, the prompt cache's reuse of the longest common
// prefix (usage.prompt_tokens, timings.cache_n and prompt_n), and the
// refusal of a prompt longer than the window (HTTP 400
// exceed_context_size_error). The Proxy sends every chat request to the
// real engine with max_tokens 1 to get those, and takes the reply from
// the simulator (agent/sim), so an agent runs a real session:
//
//	real := llamatest.Start(t, llamatest.Options{Ctx: 4096})
//	p := llamatest.StartProxy(t, real.URL, simURL)
//	// point the client at p.URL + "/v1"; afterwards
//	for _, x := range p.Exchanges() { … x.PromptTokens, x.CacheN … }
//
// Start skips the test when llama-server-ci is not installed, unless
// REIKA_EDITORS=require (as .ci/run sets it): then it fails.
//
// A Proxy is safe for concurrent use; the engine's one slot serves its
// requests one at a time.
package llamatest
