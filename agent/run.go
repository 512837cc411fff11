package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/agent/transcript"
	"github.com/reika-lsp/reika/contextwin"
)

// ErrBusy is returned when a run is asked for while another is under way.
var ErrBusy = errors.New("a run is already in progress in this session: wait for it, or cancel it")

// Limits of a run.
const (
	// maxContinuations is how many times in a row a reply cut by the
	// length limit is asked to go on.
	maxContinuations = 3
	// retries of a request the engine failed in a passing way, and the
	// waits before them.
	retries = 2
	// maxRetryAfter is the longest wait an engine's Retry-After is obeyed
	// for. Five minutes cover a hosted engine's per-minute limits several
	// times over, and a large model loading behind a proxy that says when
	// it will be ready. The wait is counted down in the progress line and
	// the user can cancel it, so a long one costs nothing they cannot
	// stop, while giving up too soon costs the run. A longer wait is an
	// hourly or daily quota, not worth holding a run for: the run stops
	// and says what the engine asked.
	maxRetryAfter = 5 * time.Minute
)

// defaultRetryWait are the waits before the retries of a request the
// engine failed in a passing way, when it did not say how long to wait.
var defaultRetryWait = [retries]time.Duration{time.Second, 3 * time.Second}

// retryTell is how often the progress line counts down a retry's wait.
const retryTell = 5 * time.Second

// continuePrompt asks the model to go on after the length limit cut it.
const continuePrompt = "Your reply was cut off by the length limit. Continue exactly where it stopped."

// Run carries out one instruction: rounds against the engine until the
// model answers without calling tools, the context is cancelled, the step
// limit is reached, or the engine fails for good. report receives the
// run's events on the calling goroutine; it may be nil. Run returns how
// the run ended; the error is non-nil only when it did not end by an
// answer.
func (s *Session) Run(ctx context.Context, instruction string, report func(Event)) (Result, error) {
	return s.RunImages(ctx, instruction, nil, report)
}

// RunImages is Run with pictures attached to the instruction, for an
// engine that takes them (TakesImages).
func (s *Session) RunImages(ctx context.Context, instruction string, images []contextwin.Image, report func(Event)) (Result, error) {
	if !s.running.CompareAndSwap(false, true) {
		return Result{}, ErrBusy
	}
	defer s.running.Store(false)
	defer func() {
		s.mu.Lock()
		s.ending = false
		s.mu.Unlock()
	}()
	if report == nil {
		report = func(Event) {}
	}
	s.awaitWarmup(ctx)
	if err := s.awaitSave(ctx); err != nil {
		return Result{End: Canceled}, err
	}
	s.confirmSlot(ctx)
	// What the user allows "for this run" lasts as long as this call (a
	// front end may have put the run there already, with its mode).
	ctx = tools.WithRun(ctx, tools.Normal)
	r := &run{s: s, report: report, tasks: newTaskList(s.cfg.Workspace)}
	r.modelAwake(ctx)
	r.slotTakenOver(ctx)
	res := r.loop(ctx, instructionFor(ctx, instruction), images...)
	s.markSlot(ctx)
	res.Proposals, res.Tasks = r.proposals, r.tasks.list()
	s.note(transcript.KindEvent, "run ended: "+res.End.String())
	s.sync()
	for _, text := range s.transcriptNotices() {
		report(Event{Kind: Warning, Round: res.Rounds, Text: text, Show: true})
	}
	s.startSave()
	if res.End == Answered {
		report(Event{Kind: Finished, Round: res.Rounds, Result: &res, Chip: s.Chip()})
		return res, nil
	}
	if res.Err == nil {
		res.Err = errors.New(res.End.String())
	}
	if res.End == Canceled || res.End == StepLimit {
		report(Event{Kind: Finished, Round: res.Rounds, Result: &res, Chip: s.Chip()})
	} else {
		report(Event{Kind: Failed, Round: res.Rounds, Result: &res, Err: res.Err, Chip: s.Chip()})
	}
	return res, res.Err
}

