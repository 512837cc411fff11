package editors

import (
	"archive/zip"
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// The VS Code extension (editors/vscode) in the real VS Code: code-server
// serves VS Code 1.139 to headless Chromium, which starts the extension
// host; a driver extension (testdata/vscode-driver) plays the scenarios
// through the extension's commands and writes what it saw to a file.
// .ci/install-vscode installs code-server, Chromium and the extension's
// node_modules.

var (
	compileOnce sync.Once
	compileErr  error
)

// vscodeExtension returns editors/vscode's absolute path after compiling
// it (once), or skips — fails under REIKA_EDITORS=require — when its
// node_modules are not installed.
func vscodeExtension(t *testing.T) string {
	t.Helper()
	npm := need(t, "npm")
	dir, err := filepath.Abs("vscode")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "tsc")); err != nil {
		msg := "editors/vscode/node_modules is not installed (.ci/install-vscode runs npm ci)"
		if os.Getenv("REIKA_EDITORS") == "require" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	compileOnce.Do(func() {
		cmd := exec.Command(npm, "run", "compile")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			compileErr = fmt.Errorf("npm run compile: %v\n%s", err, out)
		}
	})
	if compileErr != nil {
		t.Fatal(compileErr)
	}
	return dir
}

// TestVSCodePackage packages the extension as the README tells users to
// (npm run package): a .vsix holding the compiled extension and its
// runtime dependencies only; then installs it with the README's command,
// VS Code's code being code-server here.
func TestVSCodePackage(t *testing.T) {
	longBoot(t, "TestVSCode")
	dir := vscodeExtension(t)
	npm := need(t, "npm")
	tmp := t.TempDir()
	vsix := filepath.Join(tmp, "reika-0.1.0.vsix")
	ctx, cancel := context.WithTimeout(context.Background(), testslow.Scale(90*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "run", "package", "--", "--out", vsix)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm run package: %v\n%s", err, out)
	}
	z, err := zip.OpenReader(vsix)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	files := map[string]bool{}
	for _, f := range z.File {
		files[f.Name] = true
	}
	for _, want := range []string{
		"extension/package.json", "extension/readme.md", "extension/out/extension.js", "extension/out/names.js",
		"extension/node_modules/vscode-languageclient/package.json",
	} {
		if !files[want] {
			t.Errorf("%s has no %s", filepath.Base(vsix), want)
		}
	}
	for name := range files {
		if strings.HasPrefix(name, "extension/src/") || strings.Contains(name, "node_modules/typescript/") {
			t.Errorf("%s holds %s, which users do not need", filepath.Base(vsix), name)
		}
	}

	t.Run("install", func(t *testing.T) {
		codeServer := need(t, "reika-code-server")
		bin, exts := filepath.Join(tmp, "bin"), filepath.Join(tmp, "extensions")
		os.MkdirAll(bin, 0o755)
		code := "#!/bin/sh\nexec " + codeServer + " --extensions-dir " + exts + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(bin, "code"), []byte(code), 0o755); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testslow.Scale(60*time.Second))
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", "-euc", snippet(t, "vscode-install"))
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"HOME="+tmp, "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"), "XDG_DATA_HOME="+filepath.Join(tmp, "data"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the README's install command: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(exts, "reika-lsp.reika-0.1.0", "out", "extension.js")); err != nil {
			t.Errorf("the README's install command did not install the extension: %v", err)
		}
	})
}

// The scenarios' workspace and the engine's script, in the order the
// driver asks.
var vscodeFiles = map[string]string{
	"greet.go":  "package greet\n\n// Greet says hello.\nfunc Greet(name string) string {\n\treturn \"hello, \" + name\n}\n",
	"answer.go": "package greet\n\n// Answer returns the answer.\nfunc Answer() int {\n\treturn 41\n}\n",
	"main.go":   "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
}

