package lsp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// -update rewrites the golden sections of lsp/testdata/scenarios/*.txtar.
// The package's own tests declare the flag too: the first one wins.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestScenarios runs every lsp/testdata/scenarios/*.txtar against the real
// server over a real transport, with a fake editor and a scripted engine.
//
// A scenario holds:
//
//	-- config --      caps (full or bare, then +name/-name), encodings,
//	                  ctx (the engine's window), env K=V, transport
//	                  (pipe, binary, or both), apply-timeout
//	-- engine.json -- the engine's scripted turns (sim.Turn, JSON array)
//	-- ws/PATH --     the workspace's files
//	-- steps --       one step a line (see runner.step)
//	-- want/... --    golden sections, rewritten by -update:
//	                  want/transcript (what the user saw, with the steps),
//	                  want/results (what commands returned),
//	                  want/engine (every chat request: what was new in it),
//	                  want/docs/PATH (the workspace files as the editor has
//	                  them at the end).
//
// Places are named by regular expressions over the document's text, never
// by line numbers; temp paths, the engine's address and the ctx chip are
// normalized.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios found")
	}
	var (
		mu      sync.Mutex
		figures []string
	)
	t.Cleanup(func() {
		if len(figures) > 0 {
			sort.Strings(figures)
			t.Logf("measured:\n  %s", strings.Join(figures, "\n  "))
		}
	})
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sc := parseScenario(t, ar)
			var got []txtar.File
			for i, transport := range sc.transports {
				out := runScenario(t, sc, transport, func(f string) {
					mu.Lock()
					figures = append(figures, name+" ("+transport+"): "+f)
					mu.Unlock()
				})
				if i == 0 {
					got = out
				} else if d := cmp.Diff(sectionMap(got), sectionMap(out)); d != "" {
					t.Errorf("over %s the scenario differs from over %s (-%s +%s):\n%s", transport, sc.transports[0], sc.transports[0], transport, d)
				}
			}
			if updating() {
				var keep []txtar.File
				for _, f := range ar.Files {
					if !strings.HasPrefix(f.Name, "want/") {
						keep = append(keep, f)
					}
				}
				ar.Files = append(keep, got...)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := map[string]string{}
			for _, f := range ar.Files {
				if strings.HasPrefix(f.Name, "want/") {
					want[f.Name] = string(f.Data)
				}
			}
			gotMap := sectionMap(got)
			for _, f := range got {
				w, ok := want[f.Name]
				if !ok {
					t.Errorf("%s: no golden section %s; run go test ./lsp -run TestScenarios -update", file, f.Name)
					continue
				}
				if d := cmp.Diff(w, string(f.Data)); d != "" {
					t.Errorf("%s: %s differs (-want +got):\n%s", file, f.Name, d)
				}
			}
			for n := range want {
				if _, ok := gotMap[n]; !ok {
					t.Errorf("%s: golden section %s was not produced", file, n)
				}
			}
		})
	}
}

func sectionMap(fs []txtar.File) map[string]string {
	m := map[string]string{}
	for _, f := range fs {
		m[f.Name] = string(f.Data)
	}
	return m
}

// scenario is a parsed txtar scenario.
type scenario struct {
	caps          lsptest.Caps
	ctx           int
	env           map[string]string
	transports    []string
	applyTimeout  time.Duration
	clientTimeout time.Duration
	script        []sim.Turn
	files         map[string]string
	steps         []string
}

