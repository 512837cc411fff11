package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/tools"
)

// askArgs are reika.ask's arguments.
type askArgs struct {
	Instruction string               `json:"instruction"`
	URI         protocol.DocumentURI `json:"uri,omitempty"`
	Range       *protocol.Range      `json:"range,omitempty"`
	// Trust is the run's mode: "" (edits apply, protected paths and
	// commands off the allow list ask), "ask" (every edit and command
	// asks first) or "plan" (read-only: edits and commands off the
	// read-only list are refused, and the answer ends in a numbered plan).
	Trust string `json:"trust,omitempty"`
	// Queue: while a run is under way, wait and run after it instead of
	// joining it.
	Queue bool `json:"queue,omitempty"`
	// Diagnostics are the errors and warnings the editor shows in the
	// workspace, a file's as textDocument/publishDiagnostics gives them
	// (editor_diagnostics.go); nil when the client sends none, empty
	// when the editor shows none.
	Diagnostics *[]protocol.PublishDiagnosticsParams `json:"diagnostics,omitempty"`
}

// maxInstruction bounds reika.ask's instruction: the model reads it in
// every request of the run, and a client's runaway paste should not fill
// the window and the server's memory.
const maxInstruction = 256 << 10

// startAsk starts a run in the background and returns at once. An ask
// while a run is under way joins it as the user's next message, or, with
// "queue": true, waits and runs after it (join.go).
func (s *Server) startAsk(key string, a askArgs) (*AskResult, error) {
	if strings.TrimSpace(a.Instruction) == "" {
		return nil, s.missingArgument(CmdAsk)
	}
	if len(a.Instruction) > maxInstruction {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "reika.ask: the instruction is %d bytes, over the limit of %d (%d KiB): shorten it, or save the text to a file in the workspace and ask about the file",
			len(a.Instruction), maxInstruction, maxInstruction>>10)
	}
	instruction, err := s.instruction(a)
	if err != nil {
		return nil, err
	}
	if a.Diagnostics != nil {
		instruction = joinParagraphs(instruction, s.takeEditorDiagnostics(*a.Diagnostics))
	}
	mode := tools.Mode(a.Trust)
	if mode != tools.Normal && mode != tools.AskAll && mode != tools.Plan {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "reika.ask: trust %q is not a mode: leave it out, give %q to be asked before every edit and command, or %q for a read-only plan", a.Trust, TrustAsk, TrustPlan)
	}
	ctx, cancel := context.WithCancel(tools.WithRun(s.ctx, mode))
	r := &activeRun{cancel: cancel, key: key, asked: clipLine(a.Instruction, 120)}
	q := queuedAsk{r: r, ctx: ctx, instruction: instruction}
	switch s.runs.admit(q, a.Queue) {
	case joined:
		cancel()
		line := "added to the run: " + clipLine(a.Instruction, 80)
		s.runs.report(line)
		s.logMessage(protocol.MessageTypeInfo, "Reika: %s", line)
		return &AskResult{Joined: true}, nil
	case queued:
		s.logMessage(protocol.MessageTypeInfo, "Reika: queued after the run under way: %s", clipLine(a.Instruction, 80))
		return &AskResult{Queued: true}, nil
	}
	s.launch(q)
	return &AskResult{Started: true}, nil
}

// launch runs q, the run under way, in a goroutine the connection owns.
func (s *Server) launch(q queuedAsk) {
	s.goOwned(func(context.Context) {
		defer q.r.cancel()
		defer s.afterRun(q.r)
		s.doAsk(q.ctx, q.r, q.instruction)
	})
}

// afterRun forgets the run, ends the session when the settings changed
// during it (they apply from the next run), and starts the ask that
// waited for it.
func (s *Server) afterRun(r *activeRun) {
	s.finishRun(r)
	if q := s.runs.next(); q != nil {
		s.launch(*q)
	}
}

// finishRun forgets the run and ends the session when the settings
// changed during it. The ask that waits starts only after the run's end
// was told (launch's afterRun), so its progress never opens before the
// last one's closed.
func (s *Server) finishRun(r *activeRun) {
	s.runs.finish(r)
	s.endOutdated()
}