const vscodeScript = `[
  {"tool_calls": [{"name": "edit", "arguments": {"path": "greet.go", "old_text": "return \"hello, \" + name", "new_text": "return \"Hello, \" + name"}}]},
  {"content": "Greet now capitalizes the greeting.\n\nIt returns \"Hello, \" + name where it returned \"hello, \" + name, so every caller sees the capital H; nothing else changed."},
  {"tool_calls": [{"name": "edit", "arguments": {"path": "answer.go", "old_text": "return 41", "new_text": "return 42"}}]},
  {"content": "Answer now returns 42."},
  {"content": "Let me think about this slowly, word by word, so that the stream takes a while: the function prints a greeting, and the greeting is a constant, and nothing here looks wrong so far, but I will keep looking at every line until I am sure of it.", "fault": {"chunk_latency": "100ms"}},
  {"content": "task: explain main.go\nstate: nothing changed"},
  {"content": "Nothing else."}
]`

// driverRecord is one line of the driver's output.
type driverRecord struct {
	Scenario string `json:"scenario"`
	Error    string `json:"error"`
	Done     bool   `json:"done"`
	Ask      struct {
		Result   json.RawMessage `json:"result"`
		Messages []string        `json:"messages"`
	} `json:"ask"`
	Edits []struct {
		Labelled         bool     `json:"labelled"`
		Annotated        bool     `json:"annotated"`
		Versioned        bool     `json:"versioned"`
		Typed            bool     `json:"typed"`
		WaitedForPreview bool     `json:"waitedForPreview"`
		PreviewShown     bool     `json:"previewShown"`
		Log              []string `json:"log"`
		Result           struct {
			Applied bool `json:"applied"`
		} `json:"result"`
	} `json:"edits"`
	Text     string     `json:"text"`
	Lenses   []string   `json:"lenses"`
	Reviewed []reviewed `json:"reviewed"`
	Review   []reviewed `json:"review"`
	Kept     struct {
		Clicked bool       `json:"clicked"`
		Review  []reviewed `json:"review"`
		Text    string     `json:"text"`
		Lenses  []string   `json:"lenses"`
		GoneMS  int        `json:"goneMs"` // from the click to no Keep shown
	} `json:"kept"`
	Undone       int             `json:"undone"`
	AfterUndo    string          `json:"afterUndo"`
	Conversation conversation    `json:"conversation"`
	ServerPath   string          `json:"serverPath"`
	Focused      string          `json:"focused"`
	Asked        bool            `json:"asked"`
	Started      json.RawMessage `json:"started"`
	CancelLine   string          `json:"cancelLine"`
	CompactLine  string          `json:"compactLine"`
	StatusLine   string          `json:"statusLine"`
	Messages     []string        `json:"messages"`
	StatusBar    []struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	} `json:"statusBar"`
	// The race's and the undo's (vscode_trials_test.go).
	Trials []vscodeTrial `json:"trials"`
	Trial  vscodeTrial   `json:"trial"`
	Undo   struct {
		After  int    `json:"after"`  // ms after the edit landed
		Active string `json:"active"` // the active editor's document
		// Refocused is how long after the ask the focus was back in the
		// editor, in ms.
		Refocused int `json:"refocused"`
	} `json:"undo"`
	// The focus's (vscode_focus_test.go).
	Ready struct {
		Focused     string `json:"focused"`     // the focused element once the panel's page was ready
		Active      string `json:"active"`      // the active editor's document then
		PanelActive bool   `json:"panelActive"` // whether the panel was the active tab then
	} `json:"ready"`
	Typing []struct {
		Focused string `json:"focused"`
		Text    string `json:"text"`
	} `json:"typing"` // after each typed line
	Asks  []string `json:"asks"`
	Final string   `json:"final"`
	Told  string   `json:"told"` // the late undo's correction (vscode_focus_test.go)
	// Result is a scenario's whole record, read by its test
	// (vscode_review_test.go).
	Result json.RawMessage `json:"result"`
	Chip   struct {
		Text    string `json:"text"`
		Warning bool   `json:"warning"`
		Error   bool   `json:"error"`
		Tooltip string `json:"tooltip"`
		Last    *struct {
			Text    string `json:"text"`
			Percent int    `json:"percent"`
			Warn    bool   `json:"warn"`
			Window  int    `json:"window"`
		} `json:"last"`
	} `json:"chip"`
}

