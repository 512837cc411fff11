package sim

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeTree creates a small project for the policy to explore.
func writeTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/demo\n\ngo 1.22\n",
		"main.go": `package main

import "example.com/demo/config"

func main() {
	cfg, err := config.LoadConfig("demo.toml")
	if err != nil {
		panic(err)
	}
	runServer(cfg)
}

func runServer(cfg *config.Config) {
	_ = cfg.ListenAddr
}
`,
		"config/config.go": `package config

import "os"

// Config holds the settings.
type Config struct {
	ListenAddr string
	MaxWorkers int
}

// LoadConfig reads the file at path.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseConfig(data)
}

func parseConfig(data []byte) (*Config, error) {
	if len(data) == 0 {
		return &Config{ListenAddr: ":8080"}, nil
	}
	return &Config{ListenAddr: string(data)}, nil
}
`,
		"config/config_test.go": `package config

import "testing"

func TestParseConfig(t *testing.T) {
	cfg, err := parseConfig(nil)
	if err != nil || cfg.ListenAddr != ":8080" {
		t.Fatal(cfg, err)
	}
}
`,
		"tools/report.py": `import sys


def build_report(rows):
    return "\n".join(str(r) for r in rows)


class ReportWriter:
    def write_all(self, rows):
        sys.stdout.write(build_report(rows))
`,
		"README.md":             "# Demo\n\nA small server that reads its configuration with LoadConfig and serves requests.\n",
		".git/HEAD":             "ref: refs/heads/main\n",
		"node_modules/x/x.js":   "function hidden() {}\n",
		"assets/logo.bin":       "PNG\x00\x01\x02binary",
		"docs/notes/design.txt": "The server starts in main.go and reads config/config.go first.\n",
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// fakeAgent runs the tools the policy asks for against a directory, the
// way Reika's agent will.
type fakeAgent struct {
	t     *testing.T
	root  string
	edits int
}

func (a *fakeAgent) run(name string, args map[string]any) string {
	str := func(k string) string { s, _ := args[k].(string); return s }
	num := func(k string) int { f, _ := args[k].(float64); return int(f) }
	switch name {
	case "read":
		data, err := os.ReadFile(filepath.Join(a.root, str("path")))
		if err != nil {
			return "error: " + err.Error()
		}
		lines := strings.Split(string(data), "\n")
		from := max(num("offset"), 1) - 1
		to := len(lines)
		if l := num("limit"); l > 0 {
			to = min(to, from+l)
		}
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "%5d\t%s\n", i+1, lines[i])
		}
		return b.String()
	case "glob":
		re := globRegexp(str("pattern"))
		var out []string
		a.walk(func(rel, _ string) {
			if re.MatchString(rel) {
				out = append(out, rel)
			}
		})
		return strings.Join(out, "\n")
	case "grep":
		var out []string
		a.walk(func(rel, text string) {
			if p := str("path"); p != "" && !strings.HasPrefix(rel, p) {
				return
			}
			for i, line := range strings.Split(text, "\n") {
				if strings.Contains(line, str("pattern")) {
					out = append(out, fmt.Sprintf("%s:%d:%s", rel, i+1, line))
				}
			}
		})
		return strings.Join(out, "\n")
	case "edit":
		p := filepath.Join(a.root, str("path"))
		data, err := os.ReadFile(p)
		if err != nil {
			a.t.Errorf("edit %s: %v", str("path"), err)
			return "error: " + err.Error()
		}
		if n := strings.Count(string(data), str("old_text")); n != 1 {
			a.t.Errorf("edit %s: old_text %q occurs %d times, want once", str("path"), str("old_text"), n)
			return "error: old_text not found exactly once"
		}
		os.WriteFile(p, []byte(strings.Replace(string(data), str("old_text"), str("new_text"), 1)), 0o644)
		a.edits++
		return "edited " + str("path")
	case "bash":
		return "$ " + str("command") + "\n(simulated output)"
	}
	a.t.Errorf("policy called unknown tool %q", name)
	return "error: unknown tool"
}

