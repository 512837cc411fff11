package editors

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
)

// The Neovim plugin (editors/nvim) and the README's plugin-less snippet,
// end to end in real headless Neovims: Debian bookworm's 0.7 (`nvim`) and
// a current one (`nvim-current`, from .ci/install-nvim). Each scenario is
// a Lua script under nvim/test/ that records what happened as JSON; the
// Go side sets the world up and judges.

// neovim is one Neovim a scenario runs on.
type neovim struct {
	name string // the subtest: "0.7" or "current"
	exe  string
}

// neovims runs f once per Neovim, each in its own subtest.
func neovims(t *testing.T, f func(t *testing.T, nv neovim)) {
	t.Run("0.7", func(t *testing.T) {
		exe := need(t, "nvim")
		if v := nvimVersion(t, exe); !strings.HasPrefix(v, "NVIM v0.7.") {
			msg := fmt.Sprintf("nvim on PATH is %s, not Neovim 0.7 (.ci/install-nvim installs Debian's)", v)
			if os.Getenv("REIKA_EDITORS") == "require" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
		f(t, neovim{"0.7", exe})
	})
	t.Run("current", func(t *testing.T) {
		f(t, neovim{"current", need(t, "nvim-current")})
	})
}

func nvimVersion(t *testing.T, exe string) string {
	t.Helper()
	out, err := exec.Command(exe, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", exe, err)
	}
	return strings.SplitN(string(out), "\n", 2)[0]
}

// nvimResult is what a scenario script recorded (harness.lua's H.out).
type nvimResult struct {
	Version    string            `json:"version"`
	Error      string            `json:"error"`
	Messages   []string          `json:"messages"`
	Progress   []string          `json:"progress"`
	Lines      []string          `json:"lines"`
	Final      string            `json:"final"`
	Chip       string            `json:"chip"`
	Statusline string            `json:"statusline"`
	Transcript string            `json:"transcript"`
	Prompt     string            `json:"prompt"`
	Applies    int               `json:"applies"`
	Answers    []json.RawMessage `json:"answers"`
	Health     []string          `json:"health"`
	Ask        json.RawMessage   `json:"ask"`
	Roots      json.RawMessage   `json:"roots"`
	// OtherAttached: a buffer of another filetype got a client.
	OtherAttached bool `json:"other_attached"`
	// SameClient: a second file of the project got the first's client.
	SameClient bool `json:"same_client"`
	// Echoes are the lines the plugin echoed (its progress).
	Echoes []string `json:"echoes"`
	// Stale is apply.lua's verdict on each of a list of edits.
	Stale []string `json:"stale"`
	// Questions are the window/showMessageRequest messages the user
	// answered (injection.lua), Written the buffers saved after the run.
	Questions []string `json:"questions"`
	Written   []string `json:"written"`
	// Trials are what trials.lua recorded of each ask.
	Trials []trial `json:"trials"`
	// Shown is what answer.lua saw of each answer (answer.lua).
	Shown []nvimShown `json:"shown"`
	// WholeIn is where bare_answer.lua found the answer whole ("message"
	// or "document"), Whole the text that held it.
	WholeIn string `json:"whole_in"`
	Whole   string `json:"whole"`
}

// nvimShown is one answer as answer.lua saw it: require("reika").answer(),
// the lines of the window that showed it, the same after the user closed
// it and ran :ReikaAnswer, and whether the cursor stayed in the file.
type nvimShown struct {
	Answer   []string `json:"answer"`
	Window   []string `json:"window"`
	Reopened []string `json:"reopened"`
	Stayed   bool     `json:"stayed"`
}

// runNvim runs the scenario script nvim/test/NAME.lua in nv with params
// (plus the result file's path), with the plugin on the runtimepath when
// plugin is set, and returns what the script recorded.
func runNvim(t *testing.T, r *rig, nv neovim, name string, plugin bool, params map[string]any) nvimResult {
	t.Helper()
	dir, err := filepath.Abs("nvim")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(r.Tmp, name+".out.json")
	params["out"] = out
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	paramsPath := filepath.Join(r.Tmp, name+".params.json")
	if err := os.WriteFile(paramsPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless", "--clean"}
	if plugin {
		args = append(args, "--cmd", "set rtp^="+dir)
	}
	args = append(args, "--cmd", "let g:reika_test_params = '"+paramsPath+"'",
		"-c", "luafile "+filepath.Join(dir, "test", name+".lua"))
	start := time.Now()
	printed, err := r.run(t, 60*time.Second, nv.exe, args...)
	t.Logf("%s %s: %v", nv.name, name, time.Since(start).Round(10*time.Millisecond))
	var res nvimResult
	data, rerr := os.ReadFile(out)
	if rerr == nil {
		rerr = json.Unmarshal(data, &res)
	}
	if err != nil || rerr != nil || res.Error != "" {
		t.Fatalf("Neovim %s, %s.lua: %v / %v\n%s\nprinted:\n%s\nrecorded: %s", nv.name, name, err, rerr, res.Error, printed, data)
	}
	return res
}

// lineOf returns the 1-based number of the first line of text matching re.
func lineOf(t *testing.T, text, re string) int {
	t.Helper()
	rx := regexp.MustCompile(re)
	for i, l := range strings.Split(text, "\n") {
		if rx.MatchString(l) {
			return i + 1
		}
	}
	t.Fatalf("no line matches %s in:\n%s", re, text)
	return 0
}

// greetScript reads greet.go, changes its return line, and ends with
// final; edit's fault (if any) delays the edit.
func greetScript(final, fault string) string {
	if fault != "" {
		fault = `, "fault": ` + fault
	}
	return `[
  {"tool_calls": [{"name": "read", "arguments": {"path": "greet.go"}}]},
  {"tool_calls": [{"name": "edit", "arguments": {"path": "greet.go", "old_text": "return \"hello, \" + name", "new_text": "return \"Hello, \" + name + \"!\""}}]` + fault + `},
  {"content": "` + final + `"}
]`
}

const (
	greetOld = "\treturn \"hello, \" + name"
	greetNew = "\treturn \"Hello, \" + name + \"!\""
)

var chipRx = regexp.MustCompile(`^ctx \S+/\S+ \(\d+% of \S+\)$`)

// checkEndMessage checks the end of run's message: one line that says
// the one change was applied, and never that one was applied when the
// buffer does not hold it.
func checkEndMessage(t *testing.T, msg string, landed bool) {
	t.Helper()
	if strings.Contains(msg, "\n") {
		t.Errorf("the end-of-run message is not one line: %q", msg)
	}
	says := regexp.MustCompile(`\b1 change applied\b`).MatchString(msg)
	switch {
	case landed && !says:
		t.Errorf("the change landed, but the end-of-run message does not say \"1 change applied\": %q", msg)
	case !landed && says:
		t.Errorf("the change is not in the buffer, but the end-of-run message says it was applied: %q", msg)
	}
}

func TestNvimPluginAsk(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		const final = "Greet now says Hello with an exclamation mark."
		r := newRig(t, greetScript(final, ""), map[string]string{"greet.go": greetGo})
		line := lineOf(t, greetGo, `return "hello`)
		res := runNvim(t, r, nv, "ask", true, map[string]any{
			"file":       filepath.Join(r.WS, "greet.go"),
			"setup":      writeNamedSnippet(t, r, "nvim-setup"),
			"statusline": writeNamedSnippet(t, r, "nvim-statusline"),
			"ask":        fmt.Sprintf("%dReikaAsk make the greeting friendlier", line),
			"final":      final,
			"diagnostic": map[string]any{"lnum": line - 1, "col": 8, "message": "the greeting is not capitalized"},
		})
		// The warning Neovim showed went with the ask.
		if asked, want := r.requests(t, 1)[0], fmt.Sprintf("greet.go:%d:9: warning: the greeting is not capitalized (testlint)", line); !strings.Contains(asked, want) {
			t.Errorf("the engine's first request:\n%s\nwant the editor's warning %q in the ask", asked, want)
		}
		if got := res.Lines[line-1]; got != greetNew {
			t.Errorf("line %d = %q, want %q; the buffer:\n%s", line, got, greetNew, strings.Join(res.Lines, "\n"))
		}
		if res.Applies != 1 {
			t.Errorf("%d workspace/applyEdit requests, want 1", res.Applies)
		}
		checkEndMessage(t, res.Final, res.Lines[line-1] == greetNew)
		if want := fmt.Sprintf("The place: greet.go, lines %d-%d", line, line); !strings.Contains(res.Transcript, want) {
			t.Errorf("the transcript lacks %q (the range of :%dReikaAsk):\n%s", want, line, res.Transcript)
		}
		checkProgress(t, res.Progress)
		checkChip(t, res)
		// The progress shows on one line each time.
		if len(res.Echoes) < 2 || !strings.HasPrefix(res.Echoes[0], "Reika: make the greeting friendlier") || res.Echoes[len(res.Echoes)-1] != "Reika: done" {
			t.Errorf("the plugin echoed %q, want the progress from \"Reika: make the greeting friendlier…\" to \"Reika: done\"", res.Echoes)
		}
		for _, e := range res.Echoes {
			if strings.Contains(e, "\n") {
				t.Errorf("an echoed progress line has a line break: %q", e)
			}
		}
	})
}

