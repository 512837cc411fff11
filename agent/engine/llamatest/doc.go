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
// The model is one of three classes (Model.Arch), which reuse a changed
// prompt differently: TinyModel (llama, dense), TinySWAModel (gemma3,
// sliding-window attention of 512 tokens) and TinyRecurrentModel (mamba).
// Options.Args passes more flags (--ctx-checkpoints, --checkpoint-min-step,
// --swa-full, -lv) to the engine.
//
// # The cache rules of llama-server build 11669
//
// TestCheckpointRules pins them, with one slot, -ub 512 (the default) and
// the default --ctx-checkpoints 32; positions are tokens from 0, as in
// timings.cache_n. A request of n tokens whose first c tokens are the
// slot's (c = n for a resend) restarts at:
//
//   - dense: min(c, n-1), always.
//   - every class: the slot's end, when the request appends to the last
//     prompt (cache_n = its prompt_tokens; the token sampled with
//     max_tokens 1 is not in the cache).
//   - swa: min(c, n-1) while that is at or after m-513, m the slot's
//     length (its 1024 cells hold the last 1024 positions: 512 of window
//     and a ubatch); else k-1 for the newest checkpoint k with k-1 <= c;
//     else 0, with "forcing full prompt re-processing" in the log.
//   - recurrent: the newest checkpoint k with k <= min(c, n-1); else 0. A
//     resend of an n-token prompt restarts at n-4.
//
// A request that processes its prompt from p to n makes checkpoints at p
// (when p > 0: where it started), at n-4-512 (when that is after p) and
// at n-4: n = 3053 from 0 makes 2537 and 3049, the append to 3315 from
// 3053 makes 3053 and 3311 (none at 2799, which it did not process). A
// dense model makes none. Checkpoints after the restart point are erased
// ("erased invalidated context checkpoint"); past --ctx-checkpoints the
// oldest go first. A gemma3's checkpoint restores to one before its
// n_tokens (k-1), a mamba's to its n_tokens (k): with checkpoints 2537
// and 3049 after a 3053-token prompt, a change at 2537 restarts the
// gemma3 at 2536 and the mamba at 2537, one at 2536 restarts the gemma3
// at 2536 and the mamba at 0, one at 2535 both at 0, and one at 2540 (=
// 3053-513) the gemma3 at 2540. The default --checkpoint-min-step 8192
// thinned none of these (two requests of 3315 tokens kept all four).
//
// Start skips the test when llama-server-ci is not installed, unless
// REIKA_EDITORS=require (as .ci/run sets it): then it fails.
//
// A Proxy is safe for concurrent use; the engine's one slot serves its
// requests one at a time.
package llamatest