func (a *fakeAgent) walk(f func(rel, text string)) {
	filepath.WalkDir(a.root, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(a.root, p)
		data, _ := os.ReadFile(p)
		f(filepath.ToSlash(rel), string(data))
		return nil
	})
}

func globRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch {
		case strings.HasPrefix(pattern[i:], "**/"):
			b.WriteString("(.*/)?")
			i += 2
		case strings.HasPrefix(pattern[i:], "**"):
			b.WriteString(".*")
			i++
		case pattern[i] == '*':
			b.WriteString("[^/]*")
		default:
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// transcript is what a policy run did: one line per tool call, then the
// final answer.
type transcript struct {
	calls  []string
	rounds int
	final  string
	edits  int
	reads  []string
}

// runPolicy drives the sim as an agent would until the model stops
// calling tools.
func runPolicy(t *testing.T, cfg Config, task string, tools []string, parallel bool) transcript {
	t.Helper()
	_, url := start(t, cfg)
	agent := &fakeAgent{t: t, root: cfg.Root}
	msgs := []any{msg{"role": "system", "content": "You are a coding agent."}, user(task)}
	var tr transcript
	for round := 0; ; round++ {
		if round > 500 {
			t.Fatalf("policy did not finish in 500 rounds")
		}
		b := map[string]any{"messages": msgs, "tools": toolDefs(tools...)}
		if parallel {
			b["parallel_tool_calls"] = true
		}
		c := chatOK(t, url, b)
		ch := c.Choices[0]
		if ch.FinishReason != "tool_calls" {
			tr.final = c.content()
			return tr
		}
		tr.rounds++
		var calls []any
		var results []any
		for _, tc := range ch.Message.ToolCalls {
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
				t.Fatalf("round %d: arguments %q: %v", round+1, tc.Function.Arguments, err)
			}
			tr.calls = append(tr.calls, tc.Function.Name+" "+tc.Function.Arguments)
			if tc.Function.Name == "read" {
				tr.reads = append(tr.reads, args["path"].(string))
			}
			calls = append(calls, map[string]any{"id": tc.ID, "type": "function",
				"function": map[string]any{"name": tc.Function.Name, "arguments": tc.Function.Arguments}})
			results = append(results, msg{"role": "tool", "tool_call_id": tc.ID, "content": agent.run(tc.Function.Name, args)})
		}
		msgs = append(msgs, msg{"role": "assistant", "content": c.content(), "tool_calls": calls})
		msgs = append(msgs, results...)
		tr.edits = agent.edits
	}
}

var allTools = []string{"read", "glob", "grep", "edit", "write", "bash"}

func TestPolicyRun(t *testing.T) {
	const rounds = 60
	run := func() transcript {
		return runPolicy(t, Config{Ctx: 1 << 20, Root: writeTree(t), PolicyRounds: rounds}, "Explain how LoadConfig handles a missing file.", allTools, false)
	}
	first, second := run(), run()
	if diff := cmp.Diff(first.calls, second.calls); diff != "" {
		t.Fatalf("two runs differ (-first +second):\n%s", diff)
	}
	if first.final != second.final {
		t.Errorf("final answers differ:\n%s\n%s", first.final, second.final)
	}
	if first.rounds != rounds {
		t.Errorf("rounds = %d, want %d", first.rounds, rounds)
	}
	used := map[string]int{}
	for _, c := range first.calls {
		used[strings.Fields(c)[0]]++
	}
	for _, name := range []string{"read", "glob", "grep", "edit", "bash"} {
		if used[name] == 0 {
			t.Errorf("the policy never used %s in %d rounds: %v", name, rounds, used)
		}
	}
	if used["write"] != 0 {
		t.Errorf("the policy wrote %d files, want none", used["write"])
	}
	if first.edits == 0 || first.edits != used["edit"] {
		t.Errorf("edits applied = %d of %d, want all of them and at least one", first.edits, used["edit"])
	}
	reread := false
	seen := map[string]bool{}
	for _, p := range first.reads {
		reread = reread || seen[p]
		seen[p] = true
		if strings.HasPrefix(p, ".git") || strings.HasPrefix(p, "node_modules") || strings.HasSuffix(p, ".bin") {
			t.Errorf("the policy read %s, which it should skip", p)
		}
	}
	if !reread {
		t.Errorf("the policy never re-read a file in %d rounds", rounds)
	}
	if !strings.Contains(first.final, "finished after 60 tool rounds") {
		t.Errorf("final answer = %q, want a summary of the run", first.final)
	}
	if !strings.HasPrefix(first.calls[0], "glob ") {
		t.Errorf("first call = %q, want a survey with glob", first.calls[0])
	}
}

