// Package contextwin decides what each request to the engine carries after
// the fixed prefix: how the context window is divided (Budget), how text
// is priced in tokens without a tokenizer (Estimator), how much room the
// reply needs (Reserve), and — as the conversation grows — what is cut,
// shed and folded so that requests stay byte-for-byte appends of each
// other for as long as possible and shrink in as few events as possible.
//
// The agent drives a Planner:
//
//	s := contextwin.NewPlanner(contextwin.Config{Window: 24000, PrefixChars: len(prefix)})
//	s.Append(contextwin.Message{Role: contextwin.User, Content: task})
//	for {
//		p := s.Plan()
//		switch {
//		case p.TooSmall, p.GiveUp: // tell the user p.Problem; stop
//		case p.Event == contextwin.Note: // send p.Messages with tool_choice "none", then s.SetNote(answer) and Plan again
//		}
//		// send prefix + p.Messages with max_tokens p.MaxTokens …
//		// on a context-length refusal: p = s.Overflow(promptTokens, window) and retry once
//		fig := s.Observe(contextwin.Usage{PromptTokens: …, CompletionTokens: …, FinishReason: …})
//		// fig says what became of the count: Learned, Missing, Truncated, Outlier
//		s.Append(reply); s.Append(results…)
//	}
//
// The engine's counts are checked, not trusted: the ratio is the median of
// recent counts, a count far from it (or above what any tokenizer gives) is
// an outlier and not learned, no count at all leaves the estimate cautious,
// and no single count makes the window too small (see Estimator).
//
// Inside, the Planner keeps the transcript (every message appended, and
// how each stands: whole, shed to its summary, cut to fit), the view and
// the recaps. The view is what the next request carries after the fixed
// prefix: its messages, each naming what it stands for (an entry of the
// transcript, the front recap or the middle recap), with its size and how
// many of its bytes no request has carried; the view's totals are the
// sums of those by construction, changed only as messages are pushed,
// truncated, replaced or carried. A recap is one value of one type as the
// request carries it — its message, the bytes of it carried before
// (verbatim) and the size of its own text, which the recap budget bounds
// — and the planner holds two: the front recap, after the fixed prefix,
// and the middle one, between older turns left as they were sent and the
// newest. Plan lends the view's messages: the caller may keep them and
// append to them, never write them, and the view never changes them
// after (it copies before it writes where it lent), so a plan costs what
// changed since the last one, not the view's length.
//
// # The cost model, or how to predict an event
//
// The window W less the reply's reserve G is the usable room U. A request
// is appended to, byte for byte, until its likely size passes the shed
// point (0.9 U); the next Plan is then one shrink event, and the event is
// chosen by one rule: among the ways to shrink, the one that re-prefills
// the fewest tokens per token of room it makes (price.go, option.better).
//
//   - Room is the growth the request has before the shed point again. An
//     option that leaves less than 0.3 U of it, or keeps less than 0.23 U
//     live (the newest turns as they were sent), is not taken while
//     another exists: a cheap event that fires again next round is no
//     bargain.
//   - Cost is the tokens the engine prefills again that an earlier request
//     had already carried: everything after the first changed byte, from
//     where the engine restarts (below), plus a fold's note round, its
//     generated tokens counted at DecodeCost prompt tokens each. New
//     bytes (this round's results) are not cost: any request pays them.
//
// The ways to shrink: a shed (old tool results and reasoning replaced by
// their summaries from some message on; the request changes there), a fold
// of the front (the oldest turns into the recap right after the fixed
// prefix; the request changes at the recap), and a fold into a middle
// recap (the turns after some older ones, which stay as they were sent;
// the request changes after them). A shed changes the request late and
// makes little room; a fold of the front changes it early and makes the
// most; the middle recap is between the two. A single new result too large
// for the room left is cut instead, with no event.
//
// Where the engine restarts after a change at token c is its cache model
// (cache.go), told at the start (discovery) and corrected by the engine's
// own figures (cache_n, cached_tokens):
//
//   - dense (a dense model on llama.cpp, Ollama): at c. The cheapest event
//     is the one whose first change is latest for its room.
//   - blocks (vLLM, SGLang): at c rounded down to a block (16 tokens by
//     default): dense, a block's worth dearer.
//   - checkpointed (a sliding-window or recurrent model on llama.cpp): at
//     the newest context checkpoint at or before c, else at 0. The engine
//     takes checkpoints near the end of each prompt it processes and a full
//     slot thins them, keeping its first and one every --checkpoint-min-step;
//     the planner mirrors them. So it plants checkpoints where its next fold
//     will change the request: a primer as the first request (the
//     checkpoint before the first message), one-token checkpoint requests
//     before a fold's request (Plan.Checkpoints), a middle recap anchored
//     just after a checkpoint the slot keeps and rewritten in place at every
//     fold, and, where none stands low enough, one request sent without the
//     prompt cache to start the slot over (Plan.Fresh).
//   - boundary (vLLM serving a hybrid model, Qwen3.5's gated DeltaNet,
//     under --mamba-cache-mode align): at the newest last block boundary
//     of an earlier prompt at or before c, else at 0. The engine keeps the
//     recurrent state of a prompt of n tokens only at ⌊n/block⌋·block,
//     with blocks of 528 to 2048 tokens, so an append too restarts up to a
//     block before the last prompt's end: every request pays about half a
//     block again, which no layout of the request avoids (a state stands
//     only on the block grid). The planner mirrors the boundaries as it
//     does checkpoints and prices each event at its own; it learns the
//     class from two appends that cached_tokens says restarted short of
//     their ends, and the block from their common divisor. It plants
//     nothing: in the replay a fold's change lands a few hundred tokens
//     after a boundary the front's requests left.
//   - unknown: priced as dense until the figures say otherwise.
//
// A fold is preceded by the model's note, asked with tools forbidden as
// an append of the request. While the request as it stands, the new
// results an eighth larger, the question and the note fit, the note
// round carries it whole, and the round's request after it is that same
// request, cached to its end: the fold waits for the next round, which
// folds those results in with the note in hand (holdFold). Folding at
// once would prefill them a second time, after the fold's change; so
// would cutting them to fit after such a round, which is not done. (On an
// engine that restarts from checkpoints the request is sent first as a
// checkpoint request, so that the engine keeps a checkpoint where the
// question begins; not on a turn template, where the question rides at
// the end of the last result and no checkpoint can stand where it
// begins, nor once the engine's figures showed that checkpoint past the
// question's start, where the template's generation prompt is long.)
// Where it does not fit, the note round shows the new results as their
// summaries, and the fold follows. A new ask of the user's the engine
// has not seen (a pasted log, say) is left out of the note round, which
// is of the work done: the fold after it carries the ask once, after the
// recap, and comes at once.
//
// What the recap carries of the user's words stands first in it, so a
// rewrite that keeps them changes the request only after them: the task
// whole while it fits a fifth of the window, then the later messages,
// each whole while it and the newer ones fit their share, past it in one
// line (its opening, where its whole text is, its facts), and past a
// number of lines as its facts alone, the oldest lines turned by halves
// (usertext.go): a form never grows back, so a rewrite changes the
// user's words only from the oldest message that changed form. A recap
// appended to keeps them as they were sent; a fold that takes in a new
// one rewrites it only when they are past userCap and their present
// forms would take at least userShare less (userTextFull). The result that
// defines the task, carried verbatim, is a page or a document the ask
// names in the user's own words, never source code, which the files
// changed and a shed read's outline keep.
//
// A middle recap that its parts have filled is rewritten in place (the
// request changes at its start), not folded into the front, which would
// prefill every older turn kept after it again; on an engine that keeps
// any prefix, only while what the front recap leaves holds the facts and
// the files changed, else the fold of the front keeps them. Where the
// rewrite in place would leave less than the gap, it starts earlier, at
// the nearest start among the older turns that leaves the gap, and takes
// those turns in. Like a rewritten front recap it opens with what the
// user said, so the next rewrite changes the request only after that.
//
// So, to predict: the request grows by appends until 0.9 U; the event then
// is a shed when old results after the recap can free 0.3 U, a fold when
// they cannot; on a checkpointed engine a fold rewrites a recap that
// starts at a checkpoint rather than change the request anywhere else.
// REIKA_DEBUG's line per request shows where each request changed and
// what the engine says it re-prefilled.
//
// A thinking model's reasoning is carried as the engine's chat template
// renders it (Config.Reasoning, reasoning.go): none on a template that
// drops it, all of it on one that preserves it, and on a turn template
// (Qwen3's: the reasoning after the last user message) the current turn's
// from its eighth reply on — a short exchange would pay its whole turn
// again at the next ask, which drops it; a reply sent without it costs
// only its own text again —, with what would be a user message after a tool result — what the user
// says while the agent works, the note's question, the middle recap —
// riding at the end of that result, so that the template keeps the turn's
// reasoning and the request changes only where the planner changed it. At
// a shrink event the reasoning after the first message it changed goes:
// the engine prefills that part again anyway.
//
// Summarize and BuildRecap are the pieces a shed and a fold use; NewBudget
// and NewChip are the figures a status line shows.
//
// The package is pure: no I/O, no clock, no goroutines, no randomness, no
// LSP or HTTP types; the same inputs always give the same bytes. Functions
// are safe for concurrent use; a Planner is not.
package contextwin