// instruction is the user's instruction with the place it is about: the
// file, the lines, and the selected text.
func (s *Server) instruction(a askArgs) (string, error) {
	if a.URI == "" {
		return a.Instruction, nil
	}
	// A buffer that is not a file (untitled:) is named by its URI; its
	// text comes from the editor.
	rel := string(a.URI)
	text, ok := "", false
	path, perr := URIToPath(a.URI)
	if perr == nil {
		// A file outside the workspace never reaches the prompt: the
		// agent's tools could not read it either.
		if _, inside := s.mapPath(path); !inside {
			return "", jsonrpc2.Errorf(jsonrpc2.InvalidParams, "reika.ask: %s is outside the workspace (%s); Reika works only on the workspace's files", path, strings.Join(s.workspace(), ", "))
		}
		rel = s.relative(path)
	}
	if d, open := s.docs.Get(a.URI); open {
		text, ok = d.Text, true
	} else if perr != nil {
		return "", jsonrpc2.Errorf(jsonrpc2.InvalidParams, "reika.ask: %v", perr)
	} else if data, err := os.ReadFile(path); err == nil {
		text, ok = string(data), true
	}
	if a.Range == nil || !ok {
		return fmt.Sprintf("%s\n\nThe file: %s", a.Instruction, rel), nil
	}
	m := NewMapper(text, s.encoding())
	start, end, err := m.OffsetRange(*a.Range)
	if err != nil {
		return "", fmt.Errorf("reika.ask: the range is outside %s: %v", rel, err)
	}
	from, to := a.Range.Start.Line+1, a.Range.End.Line+1
	if a.Range.End.Character == 0 && to > from {
		to--
	}
	sel := text[start:end]
	if sel == "" {
		return fmt.Sprintf("%s\n\nThe place: %s, line %d.", a.Instruction, rel, from), nil
	}
	const maxSel = 12000
	if len(sel) > maxSel {
		sel = sel[:maxSel] + "\n[… the rest of the selection was left out; read the file for it]"
	}
	return fmt.Sprintf("%s\n\nThe place: %s, lines %d-%d:\n```\n%s\n```", a.Instruction, rel, from, to, sel), nil
}

// relative writes a path relative to the first workspace folder when it
// is inside it.
func (s *Server) relative(path string) string { return s.folders.relative(path) }

// doAsk runs the agent with progress and messages.
func (s *Server) doAsk(ctx context.Context, r *activeRun, instruction string) {
	sess, err := s.session(ctx)
	if err != nil {
		// The run is over before the user hears why: a next ask must not
		// find it still under way.
		s.finishRun(r)
		s.showMessage(protocol.MessageTypeError, "Reika: %v", err)
		return
	}
	s.runs.attach(r, sess.agent)
	// Status lines learn at once that a run started.
	s.sendStatus(sess.agent.Chip(), true)
	prog := s.startProgress(ctx, "Reika", clipLine(instruction, 80))
	r.prog.Store(prog)
	if !prog.ok {
		s.showMessage(protocol.MessageTypeInfo, "Reika is working on it: %s", clipLine(instruction, 80))
	}
	report := s.reporter(r, sess, prog)
	res, err := sess.agent.Run(ctx, instruction, report)
	s.runs.over(r)
	chip := sess.agent.Chip()
	s.sendStatus(chip, false)
	undone := s.lateUndos(r)
	s.recheckLines(r)
	summary := r.landed()
	// The run is over before the user hears so: a next ask must not find
	// it still under way.
	s.finishRun(r)
	s.tellEnd(ctx, sess, prog, res, err, summary, chip.String())
	s.goOwned(func(ctx context.Context) { s.watchLateUndos(ctx, r, sess.agent, undone) })
}

// reporter turns the run's events into progress, status and messages.
func (s *Server) reporter(r *activeRun, sess *agentConn, prog *progress) func(agent.Event) {
	debug := sess.agent.Debug()
	return func(e agent.Event) {
		switch e.Kind {
		case agent.RoundStarted:
			prog.report(fmt.Sprintf("round %d · %s", e.Round, e.Chip))
		case agent.ChipChanged:
			s.sendStatus(e.Chip, true)
		case agent.ToolRan:
			prog.report(fmt.Sprintf("%s %s", e.Tool, clipLine(e.Detail, 60)))
			s.tellUndos(r, sess.agent)
		case agent.NoteWritten:
			s.logMessage(protocol.MessageTypeLog, "Reika note: %s", e.Text)
		case agent.Shed:
			s.logMessage(protocol.MessageTypeLog, "Reika: %s", e)
		case agent.Folded:
			if e.Emergency {
				// The warning that follows says it all, in one line.
				s.logMessage(protocol.MessageTypeLog, "Reika: %s", e)
				break
			}
			s.showMessage(protocol.MessageTypeInfo, "Reika %s", e)
		case agent.Replied:
			// The user said more meanwhile: this answer is read now, and
			// the run goes on.
			s.showMessage(protocol.MessageTypeInfo, "Reika: %s", clipLine(oneLine(strings.TrimSpace(e.Text)), answerInline))
			if strings.Contains(strings.TrimSpace(e.Text), "\n") {
				s.logMessage(protocol.MessageTypeInfo, "Reika's answer:\n%s", strings.TrimSpace(e.Text))
			}
		case agent.Finished, agent.Failed:
			// What the user asks from now on runs next.
			s.runs.over(r)
		case agent.TasksChanged:
			prog.report(tasksLine(e.Tasks))
		case agent.Activity, agent.Delegated:
			prog.report(e.Text)
		case agent.Waiting:
			prog.report(e.Text)
			if !prog.ok {
				s.logMessage(protocol.MessageTypeInfo, "Reika: %s", e.Text)
			}
		case agent.Warning:
			if e.Emergency || e.Show {
				s.showMessage(protocol.MessageTypeWarning, "Reika: %s", e.Text)
				break
			}
			s.logMessage(protocol.MessageTypeWarning, "Reika: %s", e.Text)
		case agent.Debug:
			if debug {
				s.logMessage(protocol.MessageTypeLog, "%s", e.Text)
			}
		}
	}
}