// run is the state of one Run.
type run struct {
	s         *Session
	report    func(Event)
	rounds    int
	proposals []*tools.Proposal
	tasks     *taskList
	// refused are the calls of the reply being taken that do not run,
	// with the reason the model is told (screen).
	refused map[string]string
	// sub marks a subagent's run, subagents counts those this run
	// started, and maxDecoded, when set, ends the run at that many
	// generated tokens (subagent.go).
	sub        bool
	subagents  int
	maxDecoded int
}

// loop runs the rounds of one instruction until the run ends.
func (r *run) loop(ctx context.Context, instruction string, images ...contextwin.Image) Result {
	s := r.s
	s.Prefix() // built before the first plan, which prices it
	m := s.userMessage(instruction)
	m.Images = images
	s.record(m, "")
	// On disk before the first request: a crash while the engine stalls
	// loses nothing the user said.
	s.sync()
	continuations := 0
	for {
		if ctx.Err() != nil {
			return Result{End: Canceled, Rounds: r.rounds}
		}
		if r.rounds >= s.cfg.MaxSteps {
			return Result{End: StepLimit, Rounds: r.rounds, Err: fmt.Errorf("the run stopped after %d rounds, its step limit", r.rounds)}
		}
		if d := s.Stats().Decoded; r.maxDecoded > 0 && d >= r.maxDecoded {
			return Result{End: StepLimit, Rounds: r.rounds, Err: fmt.Errorf("the run stopped after %d generated tokens, its limit", d)}
		}
		for _, text := range s.takeSaid() {
			s.record(s.userMessage(text), "")
		}
		p, ok := r.planRound(ctx)
		if !ok {
			return Result{End: TooSmall, Rounds: r.rounds, Err: errors.New(p.Problem)}
		}
		r.rounds++
		r.report(Event{Kind: RoundStarted, Round: r.rounds, Chip: p.Chip})
		s.mu.Lock()
		notes, lines := s.takeFigureNotes(), s.takeDebugLines()
		s.mu.Unlock()
		for _, text := range lines {
			r.report(Event{Kind: Debug, Round: r.rounds, Text: text})
		}
		for _, text := range notes {
			r.report(Event{Kind: Warning, Round: r.rounds, Text: text})
		}
		for _, text := range s.transcriptNotices() {
			r.report(Event{Kind: Warning, Round: r.rounds, Text: text, Show: true})
		}
		r.reportShrink(p)
		// The fixed prefix stays as it is through the run's events: a
		// shed or a fold changes the request after it, and rebuilding it
		// (the repo map catching up with the code) would re-prefill the
		// whole window. Only a compaction the user asks for rebuilds it.

		resp, err := r.send(ctx, p)
		if end, failed := r.failure(ctx, resp, err); failed {
			return end
		}
		r.report(Event{Kind: ChipChanged, Round: r.rounds, Chip: s.Chip()})
		if end, done := r.take(ctx, resp, err, &continuations); done {
			return end
		}
	}
}

// planRound plans the next request, after the note round a fold asks for;
// it reports false when the window is too small for one (p.Problem says
// why).
func (r *run) planRound(ctx context.Context) (contextwin.Plan, bool) {
	s := r.s
	s.mu.Lock()
	p := s.plan()
	s.mu.Unlock()
	if !p.TooSmall && p.Event == contextwin.Note {
		p = r.noteRound(ctx, p)
	}
	return p, !p.TooSmall
}

// failure is how the run ends when a round's request failed; a reply with
// a malformed tool call is no failure: the model is told.
func (r *run) failure(ctx context.Context, resp *engine.Response, err error) (Result, bool) {
	switch {
	case err == nil:
		return Result{}, false
	case errors.Is(err, engine.Canceled) || ctx.Err() != nil:
		return Result{End: Canceled, Rounds: r.rounds}, true
	case errors.Is(err, errTooSmall):
		return Result{End: TooSmall, Rounds: r.rounds, Err: err}, true
	case resp == nil || !errors.Is(err, engine.BadToolCall):
		return Result{End: EngineFailed, Rounds: r.rounds, Err: err}, true
	}
	return Result{}, false
}

