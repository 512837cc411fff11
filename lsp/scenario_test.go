package lsp_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
// scenario_doc_test.go describes a scenario's sections, config, steps,
// expectations and goldens.
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
func reikaBinary(t testing.TB) string {
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