func parseScenario(t *testing.T, ar *txtar.Archive) scenario {
	t.Helper()
	sc := scenario{caps: lsptest.Full(), env: map[string]string{}, files: map[string]string{}, transports: []string{"pipe"}}
	for _, f := range ar.Files {
		switch {
		case f.Name == "config":
			for _, line := range strings.Split(string(f.Data), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				key, val, ok := strings.Cut(line, ":")
				if !ok {
					t.Fatalf("config: %q is not key: value", line)
				}
				val = strings.TrimSpace(val)
				switch strings.TrimSpace(key) {
				case "caps":
					sc.caps = parseCaps(t, val)
				case "encodings":
					sc.caps.PositionEncodings = strings.Fields(val)
				case "ctx":
					n, err := strconv.Atoi(val)
					if err != nil {
						t.Fatalf("config ctx: %v", err)
					}
					sc.ctx = n
				case "env":
					k, v, _ := strings.Cut(val, "=")
					sc.env[k] = v
				case "transport":
					sc.transports = strings.Fields(val)
				case "client-timeout":
					d, err := time.ParseDuration(val)
					if err != nil {
						t.Fatalf("config client-timeout: %v", err)
					}
					sc.clientTimeout = d
				case "apply-timeout":
					d, err := time.ParseDuration(val)
					if err != nil {
						t.Fatalf("config apply-timeout: %v", err)
					}
					sc.applyTimeout = d
				default:
					t.Fatalf("config: unknown key %q", key)
				}
			}
		case f.Name == "engine.json":
			turns, err := sim.ParseScript(f.Data)
			if err != nil {
				t.Fatalf("engine.json: %v", err)
			}
			sc.script = turns
		case strings.HasPrefix(f.Name, "ws/"):
			sc.files[strings.TrimPrefix(f.Name, "ws/")] = string(f.Data)
		case f.Name == "steps":
			for _, line := range strings.Split(string(f.Data), "\n") {
				if s := strings.TrimSpace(line); s != "" && !strings.HasPrefix(s, "#") {
					sc.steps = append(sc.steps, s)
				}
			}
		case strings.HasPrefix(f.Name, "want/"):
		default:
			t.Fatalf("unknown section %q", f.Name)
		}
	}
	return sc
}

// parseCaps reads "full" or "bare" followed by +name and -name.
func parseCaps(t *testing.T, val string) lsptest.Caps {
	t.Helper()
	words := strings.Fields(val)
	var c lsptest.Caps
	switch {
	case len(words) > 0 && words[0] == "full":
		c = lsptest.Full()
	case len(words) > 0 && words[0] == "bare":
		c = lsptest.Bare()
	default:
		t.Fatalf("caps: start with full or bare, not %q", val)
	}
	for _, w := range words[1:] {
		on := strings.HasPrefix(w, "+")
		if !on && !strings.HasPrefix(w, "-") {
			t.Fatalf("caps: %q: want +name or -name", w)
		}
		switch w[1:] {
		case "progress":
			c.Progress = on
		case "applyEdit":
			c.ApplyEdit = on
		case "documentChanges":
			c.DocumentChanges = on
		case "annotations":
			c.Annotations = on
		case "create":
			if on {
				c.ResourceOperations = []string{"create"}
			} else {
				c.ResourceOperations = nil
			}
		case "literal":
			c.CodeActionLiteral = on
		case "showDocument":
			c.ShowDocument = on
		case "messageActions":
			c.MessageActions = on
		case "stringIDs":
			c.StringIDs = on
		case "escapeSlashes":
			c.EscapeSlashes = on
		case "junkValueSet":
			c.JunkValueSet = on
		case "neovim":
			c.Neovim = on
			if on {
				c.Name = "Neovim"
			}
		case "eglot19":
			// Emacs 28's eglot: no clientInfo, no progress, refuses a
			// stale edit with an error.
			c.Eglot, c.Name, c.Progress = "1.9", "", false
		case "eglot117":
			// Emacs 30's eglot: applies a stale edit over unsent typing.
			c.Eglot, c.Name, c.Version, c.Progress = "1.17", "Eglot", "1.17.30", false
		default:
			t.Fatalf("caps: unknown capability %q", w[1:])
		}
	}
	return c
}

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// reikaBinary builds cmd/reika-lsp once for the scenarios that run it
// over stdio.
func reikaBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "reika-lsp-bin")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "reika-lsp")
		out, err := exec.Command("go", "build", "-o", binaryPath, "../cmd/reika-lsp").CombinedOutput()
		if err != nil {
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatal(binaryErr)
	}
	return binaryPath
}