// take records the model's reply: an answer ends the run (unless the user
// said more meanwhile), a reply cut by the length limit is asked to go on,
// and tool calls are run, their results recorded. sendErr is the
// request's error, a malformed tool call or nil.
func (r *run) take(ctx context.Context, resp *engine.Response, sendErr error, continuations *int) (Result, bool) {
	s := r.s
	sc := r.screen(resp)
	r.refused = sc.refused
	for _, w := range sc.warnings {
		r.report(Event{Kind: Warning, Round: r.rounds, Text: w})
	}
	if r.tasks.stated(sc.answer) {
		r.report(Event{Kind: TasksChanged, Round: r.rounds, Tasks: r.tasks.list()})
	}
	reply := Assistant(resp)
	if s.cfg.ReasoningBack {
		// Sent back from the next request on, as it is now: a reply
		// belongs to the current turn when it is made.
		reply.Reasoning = resp.Reasoning
	}
	switch {
	case len(resp.ToolCalls) == 0 && resp.FinishReason == "length" && *continuations < maxContinuations:
		*continuations++
		reply.Continuation = true
		s.record(reply, resp.Reasoning)
		s.record(contextwin.Message{Role: contextwin.User, Content: continuePrompt, Continuation: true}, "")
		s.sync()
		return Result{}, false
	case len(resp.ToolCalls) == 0:
		s.record(reply, resp.Reasoning)
		s.sync()
		if !s.endUnlessSaid() {
			// The user said more while the model answered: the run
			// goes on with it, and the user reads this answer now.
			r.report(Event{Kind: Replied, Round: r.rounds, Text: sc.answer})
			return Result{}, false
		}
		return Result{End: Answered, Answer: sc.answer, Rounds: r.rounds}, true
	}
	*continuations = 0
	// Write-ahead: the calls are on disk before they run, and each result
	// (an applied edit) before the next step, so that a resume after a
	// crash knows which ran (unfinishedCalls).
	s.record(reply, resp.Reasoning)
	s.sync()
	for _, call := range resp.ToolCalls {
		res := r.runTool(ctx, call, sendErr)
		s.record(contextwin.Message{Role: contextwin.Tool, ToolCallID: call.ID, Content: res.Content, Payload: res.Payload}, "")
		s.sync()
	}
	return Result{}, false
}

// runTool runs one call, or explains to the model why it could not.
func (r *run) runTool(ctx context.Context, call engine.ToolCall, sendErr error) tools.Result {
	var res tools.Result
	r.report(Event{Kind: ToolStarted, Round: r.rounds, Tool: call.Name, CallID: call.ID, Args: call.Arguments})
	if why, ok := r.refused[call.ID]; ok {
		res = tools.Result{Error: true, Content: "error: " + why}
	} else if sendErr != nil && !validJSON(call.Arguments) {
		res = tools.Result{Error: true, Content: fmt.Sprintf("error: the arguments of this %s call are not valid JSON (%q); call it again with a JSON object",
			call.Name, clipWithEllipsis(call.Arguments, 200))}
	} else {
		stop := r.watchTool(ctx, clipWithEllipsis(call.Name+" "+toolSubject(call), 60))
		if call.Name == SubagentTool && r.s.subagents() {
			res = r.subagent(ctx, call)
		} else {
			res = r.introduced(ctx, r.s.cfg.Tools.Run(ctx, call))
		}
		stop()
	}
	detail := res.Payload.Path
	if res.Error {
		detail = "failed: " + firstLine(res.Content)
	}
	if res.Read != nil && r.s.cfg.RepoMap != nil {
		r.s.cfg.RepoMap.Learn(*res.Read)
	}
	r.report(Event{Kind: ToolRan, Round: r.rounds, Tool: call.Name, CallID: call.ID, Detail: detail, ToolFailed: res.Error, Text: res.Content})
	if p := res.Proposal; p != nil {
		r.proposals = append(r.proposals, p)
		r.report(Event{Kind: ProposalReady, Round: r.rounds, Proposal: p, Applied: res.Outcome != nil && res.Outcome.Applied, Detail: p.Path, CallID: call.ID})
	}
	if r.tasks.saw(call, res) {
		r.report(Event{Kind: TasksChanged, Round: r.rounds, Tasks: r.tasks.list()})
	}
	return res
}

