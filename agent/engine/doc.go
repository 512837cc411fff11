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
//   - typed failures ([Error], classified by [Kind]) that say what happened
//     and what the user can do about it.
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
