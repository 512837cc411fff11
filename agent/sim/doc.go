// Package sim is Reika's built-in simulated inference engine: a real HTTP
// server that behaves like llama.cpp's llama-server (the default), vLLM's
// OpenAI server or Ollama's OpenAI layer closely enough that Reika runs
// whole agent sessions against it with no model installed. It is what
// `reika-lsp sim` serves, what `reika-lsp demo` and `reika-lsp check --sim`
// start in-process, and what the tree's tests talk to.
//
// It owns the engine's side of the wire and nothing of the client's: it
// imports neither agent/engine nor go-openai. What it simulates:
//
//   - Three flavours ([Flavor]), each one implementation of the
//     package's flavor interface in its own file (llamacpp.go, vllm.go,
//     ollama.go), picked once by New: the endpoints (/v1/models, /props,
//     /slots, /tokenize, /health, /api/show, /api/ps, …), the JSON of
//     answers and errors in the shapes captured from the real servers
//     (testdata/engine-captures), and how the window is applied:
//     llama.cpp and vLLM refuse a prompt that does not fit, Ollama
//     silently drops old messages; a reply stops with finish_reason
//     "length" at max_tokens or, on llama.cpp and vLLM, at the window's
//     end.
//   - The token accounting: a deterministic tokenizer ([Tokenize],
//     tokenize.go) over a rendered chat template that counts tools, tool
//     calls and tool results (template.go), so [PromptTokens] predicts the
//     figures the server reports.
//   - The prompt cache (slots.go): on llama.cpp and Ollama one cache per
//     slot, a slot being one of llama.cpp's parallel sequences
//     (Config.Slots), chosen as llama.cpp chooses (id_slot, else the idle
//     slot with the longest common prefix), reporting cache_n and
//     prompt_n as llama.cpp does; on vLLM one block cache shared by all
//     requests (Config.Cache.Block tokens a block), reported as
//     cached_tokens. A llama.cpp slot serves a dense model (any common
//     prefix is kept), a sliding-window one or a recurrent one
//     (Config.Cache, cache.go): the last two restart a changed prompt
//     from a context checkpoint, or from 0, as llama.cpp does for a
//     cache it cannot roll back. llama.cpp's slot actions
//     (save, restore, erase under Config.SlotSavePath, with its refusals;
//     a slot's checkpoints saved and restored with it) are in
//     slotfile.go. Timings come from a cost model
//     (Config.PrefillMSPerToken and DecodeMSPerToken), taken for real
//     with Config.Realtime.
//   - The model: replies from a script of turns ([Turn], script.go), and
//     after it from a built-in policy (policy.go) that explores
//     Config.Root with the tools a request offers (read, glob, grep, edit,
//     write, bash) the way an agent's model would, and answers after
//     Config.PolicyRounds rounds. The same conversation gets the same
//     reply.
//   - Faults ([Fault], faults.go): latency, HTTP errors, a reverse proxy's
//     HTML error page, streams cut or stalled mid-way, malformed
//     tool-call arguments, figures absent, all zero or a prompt count
//     scaled (Fault.Usage, Fault.PromptScale); injected for the next requests
//     ([Server.Inject]) or standing by schedule (Config.Faults).
//
// The callers: `reika-lsp sim` (cmd/reika-lsp/sim.go) serves one flavour
// on a port for any client, with the policy exploring a directory and
// faults from its flags; `reika-lsp demo` (cmd/reika-lsp/demo.go) starts
// the llama.cpp flavour in-process and runs a long agent session against
// its policy over the real files of a directory, printing what the
// context window and the prompt cache did; `reika-lsp check --sim`
// (cmd/reika-lsp/check.go) runs its checks of the engine against one
// started on a free loopback port. The main call:
//
//	srv, err := sim.New(sim.Config{Ctx: 8192, Root: "."})
//	ln, _ := net.Listen("tcp", "127.0.0.1:0")
//	go srv.Serve(ctx, ln) // or httptest.NewServer(srv.Handler())
//	…
//	srv.Inject(sim.Fault{Status: 503}) // the next chat request fails
//	recs := srv.Requests()             // what every chat request cost
//
// A Server is safe for concurrent use: requests may arrive in parallel (they
// queue for a free slot as on llama.cpp), and Inject, Requests and SetLoading
// may be called while it serves. Every handler stops when its client goes
// away, when the context given to Serve is cancelled, or when Close is
// called.
package sim
