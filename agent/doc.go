// Package agent turns an instruction into rounds against the engine: it
// keeps the session's conversation (on disk, in a transcript that holds
// everything), asks contextwin what each request carries, streams the
// engine's reply, runs the tools the model calls, and reports what happens
// through a plain callback.
//
//	s, err := agent.NewSession(agent.Config{Engine: client, Tools: toolset, Window: 24000, TranscriptDir: dir})
//	res, err := s.Run(ctx, "fix the failing test", func(e agent.Event) { … })
//
// Between two shrink events every request begins with the exact bytes of
// the previous one: the fixed prefix (system prompt, tool definitions,
// bootstrap) is built once per session, and contextwin only ever appends
// to the view until the shed point. REIKA_DEBUG's prefix-cache line
// (Config.Debug) reports, per request, whether that held and what the
// engine says it cost.
//
// Only one run goes at a time in a session (Run returns ErrBusy
// otherwise); what the user says meanwhile joins it (Say). The other
// methods are safe for concurrent use. Cancelling a
// run's context closes the engine's stream at once.
package agent