// runner runs one scenario's steps.
type runner struct {
	t         *testing.T
	e         *lsptest.Editor
	actions   []lsptest.CodeAction
	async     []asyncCall
	lastAsync *lsptest.Pending
	results   []string
	cancelAt  time.Time
	generated map[string]bool
	figure    func(string)
	claimed   map[int]bool    // cancelled engine requests already expected
	lastRes   string          // the last exec's result, normalized
	lastRaw   json.RawMessage // and as it came
	// asks are the user's answers to the next showMessageRequests.
	askMu sync.Mutex
	asks  []string
	// since is where waits look from: the mark at the start of the last
	// step that was not a wait or an expectation.
	since int
}

// asyncCall is a request whose answer is collected at the end, into
// its place among the results.
type asyncCall struct {
	label string
	p     *lsptest.Pending
	slot  int
	done  *bool
}

// answer waits for an async request's answer and puts it in its place.
func (r *runner) answer(a asyncCall) {
	if *a.done {
		return
	}
	*a.done = true
	res, err := a.p.Wait(nil)
	r.results[a.slot] = a.label + " → " + r.result(res, err)
}

func runScenario(t *testing.T, sc scenario, transport string, figure func(string)) []txtar.File {
	t.Helper()
	cfg := lsptest.Config{
		Caps:          sc.caps,
		Files:         sc.files,
		Engine:        sim.Config{Ctx: sc.ctx, Script: sc.script},
		Env:           sc.env,
		ApplyTimeout:  sc.applyTimeout,
		ClientTimeout: sc.clientTimeout,
	}
	switch transport {
	case "pipe":
	case "binary":
		cfg.Binary = reikaBinary(t)
	default:
		t.Fatalf("unknown transport %q", transport)
	}
	e := lsptest.Start(t, cfg)
	r := &runner{t: t, e: e, generated: map[string]bool{}, figure: figure, claimed: map[int]bool{}}
	e.OnShowMessageRequest(func(message string, actions []string) string {
		r.askMu.Lock()
		defer r.askMu.Unlock()
		if len(r.asks) == 0 {
			return "" // dismissed
		}
		pick := r.asks[0]
		r.asks = r.asks[1:]
		return pick
	})
	for _, s := range sc.steps {
		v := stepVerbs[strings.Fields(s)[0]]
		if !v.observes {
			r.since = e.Mark()
			e.Note("> %s", s)
		}
		r.step(s)
		if v.notifies {
			e.Sync()
		}
	}
	for _, a := range r.async {
		r.answer(a)
	}
	if os.Getenv("LSPTEST_SERVERLOG") != "" {
		t.Cleanup(func() { t.Logf("server log:\n%s", e.ServerLog()) })
	}
	return r.goldens(sc)
}

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

