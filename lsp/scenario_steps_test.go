package lsp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/lsp/lsptest"
)

// verb is one word of the step language (or of expect): the words a step
// needs at least, itself included, and what it does.
type verb struct {
	arity int
	run   func(r *runner, line string, args []string)
	// notifies: what the step sends is a notification; the runner lets
	// the server's answer to it land before the next step's line.
	notifies bool
	// observes: a wait or an expectation. It is not in the transcript,
	// where it would race with what the server sends.
	observes bool
}

// stepVerbs are the steps runner.step knows.
var stepVerbs = map[string]verb{
	"open":             {arity: 2, run: (*runner).stepOpen, notifies: true},
	"close":            {arity: 2, run: (*runner).stepClose, notifies: true},
	"save":             {arity: 2, run: (*runner).stepSave, notifies: true},
	"edit":             {arity: 4, run: (*runner).stepEdit, notifies: true},
	"type":             {arity: 4, run: (*runner).stepType},
	"stale-change":     {arity: 4, run: (*runner).stepStaleChange, notifies: true},
	"gen":              {arity: 4, run: (*runner).stepGen},
	"codeaction":       {arity: 3, run: (*runner).stepCodeAction},
	"codeaction-churn": {arity: 3, run: (*runner).stepCodeActionChurn},
	"pick":             {arity: 2, run: (*runner).stepPick, notifies: true},
	"exec":             {arity: 2, run: (*runner).stepExec},
	"exec-async":       {arity: 2, run: (*runner).stepExecAsync},
	"call":             {arity: 3, run: (*runner).stepCall},
	"notify":           {arity: 3, run: (*runner).stepNotify, notifies: true},
	"on-apply":         {arity: 2, run: (*runner).stepOnApply},
	"on-ask":           {arity: 2, run: (*runner).stepOnAsk},
	"cancel":           {arity: 2, run: (*runner).stepCancel},
	"wait":             {arity: 2, run: (*runner).stepWait, observes: true},
	"expect":           {arity: 2, run: (*runner).stepExpect, observes: true},
	"shutdown":         {arity: 1, run: (*runner).stepShutdown},
	"raw":              {arity: 2, run: (*runner).stepRaw, notifies: true},
	"raw-body":         {arity: 2, run: (*runner).stepRawBody, notifies: true},
}

// step runs one step. The step language, every verb with its arguments,
// is described in scenario_doc_test.go; each verb is one entry of
// stepVerbs.
func (r *runner) step(line string) {
	t := r.t
	t.Helper()
	args, err := splitStep(line)
	if err != nil {
		t.Fatalf("step %q: %v", line, err)
	}
	v, ok := stepVerbs[args[0]]
	if !ok {
		t.Fatalf("unknown step %q", line)
	}
	r.need(line, args, v.arity)
	v.run(r, line, args)
}

// need fails the step unless it has at least n words.
func (r *runner) need(line string, args []string, n int) {
	r.t.Helper()
	if len(args) < n {
		r.t.Fatalf("step %q: want at least %d arguments", line, n-1)
	}
}

func (r *runner) stepOpen(_ string, args []string) { r.e.Open(r.path(args[1])) }

func (r *runner) stepClose(_ string, args []string) { r.e.Close(r.path(args[1])) }

func (r *runner) stepSave(_ string, args []string) { r.e.Save(r.path(args[1])) }

func (r *runner) stepType(_ string, args []string) {
	if err := r.e.TypePending(r.path(args[1]), args[2], args[3]); err != nil {
		r.t.Fatal(err)
	}
}

func (r *runner) stepEdit(_ string, args []string) {
	r.e.Edit(r.path(args[1]), args[2], args[3])
}

func (r *runner) stepStaleChange(line string, args []string) {
	t, e := r.t, r.e
	t.Helper()
	d, ok := e.Doc(r.path(args[1]))
	if !ok {
		t.Fatalf("step %q: not open", line)
	}
	i := strings.Index(d.Text, args[2])
	if i < 0 {
		t.Fatalf("step %q: %q not found", line, args[2])
	}
	e.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": d.URI, "version": d.Version},
		"contentChanges": []any{map[string]any{"range": lsptest.RangeOf(d.Text, i, i+len(args[2]), e.Encoding), "text": args[3]}},
	})
}

