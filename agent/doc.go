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
// opens or resumes the transcript. Session.Info says what it found. When
// the repo map it is given has an index (MapIndex: MapFiles, the language
// server's map), the tools include the navigation tools, answered from the
// map by name (navmap.go) and marked approximate.
//
// Between two shrink events every request begins with the exact bytes of
// the previous one: the fixed prefix (system prompt, tool definitions,
// bootstrap) is built once per session, and contextwin only ever appends
// to the view until the shed point. The prefix-cache line of REIKA_DEBUG
// (Session.Debug) reports, for every request the engine processes — the
// rounds', the notes', the warm-up's and the checkpoint requests' —
// whether it began with the bytes of the one before and what the engine
// says it cost.
//
// A reply's reasoning is handed back (REIKA_REASONING_BACK, on by
// default): the message joins the session with it, so every later request
// sends it as reasoning_content, the same bytes each time, until a shrink
// event sheds it (old reasoning goes first) or folds it away. A reply
// belongs to the turn under way when it is made, so the current turn's
// messages carry their reasoning (models that think between tool calls
// need it, and a template that renders it then sees the prompt it
// generated); an earlier turn's keep what they were sent with rather than
// lose it at the next user message. Dropping it there would change the
// request where that reasoning began: a template that renders every
// turn's reasoning would prefill again from there, and one that renders
// only the current turn's has dropped it from the prompt already, so
// keeping it costs the cache nothing either way. A resume sends what the
// transcript says was sent.
//
// Only one run goes at a time in a session (Run returns ErrBusy
// otherwise); what the user says meanwhile joins it (Say). The other
// methods are safe for concurrent use. Cancelling a
// run's context closes the engine's stream at once.
package agent