// noteRound asks the model for its note before a fold: the same requests
// with the question appended and tools forbidden. A failed or empty note
// folds without one.
func (r *run) noteRound(ctx context.Context, p contextwin.Plan) contextwin.Plan {
	s := r.s
	for i, m := range p.Checkpoints {
		r.checkpoint(ctx, m, i == 0 && p.Fresh)
	}
	req := s.Prefix().Request(p.Messages, p.MaxTokens, "none")
	req.Temperature = s.cfg.Temperature
	resp, err := r.chat(ctx, "note", req, p, nil)
	var ee *engine.Error
	if errors.As(err, &ee) && ee.Kind == engine.Overflow && replyOverflowed(ee, req.MaxTokens) && ee.Window-ee.PromptTokens >= minNoteTokens {
		// The question fits; the room asked for the note did not (vLLM
		// counts prompt and max_tokens against its window): asked again
		// with the room the engine's own figures leave, as send does.
		req.MaxTokens = ee.Window - ee.PromptTokens
		resp, err = r.chat(ctx, "note", req, p, nil)
	}
	if ctx.Err() != nil {
		// Cancelled while the model wrote: no note, and no fold for it.
		s.mu.Lock()
		s.cw.AbandonNote()
		s.drove(transcript.Record{Kind: transcript.KindAbandon})
		s.mu.Unlock()
		return p
	}
	note := ""
	if err == nil && resp != nil {
		note = strings.TrimSpace(resp.Content)
		s.mu.Lock()
		s.stats.Notes++
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.cw.SetNote(note)
	s.drove(transcript.Record{Kind: transcript.KindNote, Text: note})
	next := s.plan()
	s.mu.Unlock()
	text := note
	if err != nil {
		text = "the note round failed: " + err.Error()
	}
	r.report(Event{Kind: NoteWritten, Round: r.rounds, Text: text})
	return next
}

// minNoteTokens is the least room a note round asked again is given: a
// note shorter than this would be cut before its facts.
const minNoteTokens = 256

// reportShrink tells the front end what a plan shed and folded.
func (r *run) reportShrink(p contextwin.Plan) {
	s := r.s
	if len(p.Shed) > 0 {
		r.report(Event{Kind: Shed, Round: r.rounds, ShedItems: p.Shed, ShedChars: p.ShedChars, Emergency: p.Event == contextwin.Emergency})
	}
	if p.Folded > 0 {
		r.report(Event{Kind: Folded, Round: r.rounds, Folded: p.Folded, RecapChars: p.RecapChars, Emergency: p.Event == contextwin.Emergency})
	}
	s.mu.Lock()
	news := s.takeToolNews()
	s.mu.Unlock()
	for _, text := range news {
		r.report(Event{Kind: Warning, Round: r.rounds, Text: text, Show: true})
	}
	switch p.Event {
	case contextwin.Shed, contextwin.Fold, contextwin.Emergency:
		s.mu.Lock()
		s.stats.Events++
		if p.Folded > 0 {
			s.stats.Folds++
		}
		s.mu.Unlock()
		s.note(transcript.KindEvent, fmt.Sprintf("%s: shed %d results, folded %d messages", p.Event, len(p.Shed), p.Folded))
	}
	for _, c := range p.Cut {
		r.report(Event{Kind: Warning, Round: r.rounds, Text: fmt.Sprintf("a result of %d bytes was cut to %d to fit the window", c.From, c.To)})
	}
}

var errTooSmall = errors.New("window too small")

// emergencyText tells the user what an emergency shrink did: shed, folded
// or both, or only cut the newest results.
func emergencyText(promptTokens, window int, p contextwin.Plan) string {
	var did []string
	if n := len(p.Shed); n > 0 {
		did = append(did, fmt.Sprintf("shed %d result%s", n, pluralSuffix(n)))
	}
	if p.Folded > 0 {
		did = append(did, fmt.Sprintf("folded %d message%s", p.Folded, pluralSuffix(p.Folded)))
	}
	if len(did) == 0 {
		did = append(did, "cut the newest results")
	}
	figures := ""
	switch {
	case promptTokens > 0 && window > 0:
		figures = fmt.Sprintf(" (%d tokens, window %d)", promptTokens, window)
	case window > 0:
		figures = fmt.Sprintf(" (window %d)", window)
	}
	return fmt.Sprintf("the engine refused the request as too long%s: %s, retrying once", figures, strings.Join(did, " and "))
}

// retriesFor is how many times a failure of this kind is retried.
func retriesFor(k engine.Kind) int {
	if k == engine.Timeout {
		return 1
	}
	return retries
}

// pluralSuffix is the "s" a count of n takes in English: none for one.
func pluralSuffix(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// send sends a round's request: on an overflow, one emergency fold and
// one retry; on a passing failure (model loading, 5xx, a cut stream, a
// rate limit), two retries after a wait, the one the engine asked for
// (Retry-After, up to maxRetryAfter) or the default; on a silent engine,
// one (it has already been waited for, and the user has been hearing
// about it).
func (r *run) send(ctx context.Context, p contextwin.Plan) (*engine.Response, error) {
	s := r.s
	overflowed, capped := false, false
	for i, m := range p.Checkpoints {
		r.checkpoint(ctx, m, i == 0 && p.Fresh)
	}
	for attempt := 0; ; attempt++ {
		req := s.Prefix().Request(p.Messages, p.MaxTokens, "")
		req.Temperature = s.cfg.Temperature
		resp, err := r.chat(ctx, "", req, p, r.stream)
		var ee *engine.Error
		switch {
		case err == nil, errors.Is(err, engine.BadToolCall):
			return resp, err
		case errors.As(err, &ee) && ee.Kind == engine.Overflow && !capped && replyOverflowed(ee, p.MaxTokens):
			// The prompt fits; the room asked for the reply did not
			// (vLLM refuses prompt + max_tokens over its window, before
			// any prefill): the same request goes again with the room
			// the engine's own figures leave.
			capped = true
			p.MaxTokens = ee.Window - ee.PromptTokens
			attempt = -1
			continue
		case errors.As(err, &ee) && ee.Kind == engine.Overflow && !overflowed:
			overflowed = true
			s.mu.Lock()
			s.stats.Overflows++
			p = s.cw.Overflow(ee.PromptTokens, ee.Window)
			s.drove(transcript.Record{Kind: transcript.KindOverflow, Overflow: &transcript.Overflow{PromptTokens: ee.PromptTokens, Window: ee.Window}})
			window := s.cw.Window()
			s.mu.Unlock()
			if p.GiveUp || p.TooSmall {
				return nil, fmt.Errorf("%w: %s", errTooSmall, p.Problem)
			}
			r.reportShrink(p)
			r.report(Event{Kind: Warning, Round: r.rounds, Emergency: true, Text: emergencyText(ee.PromptTokens, window, p)})
			// The fold's checkpoint requests go before its retry, as
			// before any fold's request.
			for i, m := range p.Checkpoints {
				r.checkpoint(ctx, m, i == 0 && p.Fresh)
			}
			attempt = -1
			continue
		case errors.As(err, &ee) && ee.Kind.Retryable() && ee.Kind != engine.Unreachable && attempt < retriesFor(ee.Kind):
			wait := s.retryWait[attempt]
			if ee.RetryAfter > maxRetryAfter {
				return nil, fmt.Errorf("not retried (a retry waits %s at most): %w", inSeconds(maxRetryAfter), err)
			}
			if ee.RetryAfter > 0 {
				wait = ee.RetryAfter
			}
			r.report(Event{Kind: Warning, Round: r.rounds, Retry: true, Text: fmt.Sprintf("%v; retrying in %v", err, wait)})
			if err := r.pause(ctx, wait, retryReason(ee.Kind)); err != nil {
				return nil, err
			}
			continue
		}
		return resp, err
	}
}

// pause waits d before a retry, the progress line saying why and how long
// is left ("rate limited: retrying in 60 s"), counted down every
// retryTell. It returns the context's error as soon as the run is
// cancelled.
func (r *run) pause(ctx context.Context, d time.Duration, why string) error {
	for left := d; left > 0; {
		r.report(Event{Kind: Activity, Round: r.rounds, Text: fmt.Sprintf("%s: retrying in %s", why, inSeconds(left))})
		// The first step brings the count to a multiple of retryTell.
		step := left % retryTell
		if step == 0 {
			step = retryTell
		}
		if err := r.s.sleep(ctx, step); err != nil {
			return err
		}
		left -= step
	}
	return nil
}

// retryReason is what a retry waits out, for the progress line.
func retryReason(k engine.Kind) string {
	switch k {
	case engine.RateLimit:
		return "rate limited"
	case engine.Loading:
		return "model loading"
	}
	return k.String()
}

// inSeconds writes a wait in whole seconds, rounded up: "60 s".
func inSeconds(d time.Duration) string {
	return fmt.Sprintf("%d s", (d+time.Second-1)/time.Second)
}

// sleep waits d, or until ctx is done, and returns ctx's error then.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkpoint sends one of the checkpoint requests a fold's plan asks for
// on an engine that restarts from checkpoints, one token generated, so
// that the engine takes a checkpoint just before a place the next fold
// changes (see contextwin.Plan.Checkpoints). A failure costs only the
// checkpoint: the request itself follows whatever happens. A fresh one
// goes without the engine's prompt cache (Plan.Fresh): llama.cpp then
// prefills it from token 0 and drops the slot's checkpoints.
func (r *run) checkpoint(ctx context.Context, msgs []contextwin.Message, fresh bool) {
	s := r.s
	req := s.Prefix().Request(msgs, 1, "none")
	req.Temperature = s.cfg.Temperature
	req.Slot = s.slotRef()
	req.Session, req.ParentSession = s.sessionKey(), s.parentKey
	req.Model = s.modelName()
	if fresh {
		req.Extra = map[string]any{"cache_prompt": false}
	}
	resp, err := s.cfg.Engine.Chat(ctx, req, func(engine.Delta) {})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Requests++
	var ee *engine.Error
	if errors.As(err, &ee) && ee.Kind == engine.BadRequest && len(msgs) > 0 && msgs[len(msgs)-1].Role == contextwin.Assistant {
		// The engine will not go on with a last assistant message
		// (llama.cpp refuses it for a template that thinks).
		s.cw.RefusedPrefill()
	}
	if err != nil || resp == nil {
		return
	}
	what := "checkpoint"
	if fresh {
		what = "checkpoint, without the prompt cache"
	}
	if line := s.debugLine(what, req, resp); line != "" {
		defer r.report(Event{Kind: Debug, Round: r.rounds, Text: line})
	}
	_, _, ms := s.tally(resp)
	cached, known := cacheFigure(resp)
	u := contextwin.Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens, Cached: cached, CachedKnown: known}
	s.cw.ObserveCheckpoint(u)
	s.drove(transcript.Record{Kind: transcript.KindCheckpoint, Usage: &transcript.Usage{
		PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CachedTokens: cached, CachedKnown: known, PromptMS: ms}})
}

// stream reports a round's streamed text and reasoning as they arrive.
func (r *run) stream(d engine.Delta) {
	if d.Content != "" {
		r.report(Event{Kind: Streamed, Round: r.rounds, Text: d.Content})
	}
	if d.Reasoning != "" {
		r.report(Event{Kind: Reasoned, Round: r.rounds, Text: d.Reasoning})
	}
}

// chat sends one request, streaming (each piece to onDelta when it is
// set), and takes in the engine's figures.
func (r *run) chat(ctx context.Context, what string, req engine.Request, p contextwin.Plan, onDelta func(engine.Delta)) (*engine.Response, error) {
	s := r.s
	cur, _ := promptBytes(req)
	req.FirstByte = s.firstByte(p.Estimate)
	req.Slot = s.slotRef()
	req.Session, req.ParentSession = s.sessionKey(), s.parentKey
	req.Model = s.modelName()
	touch, stop := r.watchSilence(ctx, p.Estimate)
	resp, err := s.cfg.Engine.Chat(ctx, req, func(d engine.Delta) {
		touch()
		if onDelta != nil {
			onDelta(d)
		}
	})
	stop()
	s.mu.Lock()
	s.stats.Requests++
	if resp != nil && (err == nil || errors.Is(err, engine.BadToolCall)) {
		s.prev = cur
		cached, known := cacheFigure(resp)
		s.sawSlot(cached, known)
		fig := s.cw.Observe(contextwin.Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
			FinishReason: resp.FinishReason, Cached: cached, CachedKnown: known})
		if resp.Overran {
			// No usage came: the stream was stopped before it, which is no
			// sign of an engine that never reports it.
			defer r.report(Event{Kind: Warning, Round: r.rounds, Text: fmt.Sprintf(
				"the engine went on generating past max_tokens (%d): Reika stopped reading the reply there and took it as cut", req.MaxTokens)})
		} else if text := s.figureNotice(fig, resp.Usage.PromptTokens, p.Estimate); text != "" {
			defer r.report(Event{Kind: Warning, Round: r.rounds, Text: text})
		}
		if fig == contextwin.Truncated {
			s.stats.Truncations++
			defer r.report(Event{Kind: Warning, Round: r.rounds, Text: fmt.Sprintf(
				"the engine counted %d prompt tokens for a request Reika estimated at %d: it silently dropped part of the prompt. "+
					"Set REIKA_CONTEXT_WINDOW to the engine's real context size", resp.Usage.PromptTokens, p.Estimate)})
		}
		_, reused, ms := s.tally(resp)
		s.stats.LastPrompt = resp.Usage.PromptTokens
		if line := s.debugLine(what, req, resp); line != "" {
			defer r.report(Event{Kind: Debug, Round: r.rounds, Text: line})
		}
		if s.tr != nil {
			s.tr.Append(transcript.Record{Kind: transcript.KindUsage, Usage: &transcript.Usage{
				PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
				CachedTokens: reused, CachedKnown: known, PromptMS: ms, Event: &p.Event, FinishReason: resp.FinishReason}})
		}
	}
	s.mu.Unlock()
	return resp, err
}

