// Package agent turns an instruction into rounds against the engine: it
// keeps the session's conversation (on disk, in a transcript that holds
// everything), asks contextwin what each request carries, streams the
// engine's reply, runs the tools the model calls, and reports what happens
// through a plain callback.
//
//	s, err := agent.Start(ctx, agent.Setup{Folders: []string{root}, Proposer: editor, Ask: ask})
//	defer s.Close()
//	res, err := s.Run(ctx, "fix the failing test", func(e agent.Event) { … })
//
// Start is the one way in, the same for every front end (the language
// server, demo, check, replay): it resolves the settings (defaults, the
// config file, the environment, the editor's), connects to the engine and
// discovers its window, sets up the tools confined to the folders, and
// opens or resumes the transcript. Session.Info says what it found.
//
// Between two shrink events every request begins with the exact bytes of
// the previous one: the fixed prefix (system prompt, tool definitions,
// bootstrap) is built once per session, and contextwin only ever appends
// to the view until the shed point. The prefix-cache line of REIKA_DEBUG
// (Session.Debug) reports, per request, whether that held and what the
// engine says it cost.
//
// Only one run goes at a time in a session (Run returns ErrBusy
// otherwise); what the user says meanwhile joins it (Say). The other
// methods are safe for concurrent use. Cancelling a
// run's context closes the engine's stream at once.
package agent