// TestNvimPluginAskPrompt: :ReikaAsk without an argument asks for the
// instruction, and sends it with the buffer.
func TestNvimPluginAskPrompt(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		const final = "Done: Greet says Hello."
		r := newRig(t, greetScript(final, ""), map[string]string{"greet.go": greetGo})
		res := runNvim(t, r, nv, "ask", true, map[string]any{
			"file":        filepath.Join(r.WS, "greet.go"),
			"ask":         "ReikaAsk",
			"instruction": "capitalize the greeting",
			"final":       final,
		})
		if res.Prompt == "" {
			t.Errorf("ReikaAsk without an argument did not prompt")
		}
		if !strings.Contains(res.Transcript, "capitalize the greeting") || !strings.Contains(res.Transcript, "The file: greet.go") {
			t.Errorf("the transcript lacks the prompted instruction and the file:\n%s", res.Transcript)
		}
		if !slicesContains(res.Lines, greetNew) {
			t.Errorf("the edit did not land:\n%s", strings.Join(res.Lines, "\n"))
		}
	})
}

// TestNvimPluginPlan: :ReikaPlan asks in the plan mode: the model's edit
// is refused and the buffer is as it was.
func TestNvimPluginPlan(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		const final = "1. In greet.go, capitalize the greeting."
		r := newRig(t, greetScript(final, ""), map[string]string{"greet.go": greetGo})
		res := runNvim(t, r, nv, "ask", true, map[string]any{
			"file":  filepath.Join(r.WS, "greet.go"),
			"ask":   "ReikaPlan make the greeting friendlier",
			"final": final,
		})
		if slicesContains(res.Lines, greetNew) || res.Applies != 0 {
			t.Errorf("the plan mode's edit landed (%d applies):\n%s", res.Applies, strings.Join(res.Lines, "\n"))
		}
		if !strings.Contains(res.Transcript, "[Plan mode: read-only.") || !strings.Contains(res.Transcript, "plan mode: no edits") {
			t.Errorf("the transcript lacks the plan preface and the refused edit:\n%s", res.Transcript)
		}
	})
}