// step runs one step:
//
//	open PATH | close PATH | save PATH
//	edit PATH "old" "new"          the user replaces the first "old"
//	type PATH "old" "new"          the same, sent with the editor's next didChange
//	stale-change PATH "old" "new"  a didChange that does not raise the version
//	gen PATH N "format %d"         write an N-line file to disk (not in want/docs)
//	codeaction PATH line=/re/|at=/re/ [diag="message"]
//	pick "title"                   apply the code action's edit, run its command
//	exec CMD [JSON]                workspace/executeCommand, waiting for the answer
//	exec-async CMD [JSON]          the same, answer collected at the end
//	call METHOD JSON | notify METHOD JSON
//	on-apply accept | refuse "why" | ignore | undo | revert
//	         | user-edit PATH "old" "new"
//	         | user-types PATH "old" "new"  (sent with the editor's next
//	                               didChange, as Neovim's debounce does)
//	on-ask "title"                 the user's answer to the next
//	                               showMessageRequest (none queued: dismissed)
//	codeaction-churn PATH line=/re/   as VS Code: a request cancelled at
//	                               once, then the same asked again
//	cancel command|progress|request   reika.cancel, workDoneProgress/cancel,
//	                               $/cancelRequest of the last async request
//	wait run-end | wait line /re/ | wait progress KIND | wait streaming N
//	wait answer                    the last async request's answer
//	                               (lines and results are matched normalized,
//	                               as the goldens show them)
//	expect cancelled               the engine saw its stream closed (timed)
//	expect line /re/ | expect no-line /re/ | expect result /re/
//	expect less KEY1 KEY2          in the last result, KEY1 < KEY2
//	expect encoding ENC            the position encoding the server chose
//	expect status /re/             the last reika/status notification
//	expect request N|last /re/     what was new in engine request N
//	expect file PATH /re/ | expect transcript-file /re/
//	shutdown                       shutdown and exit; Serve must return
//	raw "BYTES"                    write BYTES (Go-quoted) to the server as they are
//	raw-body TEXT                  write the rest of the line as one message's
//	                               body, framed with its Content-Length
//	                               (answers to both show as "answer id …" lines)
//
// JSON may name $URI(path) and $WS; PATH may be @shown, the last file the
// server opened with showDocument. Each verb is one entry of stepVerbs.
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

func (r *runner) stepOpen(_ string, args []string)  { r.e.Open(r.path(args[1])) }
func (r *runner) stepClose(_ string, args []string) { r.e.Close(r.path(args[1])) }
func (r *runner) stepSave(_ string, args []string)  { r.e.Save(r.path(args[1])) }

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

// expectations are what expect checks, by its first word.
var expectations = map[string]verb{
	"cancelled":       {arity: 1, run: (*runner).expectCancelled},
	"line":            {arity: 2, run: (*runner).expectLine},
	"no-line":         {arity: 2, run: (*runner).expectLine},
	"result":          {arity: 2, run: (*runner).expectResult},
	"status":          {arity: 2, run: (*runner).expectStatus},
	"encoding":        {arity: 2, run: (*runner).expectEncoding},
	"less":            {arity: 3, run: (*runner).expectLess},
	"request":         {arity: 3, run: (*runner).expectRequest},
	"file":            {arity: 3, run: (*runner).expectFile},
	"transcript-file": {arity: 2, run: (*runner).expectTranscriptFile},
}

// expect checks one property now (waiting, bounded, where it says so);
// args are the step's words after expect.
func (r *runner) expect(line string, args []string) {
	t := r.t
	t.Helper()
	x, ok := expectations[args[0]]
	if !ok {
		t.Fatalf("step %q: unknown expectation", line)
	}
	if len(args) < x.arity {
		t.Fatalf("step %q: want more arguments", line)
	}
	x.run(r, line, args)
}

func (r *runner) expectCancelled(line string, _ []string) {
	t, e := r.t, r.e
	t.Helper()
	if r.cancelAt.IsZero() {
		t.Fatalf("step %q: no cancel step before it", line)
	}
	rec, at := e.Engine.WaitRecord("a chat request closed by a cancel", func(rec sim.RequestRecord) bool {
		return rec.Cancelled && !r.claimed[rec.Seq]
	})
	r.claimed[rec.Seq] = true
	d := at.Sub(r.cancelAt)
	r.figure(fmt.Sprintf("cancel → engine stream #%d closed in %v", rec.Seq, d.Round(10*time.Microsecond)))
	t.Logf("cancel → engine stream #%d closed in %v (sent %d of %d tokens)", rec.Seq, d, rec.SentTokens, rec.CompletionTokens)
	const bound = 2 * time.Second
	if d > bound {
		t.Errorf("the engine's stream closed %v after the cancel, want under %v", d, bound)
	}
	if rec.SentTokens >= rec.CompletionTokens {
		t.Errorf("request #%d sent all %d tokens: it was not cancelled mid-stream", rec.Seq, rec.CompletionTokens)
	}
	r.results = append(r.results, fmt.Sprintf("%s → engine request #%d closed mid-stream", line, rec.Seq))
}

