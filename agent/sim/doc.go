// Package sim is a simulated inference engine: a real HTTP server that
// speaks the dialect of llama.cpp's llama-server (the default), vLLM or
// Ollama closely enough that Reika's engine client, its context-window
// logic and its agent can be tested, demonstrated and tried without a model.
//
// It owns the other side of the wire, and nothing of the client: it imports
// neither agent/engine nor go-openai. It provides
//
//   - the engines' discovery endpoints (/v1/models, /props, /slots, /health,
//     /api/show, …) in the shapes captured from the real servers;
//   - chat completions, streamed (SSE) or not, with the engines' token
//     accounting: a deterministic tokenizer ([Tokenize]), a rendered chat
//     template that counts tools, tool calls and tool results, a per-slot
//     prompt cache that reports cache_n/prompt_n exactly as llama.cpp does,
//     llama.cpp's slot choice (id_slot, else the idle slot with the longest
//     common prefix) and its slot actions (save, restore and erase under
//     Config.SlotSavePath, with llama.cpp's refusals), the context-overflow
//     refusals of llama.cpp and vLLM, Ollama's silent truncation, and a stop
//     with finish_reason "length" at the window;
//   - replies from a script of turns ([Turn]) and, after it, from a built-in
//     policy that explores a directory with the tools a request offers
//     (read, glob, grep, edit, write, bash) the way an agent's model would;
//   - faults ([Fault]): latency, HTTP errors, HTML error pages, streams cut
//     or stalled mid-way, malformed tool-call arguments.
//
// The main call:
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
// may be called from a test while it serves. Every handler stops when its
// client goes away, when the context given to Serve is cancelled, or when
// Close is called.
package sim