func slicesContains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// checkProgress checks that the run's $/progress began and ended.
func checkProgress(t *testing.T, progress []string) {
	t.Helper()
	if len(progress) < 2 || !strings.HasPrefix(progress[0], "begin:") || !strings.HasPrefix(progress[len(progress)-1], "end:") {
		t.Errorf("$/progress = %q, want a begin … an end", progress)
	}
}

// checkChip checks that the status line shows the chip of reika/status.
func checkChip(t *testing.T, res nvimResult) {
	t.Helper()
	if !chipRx.MatchString(res.Chip) {
		t.Errorf("require('reika').statusline() = %q, want a chip like \"ctx 1.2k/16k (9%% of 13k)\"", res.Chip)
	}
	if res.Chip == "" || !strings.Contains(res.Statusline, res.Chip) {
		t.Errorf("the status line shows %q, want the chip %q in it", res.Statusline, res.Chip)
	}
}

// typingCheck judges the typing-while-editing scenario: the user's line
// is intact at the top, the edit is at its right place or nowhere, and
// the end-of-run message does not claim an edit that is not there.
// With mustLand, the edit must have been placed again on the new text.
func typingCheck(t *testing.T, res nvimResult, typed string, line int, mustLand bool) {
	t.Helper()
	buf := strings.Join(res.Lines, "\n")
	if len(res.Lines) == 0 || res.Lines[0] != typed {
		t.Fatalf("the user's line is not intact at the top:\n%s", buf)
	}
	want := strings.Split(greetGo, "\n")
	want = append([]string{typed}, want[:len(want)-1]...)
	landed := res.Lines[line] == greetNew // one line lower than before
	if landed {
		want[line] = greetNew
	}
	if buf != strings.Join(want, "\n") {
		t.Errorf("the buffer is\n%s\nwant\n%s", buf, strings.Join(want, "\n"))
	}
	if mustLand && !landed {
		t.Errorf("the edit was not applied after the user's typing (placing it again on the new text is expected)")
	}
	checkEndMessage(t, res.Final, landed)
}