// expectLine is expect line and expect no-line.
func (r *runner) expectLine(line string, args []string) {
	t, e := r.t, r.e
	t.Helper()
	rx := regexp.MustCompile(regexArg(t, args[1]))
	found := false
	for _, l := range e.Transcript() {
		if rx.MatchString(r.normalize(l)) && !strings.HasPrefix(l, "> ") {
			found = true
		}
	}
	if found != (args[0] == "line") {
		t.Errorf("step %q failed; received:\n%s", line, e.Dump())
	}
}

func (r *runner) expectResult(line string, args []string) {
	t := r.t
	t.Helper()
	if !regexp.MustCompile(regexArg(t, args[1])).MatchString(r.lastRes) {
		t.Errorf("step %q: the last result is %s", line, r.lastRes)
	}
}

func (r *runner) expectStatus(line string, args []string) {
	t := r.t
	t.Helper()
	var last string
	for _, ev := range r.e.Events() {
		if ev.Method == "reika/status" {
			last = string(ev.Params)
		}
	}
	if !regexp.MustCompile(regexArg(t, args[1])).MatchString(r.normalize(last)) {
		t.Errorf("step %q: the last reika/status is %s", line, last)
	}
}

func (r *runner) expectEncoding(line string, args []string) {
	r.t.Helper()
	if r.e.Encoding != args[1] {
		r.t.Errorf("step %q: the server chose %s", line, r.e.Encoding)
	}
	r.results = append(r.results, line+" → "+r.e.Encoding)
}

func (r *runner) expectLess(line string, args []string) {
	r.t.Helper()
	var v map[string]any
	json.Unmarshal(r.lastRaw, &v)
	a, okA := v[args[1]].(float64)
	b, okB := v[args[2]].(float64)
	if !okA || !okB || a >= b {
		r.t.Errorf("step %q: the last result is %s", line, r.lastRaw)
	}
}

func (r *runner) expectRequest(line string, args []string) {
	t := r.t
	t.Helper()
	reqs := renderRequests(r.e.Engine.Requests())
	n := len(reqs)
	if args[1] != "last" {
		var err error
		if n, err = strconv.Atoi(args[1]); err != nil {
			t.Fatalf("step %q: %v", line, err)
		}
	}
	if n < 1 || n > len(reqs) {
		t.Fatalf("step %q: the engine has %d requests", line, len(reqs))
	}
	text := r.normalize(strings.Join(reqs[n-1].messages, "\n"))
	if !regexp.MustCompile(regexArg(t, args[2])).MatchString(text) {
		t.Errorf("step %q: request %d carried:\n%s", line, n, text)
	}
}

func (r *runner) expectFile(line string, args []string) {
	t := r.t
	t.Helper()
	text, ok := r.e.Current(r.path(args[1]))
	if !ok || !regexp.MustCompile(regexArg(t, args[2])).MatchString(text) {
		t.Errorf("step %q: %s is:\n%s", line, args[1], text)
	}
}

func (r *runner) expectTranscriptFile(line string, args []string) {
	t := r.t
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(r.e.StateDir, "*.jsonl"))
	var all strings.Builder
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		all.Write(data)
	}
	if !regexp.MustCompile(regexArg(t, args[1])).MatchString(all.String()) {
		t.Errorf("step %q: the transcripts %v hold:\n%.2000s", line, paths, all.String())
	}
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

// result is a command's answer as the golden shows it: normalized, with
// numbers (sizes and budgets, which move with any prompt change) as N.
func (r *runner) result(res json.RawMessage, err error) string {
	if err != nil {
		return "error: " + r.normalize(err.Error())
	}
	var v any
	if err := json.Unmarshal(res, &v); err != nil {
		return r.normalize(string(res))
	}
	var titled []struct {
		Title string `json:"title"`
	}
	if json.Unmarshal(res, &titled) == nil && len(titled) > 0 && titled[0].Title != "" {
		var ts []string
		for _, x := range titled {
			ts = append(ts, x.Title)
		}
		return fmt.Sprintf("%d actions: %s", len(ts), strings.Join(ts, " | "))
	}
	out, _ := json.Marshal(numbersOut(v))
	return r.normalize(string(out))
}