// tellEnd ends the run's progress and tells the user how the run ended:
// its answer, or why it stopped, with the end line summary and the chip.
func (s *Server) tellEnd(ctx context.Context, sess *agentConn, prog *progress, res agent.Result, err error, summary, chip string) {
	switch res.End {
	case agent.Answered:
		prog.end("done")
		s.showAnswer(ctx, sess, withTasks(res.Answer, res.Tasks), summary, chip)
	case agent.Canceled:
		prog.end("cancelled")
		s.showMessage(protocol.MessageTypeInfo, "Reika stopped: cancelled; %s · %s", summary, chip)
	case agent.StepLimit:
		prog.end("step limit")
		s.showMessage(protocol.MessageTypeWarning, "Reika stopped after %d rounds, its step limit; %s · %s", res.Rounds, summary, chip)
	default:
		prog.end("failed")
		s.showMessage(protocol.MessageTypeError, "Reika stopped: %s; %s", oneLine(err.Error()), summary)
	}
}

// pluralSuffix is the suffix a noun takes after the count n: "s", or "" when n
// is 1 ("%d change%s").
func pluralSuffix(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// answerInline is the longest answer shown in a message; a longer one
// opens as a document. statusWidth is the longest answer a client that
// shows messages in one line of its status bar (Helix) gets in one: the
// summary and the chip after it may be cut, the answer is not.
const (
	answerInline = 400
	statusWidth  = 80
)

// showAnswer shows the model's final answer whole, where the user looks:
// in a message when it is short; else in the client's own view of it
// (reika/answer: VS Code's panel); else in a Markdown document the editor
// opens; else, for a client that opens none, in a message of its own
// lines after the end line.
func (s *Server) showAnswer(ctx context.Context, sess *agentConn, answer, summary, chip string) {
	answer = strings.TrimSpace(answer)
	s.sendAnswer(answer, summary, chip)
	c := s.caps()
	short := len(answer) <= answerInline && !strings.Contains(answer, "\n")
	if short && !(c.oneLineStatus && c.showDocument && len("Reika: "+answer) > statusWidth) {
		s.showMessage(protocol.MessageTypeInfo, "Reika: %s · %s · %s", oneLine(answer), summary, chip)
		return
	}
	s.showMessage(protocol.MessageTypeInfo, "Reika finished: %s · %s", summary, chip)
	if c.showsAnswers {
		return
	}
	if c.showDocument {
		path := filepath.Join(sess.agent.Info().StateDir, fmt.Sprintf("answer-%s.md", time.Now().UTC().Format("20060102-150405")))
		text := answer
		if c.oneLineStatus {
			text = wrapMarkdown(answer, answerWidth) // Helix does not wrap lines
		}
		if err := os.WriteFile(path, []byte(text+"\n"), 0o600); err == nil && s.showDocument(ctx, path, false) {
			return
		}
	}
	// The whole text, its lines kept (showMessage would make them one): a
	// client shows a message of several lines whole (Neovim asks to press
	// Enter), where it cuts a long line.
	s.notify(protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: protocol.MessageTypeInfo, Message: answerPrefix + answer})
}

// answerPrefix begins the message that holds an answer whole, after the
// end line, for a client that opens no document (the Neovim plugin joins
// it to its answer window).
const answerPrefix = "Reika's answer:\n"

// sendAnswer sends the answer in full as reika/answer, before the message
// that ends the run: a client that shows the conversation has it whole
// when the run's end comes. Other clients ignore it.
func (s *Server) sendAnswer(answer, summary, chip string) {
	s.notify(AnswerNotification, &AnswerParams{Answer: answer, Summary: summary, Chip: chip})
}

func (s *Server) canShowDocument() bool { return s.caps().showDocument }

// showDocument asks the editor to open a file: a raw call, since
// go.lsp.dev puts window/showDocument on the wrong interface (defect 6 in
// doc.go); its params and result types work.
func (s *Server) showDocument(ctx context.Context, path string, takeFocus bool) bool {
	var res protocol.ShowDocumentResult
	err := s.call(ctx, s.opts.ClientTimeout, protocol.MethodShowDocument,
		&protocol.ShowDocumentParams{URI: protocol.URI(PathToURI(path)), TakeFocus: takeFocus}, &res)
	return err == nil && res.Success
}

// cancelRun stops the run under way, if any, and the asks queued after it.
func (s *Server) cancelRun() bool {
	if n := s.runs.dropQueue(); n > 0 {
		s.logMessage(protocol.MessageTypeInfo, "Reika: %d queued ask%s dropped", n, pluralSuffix(n))
	}
	return s.runs.cancel()
}