func TestNvimPluginTypingWhileEditing(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		const final = "Greet is friendlier now."
		const typed = "// the user typed this"
		r := newRig(t, greetScript(final, ""), map[string]string{"greet.go": greetGo})
		line := lineOf(t, greetGo, `return "hello`)
		res := runNvim(t, r, nv, "ask", true, map[string]any{
			"file":      filepath.Join(r.WS, "greet.go"),
			"ask":       fmt.Sprintf("%dReikaAsk make the greeting friendlier", line),
			"final":     final,
			"type_line": typed,
		})
		typingCheck(t, res, typed, line, true)
		// The plugin refused the edit made for the text without the
		// user's line, and took the one placed again.
		var first struct {
			Applied       bool   `json:"applied"`
			FailureReason string `json:"failureReason"`
		}
		if len(res.Answers) > 0 {
			json.Unmarshal(res.Answers[0], &first)
		}
		if len(res.Answers) < 2 || first.Applied || first.FailureReason == "" {
			t.Errorf("the plugin's answers to applyEdit = %s, want the first refused with a reason, then one applied", res.Answers)
		}
	})
}

func TestNvimPluginCancel(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		r := newRig(t, greetScript("never said", `{"latency": "4s"}`), map[string]string{"greet.go": greetGo})
		res := runNvim(t, r, nv, "cancel", true, map[string]any{
			"file":                   filepath.Join(r.WS, "greet.go"),
			"ask":                    "ReikaAsk make the greeting friendlier",
			"progress_before_cancel": "read greet.go",
			"final":                  "cancelled",
		})
		if strings.Join(res.Lines, "\n")+"\n" != greetGo {
			t.Errorf("the buffer changed after the cancel:\n%s", strings.Join(res.Lines, "\n"))
		}
		if res.Applies != 0 {
			t.Errorf("%d applyEdit requests after the cancel, want 0", res.Applies)
		}
		if last := res.Progress[len(res.Progress)-1]; !strings.Contains(last, "cancel") {
			t.Errorf("the progress ended with %q, want it cancelled", last)
		}
		if strings.Contains(res.Final, "applied") && !strings.Contains(res.Final, "not applied") {
			t.Errorf("the message after the cancel claims a change: %q", res.Final)
		}
	})
}

func TestNvimPluginCompact(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		files := map[string]string{"README.md": "# Builds\nThe logs of the last three builds are under logs/.\n"}
		for _, name := range []string{"a", "b", "c"} {
			var b strings.Builder
			for i := 1; i <= 110; i++ {
				fmt.Fprintf(&b, "build %s step %d: compiled package pkg%d in 120ms without warnings\n", name, i, i)
			}
			files["logs/"+name+".log"] = b.String()
		}
		const final = "All three builds passed."
		r := newRig(t, `[
  {"tool_calls": [{"name": "read", "arguments": {"path": "logs/a.log"}}]},
  {"tool_calls": [{"name": "read", "arguments": {"path": "logs/b.log"}}]},
  {"tool_calls": [{"name": "read", "arguments": {"path": "logs/c.log"}}]},
  {"content": "`+final+`"},
  {"content": "logs: logs/a.log, logs/b.log, logs/c.log\nresult: every build step passed"}
]`, files)
		res := runNvim(t, r, nv, "compact", true, map[string]any{
			"file":      filepath.Join(r.WS, "README.md"),
			"ask":       "ReikaAsk read the three build logs under logs/ and tell me if they passed",
			"final":     final,
			"compacted": "folded the conversation",
		})
		m := regexp.MustCompile(`(\d+) → (\d+) tokens`).FindStringSubmatch(res.Final)
		if m == nil {
			t.Fatalf("the compaction's message = %q, want \"… N → M tokens …\"", res.Final)
		}
		var before, after int
		fmt.Sscan(m[1], &before)
		fmt.Sscan(m[2], &after)
		if after >= before {
			t.Errorf("compacted from %d to %d tokens: not smaller", before, after)
		}
	})
}

