// Package engine talks to the user's inference engine: llama.cpp's
// llama-server, vLLM, SGLang, Ollama, LM Studio or any other endpoint that
// speaks the OpenAI chat-completions protocol.
//
// It owns three things and nothing else:
//
//   - the chat client ([Client.Chat]), the only code in the project that
//     imports go-openai. It streams, assembles tool-call deltas, reads
//     reasoning from both `reasoning_content` and `reasoning`, and captures the
//     figures that go-openai cannot see (llama.cpp `timings`, vLLM cached
//     tokens) by wrapping the HTTP client;
//   - discovery ([Discover]): which engine answers at an endpoint, which model
//     it serves, and how large its context window is: the setting, then the
//     engine's own figure, then for a hosted endpoint the embedded catalog
//     (README.md, "Engines");
//   - the cache model ([Discovery].Cache, a contextwin.CacheModel): how the
//     engine reuses its prompt cache for the model it serves, with its
//     [Source]; a setting (cache_class, swa_window, cache_block) wins over it, and
//     [Discovery.CacheAdvice] says what it costs and what to do;
//   - typed failures ([Error], classified by [Kind]) that say what happened
//     and what the user can do about it, with the wait the engine asked for
//     before a retry ([Error].RetryAfter, from its Retry-After header).
//
// What each engine tells of its cache and its model's class:
//
//   - llama.cpp: /props gives model_path (build 11669: also n_ctx,
//     total_slots, chat_template_caps, build_info) but nothing of the
//     cache: not --swa-full, not --ctx-checkpoints, not the micro-batch;
//     /slots gives only id, n_ctx, speculative and is_processing. When
//     model_path is an absolute path readable here, discovery reads the
//     GGUF header's key/value section (never the tensors, at most 64 MiB):
//     general.architecture, {arch}.attention.sliding_window and the
//     recurrent layers' {arch}.ssm.*, .wkv.* or .shortconv.* keys (or a
//     known recurrent architecture) make the model checkpointed, anything
//     else dense. An SWA model run with --swa-full is dense all the same;
//     no endpoint says so, so the planner's cache_n figures correct it
//     (or cache_class dense). A relative model_path is the server's
//     directory's, unknown here: the class is unknown, priced as dense.
//   - Ollama: /api/show model_info holds the GGUF's keys (the vocabulary
//     left out), read the same way. Its own engine keeps an SWA model's
//     cache for a change within the window and re-prefills any other from
//     the start; recent versions restore a recurrent model from
//     checkpoints of their own. Either is checkpointed.
//   - vLLM: whole blocks, of the block_size label of /metrics'
//     vllm:cache_config_info, else its default of 16. Nothing it serves
//     says that the model is a hybrid one, whose recurrent state it keeps
//     only at the last block boundary of each prompt (the boundary class):
//     the planner learns that from cached_tokens, or cache_class boundary
//     and cache_block tell it.
//   - SGLang: its radix cache's page_size from /get_server_info: 1 (its
//     default) keeps any prefix, more keeps whole pages.
//   - LM Studio, hosted endpoints: nothing; unknown, priced as dense.
//
// A typical call:
//
//	c := engine.NewClient(engine.Options{BaseURL: "http://127.0.0.1:8080/v1"})
//	resp, err := c.Chat(ctx, engine.Request{Messages: msgs, Tools: tools}, func(d engine.Delta) { … })
//	if errors.Is(err, engine.Overflow) { … }
//
// A Client is safe for concurrent use; each call carries its own context, and
// cancelling that context closes the HTTP stream so the engine stops
// generating.
package engine