// reviewed is one change under review, as the extension's API lists it.
type reviewed struct {
	URI     string `json:"uri"`
	NewText string `json:"newText"`
	OldText string `json:"oldText"`
}

// conversation is the Reika panel's state, as the extension's API gives it.
type conversation struct {
	Visible bool `json:"visible"`
	Turns   []struct {
		Instruction string   `json:"instruction"`
		Progress    []string `json:"progress"`
		Answer      string   `json:"answer"`
		Summary     string   `json:"summary"`
		End         string   `json:"end"`
		Edits       []struct {
			URI  string `json:"uri"`
			Name string `json:"name"`
			Line int    `json:"line"`
		} `json:"edits"`
	} `json:"turns"`
}

// checkKept checks a run that changed greet.go: it is in the panel with
// its progress, its answer in full and the file as a link; the change was
// under review with a Keep · Undo CodeLens, and one click on Keep left it
// in place, out of the review.
func checkKept(t *testing.T, rec driverRecord, instruction, answer string) {
	t.Helper()
	want := strings.Replace(vscodeFiles["greet.go"], `"hello, "`, `"Hello, "`, 1)
	c := rec.Conversation
	if !c.Visible || len(c.Turns) == 0 {
		t.Fatalf("the Reika panel: %+v, want it open with the run", c)
	}
	turn := c.Turns[len(c.Turns)-1]
	if !strings.HasPrefix(turn.Instruction, instruction) || turn.Answer != answer || turn.End != "done" {
		t.Errorf("the panel's run: instruction %q, answer %q, end %q; want %q, the answer in full %q, done", turn.Instruction, turn.Answer, turn.End, instruction, answer)
	}
	if !slices.ContainsFunc(turn.Progress, func(l string) bool { return strings.HasPrefix(l, "round 1 ·") }) || !slices.Contains(turn.Progress, "edit greet.go") {
		t.Errorf("the panel's progress lines = %q, want the rounds and the edit", turn.Progress)
	}
	if len(turn.Edits) != 1 || turn.Edits[0].Name != "greet.go" || turn.Edits[0].Line != 4 {
		t.Errorf("the panel's edits = %+v, want greet.go at line 5 (0-based 4)", turn.Edits)
	}
	if len(rec.Reviewed) != 1 || !strings.HasSuffix(rec.Reviewed[0].URI, "/greet.go") || !strings.Contains(rec.Reviewed[0].NewText, "H") {
		t.Errorf("under review after the run: %+v, want the one change to greet.go", rec.Reviewed)
	}
	t.Logf("after the click on Keep the CodeLens went in %d ms", rec.Kept.GoneMS)
	if slices.ContainsFunc(rec.Kept.Lenses, func(l string) bool { return strings.Contains(l, "Keep") }) {
		t.Errorf("after a click on Keep the CodeLens still shows %q", rec.Kept.Lenses)
	} else if bound := testslow.Scale(2 * time.Second); time.Duration(rec.Kept.GoneMS)*time.Millisecond > bound {
		t.Errorf("after a click on Keep the CodeLens stayed %d ms, want it gone within %v", rec.Kept.GoneMS, bound)
	}
	if !rec.Kept.Clicked || len(rec.Kept.Review) != 0 || rec.Kept.Text != want {
		t.Errorf("after a click on Keep: clicked %v, under review %+v, greet.go:\n%s\nwant clicked, nothing under review, and:\n%s", rec.Kept.Clicked, rec.Kept.Review, rec.Kept.Text, want)
	}
}