func TestPolicyOnlyOfferedTools(t *testing.T) {
	tr := runPolicy(t, Config{Ctx: 1 << 20, Root: writeTree(t), PolicyRounds: 15}, "Find parseConfig.", []string{"read", "grep"}, true)
	parallel := false
	for _, c := range tr.calls {
		if name := strings.Fields(c)[0]; name != "read" && name != "grep" {
			t.Errorf("call %q uses a tool the request did not offer", c)
		}
	}
	parallel = len(tr.calls) > tr.rounds
	if !parallel {
		t.Errorf("with parallel_tool_calls, %d calls in %d rounds, want some rounds with two", len(tr.calls), tr.rounds)
	}
	if !strings.HasPrefix(tr.calls[0], `grep {"pattern":"parseConfig"}`) {
		t.Errorf("first call = %q, want a grep for the task's identifier", tr.calls[0])
	}
}

func TestPolicyDirective(t *testing.T) {
	tr := runPolicy(t, Config{Ctx: 1 << 20, Root: writeTree(t)}, "Survey the project, rounds=7.", allTools, false)
	if tr.rounds != 7 {
		t.Errorf("rounds with rounds=7 = %d, want 7", tr.rounds)
	}
}

func TestPolicyNote(t *testing.T) {
	root := writeTree(t)
	_, url := start(t, Config{Root: root})
	conv := []any{user("Explain LoadConfig."),
		msg{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_1_r1_0", "type": "function",
			"function": map[string]any{"name": "read", "arguments": `{"path":"config/config.go"}`}}}},
		msg{"role": "tool", "tool_call_id": "call_1_r1_0", "content": "package config\n\nfunc LoadConfig() {}\n"},
	}
	c := chatOK(t, url, map[string]any{"messages": conv, "tools": toolDefs(allTools...), "tool_choice": "none"})
	if c.Choices[0].FinishReason != "stop" || !strings.Contains(c.content(), "files read (1): config/config.go") {
		t.Errorf("note = %q finish %q, want the files read", c.content(), c.Choices[0].FinishReason)
	}
}

// TestPolicyRoundAfterFold: the round number survives a fold that keeps
// only recent turns, read back from the call ids.
func TestPolicyRoundAfterFold(t *testing.T) {
	c, err := parseChat(mustJSON(t, map[string]any{"messages": []any{
		user("Recap of earlier work. rounds=18"),
		msg{"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_0badf00d_r17_0", "type": "function",
			"function": map[string]any{"name": "read", "arguments": `{"path":"main.go"}`}}}},
		msg{"role": "tool", "tool_call_id": "call_0badf00d_r17_0", "content": "package main"},
	}, "tools": toolDefs("read")}))
	if err != nil {
		t.Fatal(err)
	}
	k := learn(c)
	if k.rounds != 17 {
		t.Errorf("learn: rounds = %d, want 17 from the call id", k.rounds)
	}
	p := newPolicy(writeTree(t), 40)
	if r := p.reply(c); len(r.ToolCalls) != 1 || !strings.Contains(r.ToolCalls[0].ID, "_r18_") {
		t.Fatalf("reply after round 17 = %+v, want round 18", r)
	}
	c.messages = append(c.messages,
		message{Role: "assistant", ToolCalls: []toolCall{{ID: "call_0badf00d_r18_0", Name: "read", Arguments: `{"path":"go.mod"}`}}},
		message{Role: "tool", ToolCallID: "call_0badf00d_r18_0", Content: "module x"})
	if r := p.reply(c); r.Source != "final" {
		t.Errorf("reply after round 18 of 18 = %+v, want the final answer", r)
	}
}