func (r *runner) stepGen(line string, args []string) {
	t := r.t
	t.Helper()
	n, err := strconv.Atoi(args[2])
	if err != nil {
		t.Fatalf("step %q: %v", line, err)
	}
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strings.ReplaceAll(args[3], "%d", strconv.Itoa(i)) + "\n")
	}
	abs := r.e.Abs(args[1])
	os.MkdirAll(filepath.Dir(abs), 0o755)
	if err := os.WriteFile(abs, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r.generated[args[1]] = true
}

func (r *runner) stepCodeAction(line string, args []string) {
	t, e := r.t, r.e
	t.Helper()
	path := r.path(args[1])
	var rng lsptest.Range
	var diags []lsptest.Diagnostic
	for _, a := range args[2:] {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "line":
			rng = e.FindLine(path, regexArg(t, v))
		case "at":
			rng = e.Find(path, regexArg(t, v))
		case "diag":
			diags = append(diags, lsptest.Diagnostic{Range: rng, Severity: 1, Source: "compiler", Message: v})
		default:
			t.Fatalf("step %q: unknown argument %q", line, a)
		}
	}
	r.actions = e.CodeActions(path, rng, diags...)
	var titles []string
	for _, a := range r.actions {
		titles = append(titles, a.Title)
	}
	r.results = append(r.results, fmt.Sprintf("%s → %d actions: %s", line, len(titles), strings.Join(titles, " | ")))
}

func (r *runner) stepCodeActionChurn(line string, args []string) {
	t, e := r.t, r.e
	t.Helper()
	path := r.path(args[1])
	k, v, _ := strings.Cut(args[2], "=")
	if k != "line" {
		t.Fatalf("step %q: want line=/re/", line)
	}
	rng := e.FindLine(path, regexArg(t, v))
	params := map[string]any{"textDocument": map[string]any{"uri": e.URI(path)}, "range": rng,
		"context": map[string]any{"diagnostics": []any{}, "triggerKind": 2}}
	first := e.Go("textDocument/codeAction", params)
	e.CancelRequest(first)
	second := e.Go("textDocument/codeAction", params)
	var a, b []json.RawMessage
	_, errA := first.Wait(&a)
	_, errB := second.Wait(&b)
	var rpcErr *lsptest.RPCError
	switch {
	case errA != nil && !(errors.As(errA, &rpcErr) && rpcErr.Code == -32800):
		t.Errorf("step %q: the cancelled request was answered %v, want its actions or RequestCancelled", line, errA)
	case errB != nil:
		t.Errorf("step %q: the repeated request: %v", line, errB)
	}
	r.results = append(r.results, fmt.Sprintf("%s → the repeated request: %d actions", line, len(b)))
}

func (r *runner) stepPick(line string, args []string) {
	e := r.e
	p, err := e.RunAction(e.PickAction(r.actions, args[1]))
	if err != nil {
		r.results = append(r.results, line+" → error: "+r.normalize(err.Error()))
		return
	}
	if p != nil {
		r.later(line, p)
	}
}

// later keeps a slot among the results for p's answer, collected at the
// end (or by wait answer).
func (r *runner) later(line string, p *lsptest.Pending) {
	r.async = append(r.async, asyncCall{line, p, len(r.results), new(bool)})
	r.results = append(r.results, "")
	r.lastAsync = p
}

// await waits for p's answer and puts it among the results.
func (r *runner) await(line string, p *lsptest.Pending) {
	res, err := p.Wait(nil)
	r.lastRaw = res
	r.lastRes = r.result(res, err)
	r.results = append(r.results, line+" → "+r.lastRes)
}