func TestVSCode(t *testing.T) {
	r := newRig(t, vscodeScript, vscodeFiles)
	// The binary through reika.serverPath; the engine reaches the server
	// only through reika.endpoint (the environment's points nowhere); no
	// other reika setting is set, so that a default leaking through
	// (warmup: true) would cost a scripted turn.
	recs := runCodeServer(t, r, map[string]any{"reika.endpoint": r.Endpoint, "reika.serverPath": r.Bin}, r.Env())
	byName := map[string]driverRecord{}
	for _, rec := range recs {
		byName[rec.Scenario] = rec
	}

	t.Run("ask", func(t *testing.T) {
		rec := byName["ask"]
		if !strings.Contains(string(rec.Ask.Result), `"started":true`) {
			t.Fatalf("Reika: Ask through the input box = %s, want a started run", rec.Ask.Result)
		}
		want := strings.Replace(vscodeFiles["greet.go"], `"hello, "`, `"Hello, "`, 1)
		if rec.Text != want {
			t.Errorf("greet.go's buffer after the run:\n%s\nwant:\n%s", rec.Text, want)
		}
		if len(rec.Edits) != 1 {
			t.Fatalf("%d applyEdit requests, want 1", len(rec.Edits))
		}
		e := rec.Edits[0]
		if !e.Labelled || !e.Versioned {
			t.Errorf("the edit came labelled=%v versioned=%v, want both (the client advertises change annotations and versions)", e.Labelled, e.Versioned)
		}
		// An ordinary edit applies at once, labelled, with no refactor
		// preview (whose boxes start unticked); the user reviews it after.
		if e.Annotated || e.PreviewShown || slices.ContainsFunc(e.Log, func(l string) bool { return l != "no preview" }) || !e.Result.Applied {
			t.Errorf("the edit: needed confirmation=%v, in a preview=%v, applied=%v; want it applied with no preview (the preview: %q)", e.Annotated, e.PreviewShown, e.Result.Applied, e.Log)
		}
		if !slices.ContainsFunc(rec.Lenses, func(l string) bool { return strings.Contains(l, "Keep") }) || !slices.ContainsFunc(rec.Lenses, func(l string) bool { return strings.Contains(l, "Undo") }) {
			t.Errorf("the CodeLens shown: %q, want Keep and Undo above the change", rec.Lenses)
		}
		// The warning VS Code showed went with the ask, placed in bytes.
		if asked := r.requests(t, 1)[0]; !strings.Contains(asked, "greet.go:5:9: warning: the greeting is not capitalized (driverlint)") {
			t.Errorf("the engine's first request:\n%s\nwant the editor's warning in the ask", asked)
		}
		checkKept(t, rec, "Capitalize the greeting.", "Greet now capitalizes the greeting.\n\nIt returns \"Hello, \" + name where it returned \"hello, \" + name, so every caller sees the capital H; nothing else changed.")
		// The chip shows the last reika/status, in the status bar.
		shown := false
		for _, item := range rec.StatusBar {
			shown = shown || rec.Chip.Last != nil && item.Text == rec.Chip.Last.Text
		}
		if !shown {
			t.Errorf("the status bar shows %+v, none of them the chip %q", rec.StatusBar, rec.Chip.Text)
		}
		if rec.Chip.Last == nil || !strings.Contains(rec.Chip.Text, "ctx") || rec.Chip.Text != rec.Chip.Last.Text {
			t.Errorf("the status bar chip = %+v, want the text of the last reika/status (ctx …)", rec.Chip)
		} else if warn := rec.Chip.Last.Warn || rec.Chip.Last.Percent >= 80; rec.Chip.Warning != warn {
			t.Errorf("the chip's warning colour = %v at %d%% (warn %v), want %v", rec.Chip.Warning, rec.Chip.Last.Percent, rec.Chip.Last.Warn, warn)
		}
	})

	t.Run("typing", func(t *testing.T) {
		rec := byName["typing"]
		if len(rec.Edits) == 0 || !rec.Edits[0].Typed {
			t.Fatalf("the user's line was not typed before the edit arrived: %+v", rec.Edits)
		}
		if rec.Edits[0].Result.Applied {
			t.Errorf("VS Code applied an edit made for the buffer's previous version")
		}
		typed := "// typed by the user\n"
		without, with := typed+vscodeFiles["answer.go"], typed+strings.Replace(vscodeFiles["answer.go"], "return 41", "return 42", 1)
		last := ""
		if n := len(rec.Ask.Messages); n > 0 {
			last = rec.Ask.Messages[n-1]
		}
		switch rec.Text {
		case with:
			t.Logf("the edit was placed again on the user's text; the server said: %q", last)
			// Reika: Undo all puts the old text back, the user's line kept.
			if rec.Undone != 1 || rec.AfterUndo != without || len(rec.Review) != 0 {
				t.Errorf("Reika: Undo all undid %d, left %+v under review, and answer.go is:\n%s\nwant 1, nothing, and:\n%s", rec.Undone, rec.Review, rec.AfterUndo, without)
			}
		case without:
			if regexp.MustCompile(`(?i)\b\d+ changes? (was |were )?applied`).MatchString(last) {
				t.Errorf("the edit is not in the buffer, but the server said %q", last)
			}
			t.Logf("the edit was not applied; the server said: %q", last)
		default:
			t.Errorf("answer.go's buffer:\n%s\nwant the user's line and the edit in its place, or no edit", rec.Text)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		rec := byName["cancel"]
		if !strings.Contains(string(rec.Started), `"started":true`) {
			t.Fatalf("the run to cancel did not start: %s", rec.Started)
		}
		if rec.CancelLine != "Reika: the run was cancelled" {
			t.Errorf("Reika: Cancel said %q, want that the run was cancelled", rec.CancelLine)
		}
		if !regexp.MustCompile(`(?i)cancel`).MatchString(strings.Join(rec.Messages, "\n")) {
			t.Errorf("the run's messages %q do not say it was cancelled", rec.Messages)
		}
		if !regexp.MustCompile(`(?m)^sim: #5 .*fault\(chunk-latency=100ms\).* cancelled`).MatchString(r.Log.String()) {
			t.Errorf("the engine's log does not show the slow stream cut by the cancel:\n%s", r.Log)
		}
		if len(rec.Edits) != 0 || rec.Text != vscodeFiles["main.go"] {
			t.Errorf("a cancelled run changed main.go (%d edits):\n%s", len(rec.Edits), rec.Text)
		}
	})

	t.Run("compact and status", func(t *testing.T) {
		rec := byName["compact"]
		t.Logf("Reika: Compact said %q; Reika: Status said %q", rec.CompactLine, rec.StatusLine)
		if !regexp.MustCompile(`^Reika( folded the conversation: \d+ → \d+ tokens.*|: nothing folded: .+)$`).MatchString(rec.CompactLine) {
			t.Errorf("Reika: Compact said %q, want one line with the sizes or why nothing was folded", rec.CompactLine)
		}
		// The status names the endpoint from reika.endpoint: the settings
		// reached the server.
		if !strings.HasPrefix(rec.StatusLine, "Reika: ctx") || !strings.Contains(rec.StatusLine, r.Endpoint) || strings.Contains(rec.StatusLine, "\n") {
			t.Errorf("Reika: Status said %q, want one line with the chip and %s", rec.StatusLine, r.Endpoint)
		}
	})

	t.Run("only set settings sent", func(t *testing.T) {
		// reika.warmup's default (true) against REIKA_WARMUP=0: a warm-up
		// (a one-token request) means the extension sent a default.
		if regexp.MustCompile(`(?m)^sim: #\d+ .*gen=1 finish=length`).MatchString(r.Log.String()) {
			t.Errorf("the engine got a warm-up request: the extension sent settings the user did not set\n%s", r.Log)
		}
	})

	t.Run("settings change", func(t *testing.T) {
		rec := byName["settings"]
		if !strings.Contains(string(rec.Ask.Result), `"started":true`) {
			t.Fatalf("the ask after the change = %s, want a started run", rec.Ask.Result)
		}
		if rec.Chip.Last == nil || rec.Chip.Last.Window != 12288 {
			t.Errorf("after reika.contextWindow = 12288 the chip is %+v, want a window of 12288", rec.Chip.Last)
		}
	})
}

// runCodeServer starts code-server on r's workspace with the extension,
// the driver and these user settings, and headless Chromium on it; it
// returns the driver's records once it is done, failing on its error.
// $REIKA_SCREENSHOTS, when set, is where the driver saves screenshots.
func runCodeServer(t *testing.T, r *rig, reika map[string]any, env []string) []driverRecord {
	t.Helper()
	codeServer := need(t, "reika-code-server")
	chromium := need(t, "chromium", "chromium-browser")
	ext := vscodeExtension(t)
	driver, err := filepath.Abs(filepath.Join("testdata", "vscode-driver"))
	if err != nil {
		t.Fatal(err)
	}
	// The extensions as unpacked folders (publisher.name-version).
	exts := filepath.Join(r.Tmp, "extensions")
	userData := filepath.Join(r.Tmp, "code-server")
	for dst, src := range map[string]string{
		filepath.Join(exts, "reika-lsp.reika-0.1.0"):   ext,
		filepath.Join(exts, "reika-test.driver-0.0.1"): driver,
	} {
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.Symlink(src, dst); err != nil {
			t.Fatal(err)
		}
	}
	settings := map[string]any{
		"security.workspace.trust.enabled":                 false,
		"workbench.startupEditor":                          "none",
		"telemetry.telemetryLevel":                         "off",
		"extensions.autoCheckUpdates":                      false,
		"workbench.tips.enabled":                           false,
		"workbench.enableExperiments":                      false,
		"git.enabled":                                      false,
		"editor.formatOnSave":                              false,
		"files.autoSave":                                   "off",
		"workbench.editor.enablePreview":                   false,
		"update.mode":                                      "none",
		"workbench.welcomePage.walkthroughs.openOnInstall": false,
	}
	for k, v := range reika {
		settings[k] = v
	}
	writeJSON(t, filepath.Join(userData, "User", "settings.json"), settings)

	out := filepath.Join(r.Tmp, "driver.jsonl")
	env = append(env, "REIKA_DRIVER_OUT="+out, "REIKA_ENDPOINT=http://127.0.0.1:9/v1")
	if dir := os.Getenv("REIKA_SCREENSHOTS"); dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, "REIKA_SCREENSHOTS="+abs)
	}
	port, cdp := freePort(t), freePort(t)
	env = append(env, fmt.Sprintf("REIKA_CDP_PORT=%d", cdp))
	csLog := &lsptest.LockedBuffer{}
	startBackground(t, "code-server", csLog, env, codeServer,
		"--bind-addr", fmt.Sprintf("127.0.0.1:%d", port), "--auth", "none",
		"--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
		"--user-data-dir", userData, "--extensions-dir", exts, r.WS)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHTTP(t, base+"/healthz", 30*time.Second, csLog)
	startBackground(t, "chromium", &lsptest.LockedBuffer{}, env, chromium,
		"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--window-size=1280,800",
		fmt.Sprintf("--remote-debugging-port=%d", cdp), "--remote-allow-origins=*",
		"--user-data-dir="+filepath.Join(r.Tmp, "chromium"), base+"/?folder="+r.WS)

	recs := waitDriver(t, out, 120*time.Second, userData)
	for _, rec := range recs {
		if rec.Error != "" {
			logExtensionHost(t, userData)
			b, _ := os.ReadFile(out)
			t.Logf("the driver wrote:\n%s", b)
			t.Fatalf("the driver failed: %s\nthe chip: %+v", rec.Error, rec.Chip)
		}
	}
	return recs
}