func TestNvimPluginHealth(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		r := newRig(t, `[{"content": "unused"}]`, map[string]string{"a.go": "package a\n"})
		// The plugin's window overrides REIKA_CONTEXT_WINDOW; the report
		// says so.
		r.Extra = []string{"REIKA_CONTEXT_WINDOW=6000"}
		res := runNvim(t, r, nv, "health", true, map[string]any{"settings": map[string]any{"context_window": 7000}})
		report := strings.Join(res.Health, "\n")
		for _, want := range []string{"found: " + r.Bin, "version: reika-lsp 0.1.0", r.Endpoint, "the engine answers",
			"context_window: the editor's 7000 overrides 6000 from env REIKA_CONTEXT_WINDOW"} {
			if !strings.Contains(report, want) {
				t.Errorf("the health report lacks %q:\n%s", want, report)
			}
		}
		if regexp.MustCompile(`(?m)ERROR|E5108|Error executing`).MatchString(report) {
			t.Errorf("the health report has an error:\n%s", report)
		}
	})
}

// With no server, :checkhealth reika says how to install it from a clone
// (the module is not published: go install …@latest fails).
func TestNvimPluginHealthNoServer(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		r := newRig(t, `[{"content": "unused"}]`, map[string]string{"a.go": "package a\n"})
		res := runNvim(t, r, nv, "health", true, map[string]any{"cmd": []string{filepath.Join(r.Tmp, "no-such-reika-lsp")}})
		report := strings.Join(res.Health, "\n")
		for _, want := range []string{"is not found", "in a clone of Reika: go install ./cmd/reika-lsp", "not published"} {
			if !strings.Contains(report, want) {
				t.Errorf("the health report lacks %q:\n%s", want, report)
			}
		}
		if strings.Contains(report, "reika-lsp@latest") {
			t.Errorf("the health report offers go install …@latest, which fails (the module is not published):\n%s", report)
		}
	})
}

// writeSnippet writes the README's plugin-less snippet to a file.
func writeSnippet(t *testing.T, r *rig) string {
	t.Helper()
	return writeNamedSnippet(t, r, "nvim-bare")
}

// writeNamedSnippet writes the README's snippet name to a file.
func writeNamedSnippet(t *testing.T, r *rig, name string) string {
	t.Helper()
	p := filepath.Join(r.Tmp, name+".lua")
	if err := os.WriteFile(p, []byte(snippet(t, name)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNvimBareAsk(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		const final = "Greet now says Hello with an exclamation mark."
		r := newRig(t, greetScript(final, ""), map[string]string{"greet.go": greetGo, "cmd/main.go": "package main\n"})
		line := lineOf(t, greetGo, `return "hello`)
		res := runNvim(t, r, nv, "bare", false, map[string]any{
			"file":        filepath.Join(r.WS, "greet.go"),
			"second":      filepath.Join(r.WS, "cmd/main.go"),
			"snippet":     writeSnippet(t, r),
			"instruction": "make the greeting friendlier",
			"final":       final,
		})
		if !res.SameClient {
			t.Errorf("a second file of the project got a second client")
		}
		if got := res.Lines[line-1]; got != greetNew {
			t.Errorf("line %d = %q, want %q", line, got, greetNew)
		}
		checkEndMessage(t, res.Final, res.Lines[line-1] == greetNew)
	})
}

// TestNvimBareAnswerWhole: without the plugin, an answer of several lines
// is seen whole: in a document the server opens where Neovim takes
// window/showDocument (0.10), else in a message of its own lines after
// the end line (0.7), which Neovim shows whole (it cuts a long line).
func TestNvimBareAnswerWhole(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		const final = `Greet says hello.\n\n- It takes a name.\n- It never fails.` // JSON's escapes
		r := newRig(t, greetScript(final, ""), map[string]string{"greet.go": greetGo})
		want := strings.ReplaceAll(final, `\n`, "\n")
		res := runNvim(t, r, nv, "bare_answer", false, map[string]any{
			"file":        filepath.Join(r.WS, "greet.go"),
			"snippet":     writeSnippet(t, r),
			"instruction": "make the greeting friendlier",
			"final":       want,
		})
		t.Logf("the answer whole in a %s", res.WholeIn)
		if res.WholeIn == "message" && !strings.HasPrefix(res.Whole, "Reika's answer:\n") {
			t.Errorf("the message that holds the answer is %q, want it to begin with Reika's answer", res.Whole)
		}
	})
}