// command is the params of workspace/executeCommand CMD [JSON].
func (r *runner) command(args []string) map[string]any {
	cmdArgs := []any{}
	if len(args) > 2 {
		cmdArgs = append(cmdArgs, r.jsonArg(args[2]))
	}
	return map[string]any{"command": args[1], "arguments": cmdArgs}
}

func (r *runner) stepExec(line string, args []string) {
	r.await(line, r.e.Go("workspace/executeCommand", r.command(args)))
}

func (r *runner) stepExecAsync(line string, args []string) {
	r.later(line, r.e.Go("workspace/executeCommand", r.command(args)))
}

func (r *runner) stepCall(line string, args []string) {
	r.await(line, r.e.Go(args[1], r.jsonArg(args[2])))
}

func (r *runner) stepNotify(_ string, args []string) {
	r.e.Notify(args[1], r.jsonArg(args[2]))
}

func (r *runner) stepOnApply(line string, args []string) {
	e := r.e
	r.t.Helper()
	switch args[1] {
	case "accept":
		e.OnApply(lsptest.ApplyAnswer{})
	case "ignore":
		e.OnApply(lsptest.ApplyAnswer{Ignore: true})
	case "refuse":
		r.need(line, args, 3)
		e.OnApply(lsptest.ApplyAnswer{Refuse: args[2]})
	case "user-edit":
		r.need(line, args, 5)
		path, old, new := r.path(args[2]), args[3], args[4]
		e.OnApply(lsptest.ApplyAnswer{Before: func(e *lsptest.Editor) error {
			e.Note("  (the user edits %s before the editor answers)", path)
			return e.TryEdit(path, old, new)
		}})
	case "undo":
		// The user undoes the edit at once: one didChange with both.
		e.OnApply(lsptest.ApplyAnswer{Undo: true})
	case "revert":
		// The user reverts the buffer before the editor sent the edit.
		e.OnApply(lsptest.ApplyAnswer{Revert: true})
	case "user-types":
		// Typing Neovim has not sent yet (its didChange debounce).
		r.need(line, args, 5)
		path, old, new := r.path(args[2]), args[3], args[4]
		e.OnApply(lsptest.ApplyAnswer{Before: func(e *lsptest.Editor) error {
			e.Note("  (the user types in %s; the editor has not sent it yet)", path)
			return e.TypePending(path, old, new)
		}})
	default:
		r.t.Fatalf("step %q: on-apply accept, refuse, ignore, undo, revert, user-edit or user-types", line)
	}
}

func (r *runner) stepOnAsk(_ string, args []string) {
	r.askMu.Lock()
	r.asks = append(r.asks, args[1])
	r.askMu.Unlock()
}

func (r *runner) stepCancel(line string, args []string) {
	t, e := r.t, r.e
	t.Helper()
	r.cancelAt = time.Now()
	switch args[1] {
	case "command":
		res, err := e.Exec("reika.cancel")
		r.results = append(r.results, line+" → "+r.result(res, err))
	case "progress":
		token := e.ProgressToken()
		if token == "" {
			t.Fatalf("step %q: the server created no progress", line)
		}
		e.Notify("window/workDoneProgress/cancel", map[string]any{"token": token})
	case "request":
		if r.lastAsync == nil {
			t.Fatalf("step %q: no request to cancel", line)
		}
		e.CancelRequest(r.lastAsync)
	default:
		t.Fatalf("step %q: cancel command, progress or request", line)
	}
}

func (r *runner) stepWait(line string, args []string) {
	t, e := r.t, r.e
	t.Helper()
	from := r.since
	switch args[1] {
	case "run-end":
		e.WaitRunEnd(from)
	case "line":
		r.need(line, args, 3)
		rx := regexp.MustCompile(regexArg(t, args[2]))
		e.WaitFor("a line matching "+args[2], from, func(ev lsptest.Event) bool {
			return ev.Method != "" && rx.MatchString(r.normalize(ev.Line))
		})
	case "progress":
		r.need(line, args, 3)
		e.WaitProgress(from, args[2])
	case "answer":
		if len(r.async) == 0 {
			t.Fatalf("step %q: no request on its way", line)
		}
		r.answer(r.async[len(r.async)-1])
	case "streaming":
		r.need(line, args, 3)
		n, err := strconv.Atoi(args[2])
		if err != nil {
			t.Fatalf("step %q: %v", line, err)
		}
		e.Engine.WaitStreaming(n)
	default:
		t.Fatalf("step %q: unknown wait", line)
	}
}