// tally adds a response's figures to the session's stats and returns
// what the engine reprocessed and reused, and its prefill time. The
// caller holds mu.
func (s *Session) tally(resp *engine.Response) (reprocessed, reused int, ms float64) {
	reprocessed, reused, ms = engineFigures(resp)
	s.stats.Prefilled += reprocessed
	s.stats.Reused += reused
	s.stats.PromptMS += ms
	s.stats.Decoded += resp.Usage.CompletionTokens
	return reprocessed, reused, ms
}

// engineFigures reads what the engine reprocessed and reused: llama.cpp's
// timings when it sent them, else the usage's cached tokens.
func engineFigures(r *engine.Response) (reprocessed, reused int, ms float64) {
	if t := r.Timings; t != nil {
		return t.PromptN, t.CacheN, t.PromptMS
	}
	cached := max(r.Usage.CachedTokens, 0)
	return r.Usage.PromptTokens - cached, cached, 0
}

// cacheFigure is how many prompt tokens the engine said it reused, and
// whether it said: llama.cpp's timings.cache_n, else the usage's cached
// tokens.
func cacheFigure(r *engine.Response) (cached int, known bool) {
	if t := r.Timings; t != nil {
		return t.CacheN, true
	}
	return r.Usage.CachedTokens, r.Usage.CachedTokens >= 0
}

// validJSON reports whether tool-call arguments are empty or a JSON object.
func validJSON(s string) bool {
	s = strings.TrimSpace(s)
	return s == "" || (strings.HasPrefix(s, "{") && jsonValid(s))
}

// firstLine is the first line of s, clipped for an event's detail.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clipWithEllipsis(s, 160)
}

// clipWithEllipsis cuts s to at most n bytes, on a character's boundary,
// and marks the cut with "…"; a shorter s is returned as it is.
func clipWithEllipsis(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// replyOverflowed reports whether the engine refused a request whose
// prompt fits its window for the max_tokens asked: its figures say the
// prompt leaves room, less than was asked, for the reply.
func replyOverflowed(ee *engine.Error, maxTokens int) bool {
	return ee.PromptTokens > 0 && ee.Window > 0 && ee.PromptTokens < ee.Window && maxTokens > ee.Window-ee.PromptTokens
}