func numbersOut(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, y := range x {
			x[k] = numbersOut(y)
		}
	case []any:
		for i, y := range x {
			x[i] = numbersOut(y)
		}
	case float64:
		return "N"
	}
	return v
}

var (
	chipRx    = regexp.MustCompile(`ctx [0-9.]+[kM]?(/[0-9.]+[kM]? \(\d+% of [0-9.]+[kM]?\))?`)
	tokensRx  = regexp.MustCompile(`\d+ → \d+ tokens`)
	bytesRx   = regexp.MustCompile(`\b\d+(-byte| bytes)\b`)
	stampRx   = regexp.MustCompile(`\d{8}-\d{6}(-[0-9a-z]+)?`)
	figuresRx = regexp.MustCompile(`shed at \d+, down to \d+; reserve \d+`)
	// breakdownRx is reika.status's window by part, whose figures move
	// with the prompt's wording.
	breakdownRx = regexp.MustCompile(`prefix \S+ · map \S+ · recap \S+ · history \S+ · tools \S+( · reserve \S+ · free \S+)?`)
	// sandboxRx is the sandbox's line, which says what this machine's
	// kernel enforces.
	sandboxRx = regexp.MustCompile(`landlock ABI \d+: [^"\n]*|no sandbox[^"\n]*`)
)

// normalize takes out what changes from run to run: temp paths, the
// engine's address, the chip's figures, sizes, times of day.
func (r *runner) normalize(s string) string {
	e := r.e
	s = strings.ReplaceAll(s, e.StateDir, "$STATE")
	s = strings.ReplaceAll(s, e.Root, "$WS")
	s = strings.ReplaceAll(s, filepath.Dir(e.Root), "$TMP")
	s = strings.ReplaceAll(s, e.Engine.URL, "$ENGINE")
	s = chipRx.ReplaceAllString(s, "ctx <chip>")
	s = tokensRx.ReplaceAllString(s, "N → N tokens")
	s = bytesRx.ReplaceAllString(s, "N$1")
	s = stampRx.ReplaceAllString(s, "<time>")
	s = figuresRx.ReplaceAllString(s, "shed at N, down to N; reserve N")
	s = breakdownRx.ReplaceAllString(s, "<breakdown>")
	s = sandboxRx.ReplaceAllString(s, "<sandbox>")
	return s
}

// activityRx is a progress line that tells what a long wait waits for:
// it comes at times, not at steps, so the transcript leaves it out.
var activityRx = regexp.MustCompile(`^progress report: (engine reading about|engine writing, about|running .* \(\d+ s\)$)`)

// timed reports whether a transcript line is an activity line.
func timed(line string) bool {
	return activityRx.MatchString(line)
}