// TestNvimBareTypingWhileEditing depends on the server: Neovim's own
// handler checks no version 0 (every buffer just opened), so only the
// server, seeing the next didChange, can tell.
func TestNvimBareTypingWhileEditing(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		const final = "Greet is friendlier now."
		const typed = "// the user typed this"
		r := newRig(t, greetScript(final, ""), map[string]string{"greet.go": greetGo})
		line := lineOf(t, greetGo, `return "hello`)
		res := runNvim(t, r, nv, "bare", false, map[string]any{
			"file":        filepath.Join(r.WS, "greet.go"),
			"snippet":     writeSnippet(t, r),
			"instruction": "make the greeting friendlier",
			"final":       final,
			"type_line":   typed,
		})
		// Neovim skips the edit made for the text without the user's
		// line; the server sees it absent in the next didChange and
		// places it again on the user's text.
		typingCheck(t, res, typed, line, true)
	})
}

// TestNvimPluginRoots: one server per project, its root the nearest
// marker above the buffer's file (not Neovim's cwd), reused by the
// project's other buffers; filetypes from setup{}.
func TestNvimPluginRoots(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		r := newRig(t, `[{"content": "unused"}]`, map[string]string{
			"a.go":           "package a\n",
			"sub/go.mod":     "module sub\n",
			"sub/b.go":       "package sub\n",
			"sub/deep/c.go":  "package deep\n",
			"notes/plain.md": "# notes\n",
		})
		files := []string{"a.go", "sub/b.go", "sub/deep/c.go"}
		var abs []string
		for _, f := range files {
			abs = append(abs, filepath.Join(r.WS, f))
		}
		res := runNvim(t, r, nv, "root", true, map[string]any{
			"files":    abs,
			"other":    filepath.Join(r.WS, "notes/plain.md"),
			"settings": map[string]any{"endpoint": r.Endpoint},
		})
		var roots []struct {
			File string `json:"file"`
			Root string `json:"root"`
			ID   int    `json:"id"`
		}
		if err := json.Unmarshal(res.Roots, &roots); err != nil || len(roots) != 3 {
			t.Fatalf("roots = %s (%v)", res.Roots, err)
		}
		want := []string{r.WS, filepath.Join(r.WS, "sub"), filepath.Join(r.WS, "sub")}
		for i, got := range roots {
			if got.Root != want[i] {
				t.Errorf("the root of %s = %s, want %s", files[i], got.Root, want[i])
			}
		}
		if roots[0].ID == roots[1].ID || roots[1].ID != roots[2].ID {
			t.Errorf("client ids %d, %d, %d: want one per root, the second reused", roots[0].ID, roots[1].ID, roots[2].ID)
		}
		if res.OtherAttached {
			t.Errorf("a markdown buffer got a client though setup{filetypes = {\"go\"}} leaves it out")
		}
	})
}

// TestNvimPluginStaleEdits: which edits the plugin's applyEdit refuses.
func TestNvimPluginStaleEdits(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		r := newRig(t, `[{"content": "unused"}]`, map[string]string{"greet.go": greetGo})
		res := runNvim(t, r, nv, "stale", true, map[string]any{"file": filepath.Join(r.WS, "greet.go")})
		want := []string{
			"ok",                      // the buffer's version
			"ok",                      // unversioned, the buffer as on disk
			"ok",                      // version null, the buffer as on disk
			"differs from the editor", // made before the user typed
			"ok",                      // made for the user's text
			"unsaved changes",         // unversioned over unsaved changes
			"unsaved changes",         // version null over unsaved changes
			"ok",                      // a file with no buffer
		}
		if len(res.Stale) != len(want) {
			t.Fatalf("verdicts = %q, want %d", res.Stale, len(want))
		}
		for i, w := range want {
			if got := res.Stale[i]; (w == "ok") != (got == "ok") || !strings.Contains(got, w) {
				t.Errorf("edit %d: verdict %q, want %q", i+1, got, w)
			}
		}
	})
}

// TestNvimPluginRace: ten asks in one session, each edit arriving just
// after the user typed a line above it that Neovim has not sent yet. The
// plugin sends it first and refuses the stale edit; the server places it
// again. No trial may put it on a wrong line.
func TestNvimPluginRace(t *testing.T) { testNvimRace(t, true) }

// TestNvimBareRace: the race with Neovim's own applyEdit handler, which
// skips a stale version (answering applied) but for version 0.
func TestNvimBareRace(t *testing.T) { longTrial(t); testNvimRace(t, false) }