func (r *runner) stepExpect(line string, args []string) {
	r.t.Helper()
	r.expect(line, args[1:])
}

func (r *runner) stepShutdown(line string, _ []string) {
	r.cancelAt = time.Now() // shutdown cancels a run under way
	err := r.e.Shutdown()
	res := "Serve returned nil"
	if err != nil {
		res = "Serve returned " + err.Error()
	}
	r.results = append(r.results, line+" → "+res)
}

func (r *runner) stepRaw(_ string, args []string) { r.e.Raw([]byte(args[1])) }

func (r *runner) stepRawBody(line string, _ []string) {
	body := strings.TrimSpace(strings.TrimPrefix(line, "raw-body"))
	r.e.Raw([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)))
}

func (r *runner) path(p string) string {
	if p == "@shown" {
		shown := r.e.Shown()
		if len(shown) == 0 {
			r.t.Fatalf("no document was shown")
		}
		return shown[len(shown)-1]
	}
	return p
}

var uriArg = regexp.MustCompile(`\$URI\(([^)]*)\)`)

func (r *runner) jsonArg(s string) json.RawMessage {
	s = uriArg.ReplaceAllStringFunc(s, func(m string) string {
		return r.e.URI(uriArg.FindStringSubmatch(m)[1])
	})
	s = strings.ReplaceAll(s, "$WS", filepath.ToSlash(r.e.Root))
	if !json.Valid([]byte(s)) {
		r.t.Fatalf("not JSON: %s", s)
	}
	return json.RawMessage(s)
}

// splitStep splits a step into words: bare words, Go-quoted strings, and
// /regexps/ (alone or after key=), which may hold spaces.
func splitStep(line string) ([]string, error) {
	var out []string
	for i := 0; i < len(line); {
		switch c := line[i]; {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '"':
			q, err := strconv.QuotedPrefix(line[i:])
			if err != nil {
				return nil, fmt.Errorf("at %q: %v", line[i:], err)
			}
			s, _ := strconv.Unquote(q)
			out = append(out, s)
			i += len(q)
			continue
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			switch {
			case line[j] == '/' && (j == i || line[j-1] == '='):
				// A regexp: up to the next unescaped slash.
				k := j + 1
				for k < len(line) && line[k] != '/' {
					if line[k] == '\\' {
						k++
					}
					k++
				}
				if k >= len(line) {
					return nil, fmt.Errorf("unterminated regexp at %q", line[j:])
				}
				j = k + 1
				continue
			case line[j] == '"' && j > i && line[j-1] == '=':
				q, err := strconv.QuotedPrefix(line[j:])
				if err != nil {
					return nil, fmt.Errorf("at %q: %v", line[j:], err)
				}
				s, _ := strconv.Unquote(q)
				out = append(out, line[i:j]+s)
				i = j + len(q)
				j = -1
			case line[j] == '{' && j == i:
				// JSON: to the end of the line.
				j = len(line)
				continue
			}
			if j < 0 {
				break
			}
			j++
		}
		if j >= 0 {
			out = append(out, line[i:j])
			i = j
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("an empty step")
	}
	return out, nil
}

// regexArg reads a /regexp/ argument (the slashes are required); ^ and
// $ match at line breaks.
func regexArg(t *testing.T, s string) string {
	t.Helper()
	if len(s) < 2 || s[0] != '/' || s[len(s)-1] != '/' {
		t.Fatalf("want a /regexp/, got %q", s)
	}
	return "(?m)" + strings.ReplaceAll(s[1:len(s)-1], `\/`, "/")
}