// goldens renders the scenario's outcome.
func (r *runner) goldens(sc scenario) []txtar.File {
	e := r.e
	var out []txtar.File
	var tr strings.Builder
	closing := false
	for _, ev := range e.Events() {
		switch {
		case ev.Line == "", timed(ev.Line):
		case ev.Method == "" && ev.Line == "> shutdown":
			// What the server sends once the editor is closing races
			// with the connection's end: it is not part of the golden.
			closing = true
			tr.WriteString(ev.Line + "\n")
		case closing && ev.Method != "":
		default:
			tr.WriteString(r.normalize(ev.Line) + "\n")
		}
	}
	out = append(out, txtar.File{Name: "want/transcript", Data: []byte(tr.String())})
	out = append(out, txtar.File{Name: "want/results", Data: []byte(lines(r.results))})

	var eng strings.Builder
	for _, q := range renderRequests(e.Engine.Requests()) {
		eng.WriteString(r.normalize(q.header) + "\n")
		for _, m := range q.messages {
			eng.WriteString("  " + clip(r.normalize(m), 220) + "\n")
		}
	}
	out = append(out, txtar.File{Name: "want/engine", Data: []byte(eng.String())})

	names := map[string]bool{}
	for n := range sc.files {
		names[n] = true
	}
	for _, n := range e.Files() {
		names[n] = true
	}
	for _, d := range e.Docs() {
		if rel := e.Rel(d.Path); !filepath.IsAbs(rel) {
			names[rel] = true
		}
	}
	var sorted []string
	for n := range names {
		if !r.generated[n] {
			sorted = append(sorted, n)
		}
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		text, ok := e.Current(n)
		switch {
		case !ok:
			text = "(no such file)\n"
		case text != "" && !strings.HasSuffix(text, "\n"):
			text += "\n\\ No newline at end of file\n"
		}
		out = append(out, txtar.File{Name: "want/docs/" + n, Data: []byte(text)})
	}
	return out
}

func lines(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// clip writes s on one line of at most n characters.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return string(rs[:n]) + fmt.Sprintf("…(+%d)", len(rs)-n)
}

// request is one chat request as the golden shows it: a header, and the
// messages that were new since the request before (all but the system
// prompt for the first, and after a rewrite such as a fold).
type request struct {
	header   string
	messages []string
}

func renderRequests(recs []sim.RequestRecord) []request {
	var out []request
	var prev []json.RawMessage
	names := map[string]string{} // tool call id → tool name
	for _, rec := range recs {
		var body struct {
			Messages   []json.RawMessage `json:"messages"`
			ToolChoice json.RawMessage   `json:"tool_choice"`
		}
		json.Unmarshal(rec.Body, &body)
		h := fmt.Sprintf("#%d %s", rec.Seq, rec.Source)
		if rec.ToolChoice != "" && rec.ToolChoice != "auto" {
			h += " tool_choice=" + rec.ToolChoice
		}
		if len(rec.ToolCalls) > 0 {
			h += fmt.Sprintf(" → %s", strings.Join(rec.ToolCalls, ", "))
		}
		if rec.Error != "" {
			h += fmt.Sprintf(" error %d: %s", rec.Status, rec.Error)
		}
		if rec.Cancelled {
			h += " (cancelled)"
		}
		same := 0
		for same < len(prev) && same < len(body.Messages) && bytes.Equal(prev[same], body.Messages[same]) {
			same++
		}
		start := same
		if same < len(prev) {
			h += fmt.Sprintf(" [rewritten from message %d]", same+1)
		}
		if len(prev) == 0 || same < len(prev) {
			start = max(start, 1) // the system prompt is not shown
		}
		q := request{header: h}
		for _, raw := range body.Messages {
			var m struct {
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				} `json:"tool_calls"`
			}
			json.Unmarshal(raw, &m)
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Function.Name
			}
		}
		for _, raw := range body.Messages[min(start, len(body.Messages)):] {
			q.messages = append(q.messages, renderMessage(raw, names))
		}
		out = append(out, q)
		prev = body.Messages
	}
	return out
}

func renderMessage(raw json.RawMessage, names map[string]string) string {
	var m struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	json.Unmarshal(raw, &m)
	var content string
	if err := json.Unmarshal(m.Content, &content); err != nil {
		var parts []struct {
			Text string `json:"text"`
		}
		json.Unmarshal(m.Content, &parts)
		for _, p := range parts {
			content += p.Text
		}
	}
	role := m.Role
	if m.ToolCallID != "" {
		role = "tool " + names[m.ToolCallID]
	}
	s := role + ": " + content
	for _, c := range m.ToolCalls {
		s += fmt.Sprintf(" → %s %s", c.Function.Name, c.Function.Arguments)
	}
	return s
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