func testNvimRace(t *testing.T, plugin bool) {
	neovims(t, func(t *testing.T, nv neovim) {
		r := newRig(t, raceScript(raceTrials), map[string]string{"greet.go": raceFile(raceTrials)})
		params := map[string]any{"file": filepath.Join(r.WS, "greet.go"), "mode": "race", "n": raceTrials}
		if !plugin {
			params["snippet"] = writeSnippet(t, r)
		}
		start := time.Now()
		res := runNvim(t, r, nv, "trials", plugin, params)
		if d, limit := time.Since(start), testslow.Scale(40*time.Second); d > limit {
			t.Errorf("%d trials took %v, want under %v", raceTrials, d, limit)
		}
		judgeRace(t, raceFile(raceTrials), res.Trials)
	})
}

// TestNvimPluginUndo: the edit lands and the user undoes it 50 ms later,
// before Neovim's debounce sent the edit: one didChange carries the edit
// and the undo. The server must not apply it again, nor say it did.
func TestNvimPluginUndo(t *testing.T) { testNvimUndo(t, true) }

// TestNvimBareUndo: the undo with Neovim's own handler.
func TestNvimBareUndo(t *testing.T) { longTrial(t); testNvimUndo(t, false) }

func testNvimUndo(t *testing.T, plugin bool) {
	neovims(t, func(t *testing.T, nv neovim) {
		r := newRig(t, `[`+greetEdit+`, {"content": "Done."}]`, map[string]string{"greet.go": greetGo})
		params := map[string]any{"file": filepath.Join(r.WS, "greet.go"), "mode": "undo"}
		if !plugin {
			params["snippet"] = writeSnippet(t, r)
		}
		res := runNvim(t, r, nv, "trials", plugin, params)
		if len(res.Trials) != 1 {
			t.Fatalf("%d trials recorded, want 1", len(res.Trials))
		}
		judgeUndo(t, greetGo, res.Trials[0])
	})
}

// TestNvimPluginAnswer: an answer of several lines, and one too long for a
// message (the server writes it to a document and opens it), open in full
// in a window below, the cursor left in the file; :ReikaAnswer shows the
// last one again.
func TestNvimPluginAnswer(t *testing.T) {
	neovims(t, func(t *testing.T, nv neovim) {
		lines := []string{"Greet returns a greeting.", "It takes a name.", "It never fails."}
		long := strings.TrimSpace(strings.Repeat("Greet is a small function that says hello. ", 12))
		script, err := json.Marshal([]map[string]string{{"content": strings.Join(lines, "\n")}, {"content": long}})
		if err != nil {
			t.Fatal(err)
		}
		r := newRig(t, string(script), map[string]string{"greet.go": greetGo})
		res := runNvim(t, r, nv, "answer", true, map[string]any{
			"file": filepath.Join(r.WS, "greet.go"),
			"asks": []map[string]string{
				{"instruction": "explain Greet", "expect": lines[2]},
				{"instruction": "explain Greet at length", "expect": long},
			},
		})
		if len(res.Shown) != 2 {
			t.Fatalf("%d answers recorded, want 2", len(res.Shown))
		}
		for i, want := range [][]string{lines, {long}} {
			s := res.Shown[i]
			if len(s.Window) == 0 || !strings.HasPrefix(s.Window[0], "Reika") {
				t.Fatalf("answer %d: the window below shows %q, want the end of the run first", i+1, s.Window)
			}
			// Its own line, or (Neovim 0.7 advertises no showDocument: the
			// server sends a long answer in its message) in the end's.
			for _, l := range want {
				if !slicesContains(s.Window, l) && !strings.Contains(s.Window[0], l) {
					t.Errorf("answer %d: the window lacks the line %q:\n%s", i+1, l, strings.Join(s.Window, "\n"))
				}
			}
			if strings.Join(s.Reopened, "\n") != strings.Join(s.Window, "\n") {
				t.Errorf("answer %d: :ReikaAnswer shows\n%s\nwant\n%s", i+1, strings.Join(s.Reopened, "\n"), strings.Join(s.Window, "\n"))
			}
			if !s.Stayed {
				t.Errorf("answer %d: the cursor left the file's window", i+1)
			}
		}
		for _, e := range res.Echoes {
			if strings.Contains(e, "\n") {
				t.Errorf("an echoed line has a line break: %q", e)
			}
		}
	})
}