func TestStripLineNumbers(t *testing.T) {
	tests := []struct{ in, want string }{
		{"    1\tpackage x\n    2\t\n    3\tfunc A() {}", "package x\n\nfunc A() {}"},
		{"1: a\n2: b", "a\nb"},
		{"10 apples\nand pears", "10 apples\nand pears"},
		{"plain text", "plain text"},
	}
	for _, tt := range tests {
		if got := stripLineNumbers(tt.in); got != tt.want {
			t.Errorf("stripLineNumbers(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPolicyListing(t *testing.T) {
	p := newPolicy(writeTree(t), 10)
	var got []string
	for _, f := range p.listing() {
		got = append(got, f.path)
	}
	want := []string{"README.md", "config/config.go", "config/config_test.go", "docs/notes/design.txt", "go.mod", "main.go", "tools/report.py"}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
}

// The policy reads the task where a careful model would: in the recap
// when the first user message is one (the note then says the task, not
// "[The conversation before this point was folded…"), else in the
// request after it, else in the note the recap carries.
func TestPolicyTaskFromRecap(t *testing.T) {
	const preamble = "[The conversation before this point was folded to stay inside the context window. " +
		"Nothing is lost: read files and run searches again for anything you need in full.]\n\n"
	const recap = preamble + "Recap of the folded turns:\nFacts:\n- issue: #412\nHappened, newest first:\n- read a.go"
	for _, tc := range []struct {
		name  string
		users []string
		want  string
	}{
		{"plain", []string{"Fix LoadConfig so that rounds=9 holds.", "And add a test."}, "Fix LoadConfig so that rounds=9 holds."},
		{"verbatim", []string{recap + "\n\nThe task, verbatim:\nFix LoadConfig so that rounds=9 holds."}, "Fix LoadConfig so that rounds=9 holds."},
		{"verbatim then payload", []string{recap + "\n\nThe task, verbatim:\nFix LoadConfig.\n\nThe payload that defines the task (read spec.md), verbatim:\n# Spec"},
			"Fix LoadConfig."},
		{"later request", []string{recap, "Now rename LoadConfig to Load."}, "Now rename LoadConfig to Load."},
		{"note in the recap", []string{recap + "\nNote:\nProgress note after 12 tool rounds.\nTask: Fix LoadConfig.\nEstablished so far:"}, "Fix LoadConfig."},
		{"nothing", []string{recap}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var msgs []any
			for _, u := range tc.users {
				msgs = append(msgs, user(u))
			}
			c, err := parseChat(mustJSON(t, map[string]any{"messages": msgs}))
			if err != nil {
				t.Fatal(err)
			}
			k := learn(c)
			if k.task != tc.want {
				t.Errorf("learn(%s).task = %q, want %q", tc.name, k.task, tc.want)
			}
			if note := k.note(); strings.Contains(note, "Task: [") {
				t.Errorf("note = %q, want the task, not the recap's opening", note)
			}
			if strings.Contains(tc.want, "rounds=9") && k.directive != 9 {
				t.Errorf("learn(%s).directive = %d, want 9 from the task in the recap", tc.name, k.directive)
			}
		})
	}
}

// The recap's wording the policy reads is contextwin's: a change there
// shows here.
func TestRecapWording(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "contextwin", "fold.go"))
	if err != nil {
		t.Fatal(err)
	}
	// fold.go writes the task's heading after a blank line.
	for _, s := range []string{recapOpening, strings.TrimPrefix(recapTask, "\n\n"), recapPayload} {
		quoted := strconv.Quote(s)
		if !strings.Contains(string(src), quoted[1:len(quoted)-1]) {
			t.Errorf("contextwin/fold.go does not contain %s: the recap's wording changed", quoted)
		}
	}
}