// TestVSCodeGoBin: the server only in ~/go/bin of the home, not on PATH,
// no reika.serverPath: the extension finds it; the user clicks the chip
// (the Reika panel opens), asks, reads the answer in the panel and keeps
// the change with one click.
func TestVSCodeGoBin(t *testing.T) {
	longBoot(t, "TestVSCode")
	const answer = "Greet now says Hello with a capital H."
	script := `[
  {"tool_calls": [{"name": "edit", "arguments": {"path": "greet.go", "old_text": "return \"hello, \" + name", "new_text": "return \"Hello, \" + name"}}]},
  {"content": "` + answer + `"}
]`
	r := newRig(t, script, vscodeFiles)
	home := filepath.Join(r.Tmp, "home")
	gobin := filepath.Join(home, "go", "bin")
	os.MkdirAll(gobin, 0o755)
	data, err := os.ReadFile(r.Bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gobin, "reika-lsp"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	// PATH has neither the rig's binary nor go (so go env answers nothing).
	var env []string
	for _, kv := range r.Env("REIKA_DRIVER_MODE=gobin") {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH=/usr/bin:/bin")
	recs := runCodeServer(t, r, map[string]any{"reika.endpoint": r.Endpoint}, env)
	var rec driverRecord
	for _, x := range recs {
		if x.Scenario == "gobin" {
			rec = x
		}
	}
	if want := filepath.Join(gobin, "reika-lsp"); rec.ServerPath != want {
		t.Fatalf("the extension runs %q, want %s; the chip: %+v", rec.ServerPath, want, rec.Chip)
	}
	if !rec.Asked {
		t.Fatalf("the question did not reach the panel (the focus was on %s)", rec.Focused)
	}
	checkKept(t, rec, "Capitalize the greeting in greet.go.", answer)
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startBackground starts a long-running program in its own process
// group, killed with the whole group when the test ends.
func startBackground(t *testing.T, what string, log *lsptest.LockedBuffer, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", what, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("%s's output:\n%s", what, tail(log.String(), 4000))
		}
	})
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// waitHTTP polls url until it answers 200, for at most limit (times
// REIKA_TEST_SLOW).
func waitHTTP(t *testing.T, url string, limit time.Duration, log *lsptest.LockedBuffer) {
	t.Helper()
	limit = testslow.Scale(limit)
	deadline := time.Now().Add(limit)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer within %v: %v", url, limit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitDriver polls the driver's output until its last record, and returns
// the records; it fails after limit (times REIKA_TEST_SLOW).
func waitDriver(t *testing.T, path string, limit time.Duration, userData string) []driverRecord {
	t.Helper()
	limit = testslow.Scale(limit)
	deadline := time.Now().Add(limit)
	for {
		recs := readRecords(t, path)
		if n := len(recs); n > 0 && recs[n-1].Done {
			return recs
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(path)
			t.Logf("the driver wrote:\n%s", b)
			logExtensionHost(t, userData)
			t.Fatalf("the driver did not finish within %v", limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func readRecords(t *testing.T, path string) []driverRecord {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var recs []driverRecord
	lines := bufio.NewScanner(f)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		var rec driverRecord
		if err := json.Unmarshal(lines.Bytes(), &rec); err != nil {
			return recs // a line being written
		}
		recs = append(recs, rec)
	}
	return recs
}

// logExtensionHost logs the extension host's logs and Reika's output
// channel, for a failure's diagnosis.
func logExtensionHost(t *testing.T, userData string) {
	filepath.Walk(filepath.Join(userData, "logs"), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		if strings.Contains(p, "exthost") || strings.Contains(p, "Reika") || strings.HasSuffix(p, "remoteagent.log") {
			b, _ := os.ReadFile(p)
			t.Logf("%s:\n%s", p, tail(string(b), 3000))
		}
		return nil
	})
}
