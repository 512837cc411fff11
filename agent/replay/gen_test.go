package replay

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/contextwin"
)

// The session generator. Run
//
//	go test ./agent/replay -run TestGenerateSessions -generate
//
// to rebuild testdata/sessions from the repository's files at sourceRev:
// the same commit and the same seeds give the same bytes.

var generate = flag.Bool("generate", false, "rebuild testdata/sessions from the repository at sourceRev")

// sourceRev is the commit whose files the sessions read, grep, build and
// edit.
const sourceRev = "a1bd614c67d26180a9729233666c39d43e79e7b7"

const sessionsDir = "../../testdata/sessions"

func TestGenerateSessions(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rebuild testdata/sessions")
	}
	src, err := loadSource("../..", sourceRev)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range sessionSpecs {
		s := buildSession(src, spec)
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err := WriteRecording(zw, s); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(sessionsDir, spec.name+".jsonl.gz")
		if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		raw := 0
		for _, r := range s.Rounds {
			for _, m := range r.Messages() {
				raw += len(m.Content)
			}
		}
		t.Logf("%s: %d rounds, %d facts, %d bytes of messages, %d bytes gzipped", name, len(s.Rounds), len(s.Facts), raw, buf.Len())
	}
}

// source is the repository at one commit.
type source struct {
	rev   string
	paths []string          // sorted
	files map[string]string // text files only
	dirs  []string          // sorted, "" for the root
}

func loadSource(root, rev string) (*source, error) {
	cmd := exec.Command("git", "-C", root, "archive", "--format=tar", rev)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git archive %s: %w", rev, err)
	}
	src := &source{rev: rev, files: map[string]string{}}
	dirs := map[string]bool{"": true}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg || strings.HasPrefix(h.Name, "testdata/engine-captures/") || strings.Contains(h.Name, "/testdata/fuzz/") {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) || len(data) == 0 {
			continue
		}
		src.files[h.Name] = string(data)
		src.paths = append(src.paths, h.Name)
		for d := path.Dir(h.Name); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	sort.Strings(src.paths)
	for d := range dirs {
		src.dirs = append(src.dirs, d)
	}
	sort.Strings(src.dirs)
	return src, nil
}

// goFiles lists the Go files under dir ("" for all), tests included or not.
func (s *source) goFiles(dir string, tests bool) []string {
	var out []string
	for _, p := range s.paths {
		if !strings.HasSuffix(p, ".go") || (!tests && strings.HasSuffix(p, "_test.go")) {
			continue
		}
		if dir == "" || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	return out
}

// sessionSpec shapes one generated session.
type sessionSpec struct {
	name   string
	seed   uint64
	rounds int
	task   string
	// focus is the package the session works in; others are read now and
	// then.
	focus string
	// edits are the files the session changes most.
	edits []string
	// facts are planted in order: in the task, then in the results and
	// user messages listed in places.
	taskFacts []Fact
	places    []factPlace
	// users are the user's later messages, by round.
	users map[int]string
	// mix is how rounds are drawn after the opening: "" for the mixed
	// session of §7, "small" for many small results, "logs" for long
	// logs between reads.
	mix string
}

// factPlace plants a fact: in the user message of a round, or in the
// result of a small command (notes) or at the tail of a long log (log),
// at about the given round; or on the first lines of a long log
// (loghead).
type factPlace struct {
	round int
	where string // "user", "notes", "log", "loghead"
	fact  Fact
}

var sessionSpecs = []sessionSpec{
	{
		name:   "fold-orphans",
		seed:   0x5e551,
		rounds: 330,
		focus:  "contextwin",
		edits:  []string{"contextwin/fold.go", "contextwin/plan.go", "contextwin/session.go", "contextwin/plan_test.go"},
		task: "A long turn (one request, then dozens of tool rounds) sometimes leaves a tool result in the request after " +
			"its call was folded into the recap, and llama.cpp then rejects the chat template. Find where the fold " +
			"boundary is chosen in contextwin, fix it so a call and its results are never parted, and add a regression " +
			"test with a turn of at least 60 rounds. Keep go vet and go test -race ./... clean.",
		taskFacts: []Fact{
			{Key: "issue", Value: "reika-lsp/reika#412"},
			{Key: "branch", Value: "fix/fold-orphaned-results"},
			{Key: "engine_build", Value: "llama.cpp b4921 (qwen2.5-coder-14b-q5_k_m)"},
			{Key: "repro_window", Value: "REIKA_CONTEXT_WINDOW=16384"},
			{Key: "reviewer", Value: "@mika-tanaka"},
		},
		places: []factPlace{
			{3, "notes", Fact{Key: "failing_seed", Value: "fuzz seed 0x7f3a9c21"}},
			{9, "notes", Fact{Key: "orphan_msg", Value: "tool_call_id call_r37_1 has no matching call"}},
			{14, "log", Fact{Key: "first_bad_commit", Value: "5a0be75 (O(1) steady-state planning)"}},
			{21, "notes", Fact{Key: "template_error", Value: "Jinja: tool message must follow an assistant tool_calls message"}},
			{30, "notes", Fact{Key: "go_toolchain", Value: "go1.26.8 linux/amd64"}},
			{38, "user", Fact{Key: "deadline", Value: "before the v0.3.0 tag on Friday"}},
			{47, "notes", Fact{Key: "bench_baseline", Value: "BenchmarkPlanSteady 412 ns/op 0 allocs/op"}},
			{63, "log", Fact{Key: "race_flake", Value: "TestOverflowRetry/second_refusal under -race -count=20"}},
			{88, "notes", Fact{Key: "ci_job", Value: "ci/linux-race #1187"}},
			{130, "user", Fact{Key: "style_rule", Value: "failures read F(x) = got, want want"}},
			{175, "notes", Fact{Key: "golden_dir", Value: "testdata/contextwin/recap"}},
			{220, "user", Fact{Key: "release_note", Value: "fold never parts a tool result from its call"}},
			{265, "notes", Fact{Key: "perf_budget", Value: "Plan under 2 µs at 300 rounds"}},
		},
		users: map[int]string{
			38:  "While you are in there: the fix must not add a second pass over the session; Plan has to stay O(1) in the steady state.",
			130: "Please also make the regression test table-driven, one row per window (16k, 24k, 32k).",
			220: "Looks good so far. Before you finish, run the whole suite with -race once more and write a one-line release note.",
		},
	},
	{
		name:   "engine-cached-tokens",
		seed:   0xcac4ed,
		rounds: 345,
		focus:  "agent/engine",
		edits:  []string{"agent/engine/response.go", "agent/engine/stream.go", "agent/engine/types.go", "agent/engine/client_test.go"},
		task: "The REIKA_DEBUG prefix-cache line reports 0 cached tokens against vLLM and SGLang although their usage " +
			"carries prompt_tokens_details.cached_tokens. Make the engine client read cached tokens from every engine that " +
			"reports them (llama.cpp timings, vLLM and SGLang usage details, streamed or not), add tests from the captures " +
			"in testdata/engine-captures, and do not touch go-openai's types.",
		taskFacts: []Fact{
			{Key: "issue", Value: "reika-lsp/reika#388"},
			{Key: "branch", Value: "feat/cached-tokens-everywhere"},
			{Key: "vllm_version", Value: "vLLM 0.8.5 with --enable-prefix-caching"},
			{Key: "sglang_port", Value: "30000"},
			{Key: "owner", Value: "@jo-alvarez"},
		},
		places: []factPlace{
			{4, "notes", Fact{Key: "capture_file", Value: "testdata/engine-captures/vllm/chat_stream_usage.sse"}},
			{8, "notes", Fact{Key: "usage_field", Value: "usage.prompt_tokens_details.cached_tokens"}},
			{15, "log", Fact{Key: "failing_test", Value: "TestStreamUsage/vllm_cached_tokens"}},
			{24, "notes", Fact{Key: "sglang_quirk", Value: "SGLang sends cached_tokens only with stream_options.include_usage"}},
			{33, "notes", Fact{Key: "minus_one_rule", Value: "CachedTokens = -1 when the engine did not say"}},
			{44, "user", Fact{Key: "api_freeze", Value: "engine.Usage keeps its four fields"}},
			{57, "notes", Fact{Key: "llama_field", Value: "timings.cache_n"}},
			{71, "log", Fact{Key: "race_report", Value: "DATA RACE in (*call).stop vs transport.RoundTrip"}},
			{95, "notes", Fact{Key: "ollama_note", Value: "Ollama reports no cached tokens at all"}},
			{150, "user", Fact{Key: "doc_target", Value: "ARCHITECTURE.md section Requests"}},
			{190, "notes", Fact{Key: "proxy_env", Value: "GOPROXY=https://goproxy.corp.lan"}},
			{240, "user", Fact{Key: "merge_window", Value: "Thursday 14:00 UTC"}},
			{290, "notes", Fact{Key: "bench_stream", Value: "BenchmarkStreamDecode 38 µs/op"}},
		},
		users: map[int]string{
			44:  "One constraint I forgot: keep the public engine.Usage as it is, the LSP status code reads it.",
			150: "Also describe the new behaviour in ARCHITECTURE.md, one short paragraph.",
			240: "Nearly there. Please rerun the engine tests with -race -count=3 before you wrap up.",
		},
	},
	// The sessions of one kind of result each: many small ones, and long logs.
	{
		name:   "many-small",
		seed:   0x5a11,
		rounds: 640,
		mix:    "small",
		focus:  "agent/engine/sim",
		edits:  []string{"agent/engine/sim/policy.go", "agent/engine/sim/knowledge.go", "agent/engine/sim/reply.go", "agent/engine/sim/policy_test.go"},
		task: "The simulator's policy sometimes proposes an edit whose old_text occurs twice in the file, and the edit " +
			"tool then refuses it. Make the policy pick only lines that are unique on disk and in what it read, keep " +
			"its replies deterministic for a given conversation, and add a test with a file that repeats a declaration " +
			"line. Work in small steps: targeted searches and short reads, no whole-suite runs until the end.",
		taskFacts: []Fact{
			{Key: "issue", Value: "reika-lsp/reika#455"},
			{Key: "branch", Value: "fix/sim-unique-old-text"},
			{Key: "repro_seed", Value: "conversationSeed 0x2f61a9d3"},
			{Key: "edit_error", Value: "old_text occurs 2 times in lsp/server.go"},
			{Key: "reviewer", Value: "@noor-haddad"},
		},
		places: []factPlace{
			{6, "notes", Fact{Key: "dup_line", Value: "func (s *Server) handle(ctx context.Context) error"}},
			{19, "notes", Fact{Key: "policy_rounds", Value: "REIKA_SIM_ROUNDS=240"}},
			{33, "notes", Fact{Key: "test_dir", Value: "agent/engine/sim/testdata/dupdecl"}},
			{48, "user", Fact{Key: "no_new_deps", Value: "standard library only in agent/engine/sim"}},
			{64, "notes", Fact{Key: "go_toolchain", Value: "go1.26.8 linux/amd64"}},
			{82, "notes", Fact{Key: "bench_reply", Value: "BenchmarkReply 91 µs/op"}},
			{105, "notes", Fact{Key: "ci_job", Value: "ci/linux #2210"}},
			{140, "user", Fact{Key: "naming", Value: "call the helper uniqueLine, not findUnique"}},
			{190, "notes", Fact{Key: "flaky_test", Value: "TestPolicyEdits/crlf under -count=50"}},
			{260, "notes", Fact{Key: "golden_file", Value: "agent/engine/sim/testdata/policy.golden"}},
			{340, "user", Fact{Key: "release_note", Value: "the simulator never proposes an ambiguous edit"}},
			{430, "notes", Fact{Key: "perf_budget", Value: "reply under 150 µs on a 20000-file tree"}},
			{520, "notes", Fact{Key: "handoff", Value: "leave the crlf case to #461"}},
		},
		users: map[int]string{
			48:  "Reminder: no new dependencies in the simulator, it has to stay standard library only.",
			140: "Small thing: name the helper uniqueLine, it matches the rest of the file.",
			340: "Nearly done I think. Run the sim tests once with -count=3 and write a one-line release note.",
		},
	},
	{
		name:   "long-logs",
		seed:   0x1095,
		rounds: 320,
		mix:    "logs",
		focus:  "agent/config",
		edits:  []string{"agent/config/config.go", "agent/config/settings.go", "agent/config/config_test.go"},
		task: "CI fails on the config package after the settings layers were reordered, and the logs are long. Find " +
			"which layer now wins for reika.endpoint when both the workspace file and REIKA_ENDPOINT are set, restore " +
			"the documented order (flag, environment, workspace, user, default), and add a test for each pair of layers. " +
			"The CI logs put their run facts on their first lines and the verdict at the end.",
		taskFacts: []Fact{
			{Key: "issue", Value: "reika-lsp/reika#470"},
			{Key: "branch", Value: "fix/config-layer-order"},
			{Key: "ci_run", Value: "ci/linux-race #3021"},
			{Key: "layer_order", Value: "flag > environment > workspace > user > default"},
			{Key: "owner", Value: "@ines-okafor"},
		},
		places: []factPlace{
			{4, "loghead", Fact{Key: "runner", Value: "ubuntu-24.04 8 cores (runner-17)"}},
			{9, "loghead", Fact{Key: "go_cache", Value: "GOCACHE=/ci/cache/go-build (cold)"}},
			{14, "notes", Fact{Key: "bad_commit", Value: "c41d0e2 (settings: one struct per layer)"}},
			{22, "loghead", Fact{Key: "env_seen", Value: "REIKA_ENDPOINT=http://10.0.4.2:8080/v1"}},
			{31, "log", Fact{Key: "failing_test", Value: "TestLayers/workspace_over_env"}},
			{40, "user", Fact{Key: "freeze", Value: "config.Value keeps its two fields"}},
			{52, "loghead", Fact{Key: "seed", Value: "-shuffle=1733011200"}},
			{66, "log", Fact{Key: "race", Value: "DATA RACE in (*Settings).merge vs Load"}},
			{85, "loghead", Fact{Key: "timeout", Value: "-timeout=20m (raised from 10m)"}},
			{120, "user", Fact{Key: "doc_target", Value: "README section Settings"}},
			{165, "loghead", Fact{Key: "artifact", Value: "ci-artifacts/3021/config-race.log"}},
			{210, "log", Fact{Key: "coverage", Value: "agent/config coverage 87.4% of statements"}},
			{255, "user", Fact{Key: "merge_window", Value: "Wednesday 09:00 UTC"}},
		},
		users: map[int]string{
			40:  "One constraint: config.Value stays as it is, the LSP status code reads it.",
			120: "Please also document the order in the README, one short paragraph.",
			255: "Looks right. Rerun the config tests with -race before you wrap up.",
		},
	},
}

// The fixed prefix every session runs with.

const systemPrompt = `You are Reika, a coding agent working inside the user's editor through a language server.
You work in the repository described below. Use the tools to read files, search, run commands and edit;
never guess file contents you have not read. Prefer small, reviewable edits. After changing code, build and
run the relevant tests. When a command's output is long it may be cut or saved to a file: read that file in
pages rather than running the command again. Keep the user's constraints and exact values (paths, commands,
names) as they were given. When the task is done, say what you changed, how you verified it, and anything
left open.

Conventions of this repository:
- Go 1.26, module github.com/reika-lsp/reika; gofmt, go vet and staticcheck clean.
- Errors are lowercase, without trailing punctuation, wrapping with %w last.
- Tests are table-driven with t.Run; failures read "F(x) = got, want want"; no assertion libraries.
- contextwin and repomap are pure: no I/O, no clock, no goroutines.
- Only lsp/ imports go.lsp.dev/protocol; only agent/engine imports go-openai.`

var toolDefs = []engine.Tool{
	{Name: "read", Description: "Read a file. Returns its lines numbered from 1, or the range offset..offset+limit-1.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"file path relative to the repository root"},"offset":{"type":"integer","description":"first line, 1-based"},"limit":{"type":"integer","description":"number of lines"}},"required":["path"]}`)},
	{Name: "grep", Description: "Search file contents with a regular expression. Returns path:line:text for each match.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","description":"RE2 regular expression"},"path":{"type":"string","description":"directory or file to search, default the root"}},"required":["pattern"]}`)},
	{Name: "glob", Description: "List files matching a glob pattern, one path per line.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","description":"glob such as **/*_test.go"}},"required":["pattern"]}`)},
	{Name: "edit", Description: "Replace old_text, which must occur exactly once in the file, with new_text. Returns the diff.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"old_text":{"type":"string"},"new_text":{"type":"string"}},"required":["path","old_text","new_text"]}`)},
	{Name: "write", Description: "Create or overwrite a file with the given content.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)},
	{Name: "bash", Description: "Run a shell command in the repository root and return its combined output and exit status.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer","description":"seconds, default 120"}},"required":["command"]}`)},
}

var declRe = regexp.MustCompile(`(?m)^(?:func (?:\(\w+ \*?(\w+)\) )?(\w+)|type (\w+))`)

// repoMap lists the top-level declarations of the Go files, package by
// package: the whole map; a replay keeps its window's share.
func repoMap(src *source) string {
	var b strings.Builder
	for _, p := range src.goFiles("", false) {
		var names []string
		for _, m := range declRe.FindAllStringSubmatch(src.files[p], -1) {
			switch {
			case m[3] != "":
				names = append(names, "type "+m[3])
			case m[1] != "":
				names = append(names, m[1]+"."+m[2])
			default:
				names = append(names, m[2])
			}
		}
		if len(names) == 0 {
			continue
		}
		if len(names) > 14 {
			names = append(names[:14], fmt.Sprintf("… %d more", len(names)-14))
		}
		fmt.Fprintf(&b, "%s: %s\n", p, strings.Join(names, ", "))
	}
	return b.String()
}

// builder records one session.
type builder struct {
	src   *source
	spec  sessionSpec
	rng   *rand.Rand
	files map[string]string // the working copy: edits apply to it
	read  []string          // files read so far, first read first

	rounds  []Round
	facts   []Fact
	pending []factPlace // facts waiting for their place
	// calls of the round being built
	cur Round
}

func buildSession(src *source, spec sessionSpec) *Recording {
	b := &builder{src: src, spec: spec, rng: rand.New(rand.NewPCG(spec.seed, 0x7265696b61)), files: map[string]string{}}
	for k, v := range src.files {
		b.files[k] = v
	}
	b.pending = slices.Clone(spec.places)
	task := spec.task + "\n"
	for _, f := range spec.taskFacts {
		task += "\nFACT " + f.Key + ": " + f.Value
		b.facts = append(b.facts, Fact{Key: f.Key, Value: f.Value, Round: 1})
	}
	for n := 1; n <= spec.rounds; n++ {
		b.cur = Round{}
		switch {
		case n == 1:
			b.cur.User = task
		case spec.users[n] != "":
			b.cur.User = spec.users[n]
		}
		if b.cur.User != "" && n > 1 {
			for _, f := range b.due(n, "user") {
				b.cur.User += "\nFACT " + f.Key + ": " + f.Value
			}
		}
		if n == spec.rounds {
			b.final()
		} else {
			b.step(n)
		}
		b.rounds = append(b.rounds, b.cur)
	}
	return &Recording{
		Name: spec.name, Source: src.rev, System: systemPrompt, RepoMap: repoMap(src), Tools: toolDefs,
		Facts: b.facts, Rounds: b.rounds,
	}
}

// due takes the pending facts of kind where whose round has come.
func (b *builder) due(n int, where string) []Fact {
	var out []Fact
	b.pending = slices.DeleteFunc(b.pending, func(p factPlace) bool {
		if p.where != where || p.round > n {
			return false
		}
		out = append(out, p.fact)
		b.facts = append(b.facts, Fact{Key: p.fact.Key, Value: p.fact.Value, Round: n})
		return true
	})
	return out
}

func (b *builder) hasDue(n int, where string) bool {
	for _, p := range b.pending {
		if p.where == where && p.round <= n {
			return true
		}
	}
	return false
}

// say sets the assistant's text of the round.
func (b *builder) say(format string, args ...any) {
	b.cur.Assistant = contextwin.Message{Role: contextwin.Assistant, Content: fmt.Sprintf(format, args...)}
}

// call adds a tool call and its result to the round.
func (b *builder) call(n int, name string, args any, result string, p contextwin.Payload) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(args) // maps of strings and numbers always encode
	id := fmt.Sprintf("call_r%03d_%d", n, len(b.cur.Assistant.ToolCalls))
	b.cur.Assistant.ToolCalls = append(b.cur.Assistant.ToolCalls, contextwin.ToolCall{ID: id, Name: name, Arguments: strings.TrimSuffix(buf.String(), "\n")})
	b.cur.Results = append(b.cur.Results, contextwin.Message{Role: contextwin.Tool, ToolCallID: id, Content: result, Payload: p})
}

func (b *builder) pick(items []string) string { return items[b.rng.IntN(len(items))] }

// step makes round n: a fixed opening, then actions drawn by phase.
func (b *builder) step(n int) {
	focus := b.spec.focus
	switch n {
	case 1:
		b.say("I'll start with the layout of the repository.")
		b.listDir(n, "")
		return
	case 2:
		b.say("Let me see the files in %s.", focus)
		b.listDir(n, focus)
		return
	case 3:
		b.say("The package doc should say how the pieces fit.")
		b.readFile(n, focus+"/doc.go")
		b.notes(n)
		return
	}
	if b.hasDue(n, "notes") {
		b.notesRound(n)
		return
	}
	switch b.spec.mix {
	case "small":
		b.stepSmall(n)
		return
	case "logs":
		b.stepLogs(n)
		return
	}
	if b.hasDue(n, "log") {
		b.say("Running the tests to see the failure for myself.")
		b.testLog(n, true)
		return
	}
	explore := n < 45
	r := b.rng.Float64()
	switch {
	case explore && r < 0.34, !explore && r < 0.11:
		b.sayRead()
		b.readFile(n, b.readTarget())
	case explore && r < 0.50, !explore && r < 0.19:
		b.say("Searching for where that is used.")
		b.grepSmall(n)
	case explore && r < 0.58, !explore && r < 0.215:
		b.say("I need every place that touches this; a broad search first.")
		b.grepFlood(n)
	case explore && r < 0.63, !explore && r < 0.235:
		b.say("Listing the directory to find the related files.")
		b.listDir(n, b.pick(b.src.dirs))
	case explore && r < 0.70, !explore && r < 0.26:
		b.say("Reading that part of the file again, with the lines around it.")
		b.readRange(n)
	case explore && r < 0.76:
		b.say("Let me read this and search for its callers at the same time.")
		b.readFile(n, b.readTarget())
		b.grepSmall(n)
	case r < 0.275:
		b.say("Running the whole suite to see where we stand.")
		b.testLog(n, false)
	case r < 0.285:
		b.say("Building everything with -x to see what the toolchain does with the change.")
		b.buildLog(n)
	case r < 0.68:
		b.editRound(n)
	case r < 0.83:
		b.say("Running the focused test.")
		b.smallTest(n)
	case r < 0.985:
		b.smallCommand(n)
	default:
		b.writeTest(n)
	}
}

func (b *builder) sayRead() {
	b.say("%s", b.pick([]string{
		"Reading the file to see how it is put together.",
		"I'll read this file whole before changing anything.",
		"Let me look at the implementation.",
		"The tests for this live in the next file; reading it.",
		"Checking how this file handles it.",
	}))
}

// readTarget picks a file to read: the focus package most of the time.
func (b *builder) readTarget() string {
	var pool []string
	if b.rng.Float64() < 0.7 {
		pool = b.src.goFiles(b.spec.focus, true)
	} else {
		pool = b.src.goFiles("", true)
	}
	var fit []string
	for _, p := range pool {
		if n := strings.Count(b.files[p], "\n"); n >= 100 {
			fit = append(fit, p)
		}
	}
	return b.pick(fit)
}

func numbered(lines []string, from int) string {
	var sb strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&sb, "%6d\t%s\n", from+i, l)
	}
	return sb.String()
}

func fileLines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// readFile reads a file whole, or its first 1000 lines when it is longer.
func (b *builder) readFile(n int, p string) {
	lines := fileLines(b.files[p])
	total := len(lines)
	args := map[string]any{"path": p}
	if total > 1000 {
		lines = lines[:1000]
		args["offset"], args["limit"] = 1, 1000
	}
	if !slices.Contains(b.read, p) {
		b.read = append(b.read, p)
	}
	b.call(n, "read", args, numbered(lines, 1), contextwin.Payload{Kind: contextwin.Read, Path: p, From: 1, To: len(lines), Total: total})
}

// readRange reads 40–160 lines of a file read before.
func (b *builder) readRange(n int) {
	p := b.readTarget()
	if len(b.read) > 0 {
		p = b.read[b.rng.IntN(len(b.read))]
	}
	lines := fileLines(b.files[p])
	count := min(len(lines), 40+b.rng.IntN(120))
	from := 1 + b.rng.IntN(len(lines)-count+1)
	b.call(n, "read", map[string]any{"path": p, "offset": from, "limit": count}, numbered(lines[from-1:from-1+count], from),
		contextwin.Payload{Kind: contextwin.Read, Path: p, From: from, To: from + count - 1, Total: len(lines)})
}

var identRe = regexp.MustCompile(`\b[a-z]+[A-Z][A-Za-z]+\b|\b[A-Z][a-z]+[A-Z][A-Za-z]+\b`)

// grepSmall searches for an identifier of a file read: a few matches.
func (b *builder) grepSmall(n int) {
	src := b.files[b.readTarget()]
	ids := identRe.FindAllString(src, -1)
	pattern := "Plan"
	for range 20 {
		pattern = b.pick(ids)
		if c := len(b.grep(pattern, "", 1000)); c >= 2 && c <= 40 {
			break
		}
	}
	b.call(n, "grep", map[string]any{"pattern": pattern}, b.grepText(pattern, ""), contextwin.Payload{Kind: contextwin.Search, Path: pattern})
}

var floods = []string{`err != nil`, `return `, `func \(`, `:= `, `t\.Errorf`, `if `, `json:"`, `fmt\.`, `strings\.`, `\bs\.`}

// grepFlood searches for something everywhere: hundreds of matches.
func (b *builder) grepFlood(n int) {
	pattern := b.pick(floods)
	dir := ""
	if b.rng.Float64() < 0.5 {
		dir = b.spec.focus
	}
	args := map[string]any{"pattern": pattern}
	if dir != "" {
		args["path"] = dir
	}
	b.call(n, "grep", args, b.grepText(pattern, dir), contextwin.Payload{Kind: contextwin.Search, Path: pattern})
}

func (b *builder) grep(pattern, dir string, limit int) []string {
	re := regexp.MustCompile(pattern)
	var out []string
	for _, p := range b.src.paths {
		if dir != "" && !strings.HasPrefix(p, dir+"/") {
			continue
		}
		if !strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, ".md") {
			continue
		}
		for i, l := range fileLines(b.files[p]) {
			if re.MatchString(l) {
				out = append(out, fmt.Sprintf("%s:%d:%s", p, i+1, l))
				if len(out) == limit {
					return out
				}
			}
		}
	}
	return out
}

// maxMatches is where the grep tool stops, as agents' search tools do.
const maxMatches = 400

func (b *builder) grepText(pattern, dir string) string {
	m := b.grep(pattern, dir, maxMatches+1)
	if len(m) == 0 {
		return "No matches found."
	}
	if len(m) > maxMatches {
		return strings.Join(m[:maxMatches], "\n") + fmt.Sprintf("\n[stopped after %d matches; narrow the pattern or the path to see the rest]\n", maxMatches)
	}
	return strings.Join(m, "\n") + "\n"
}

// listDir lists a directory as ls -la does.
func (b *builder) listDir(n int, dir string) {
	var entries []string
	seen := map[string]bool{}
	for _, p := range b.src.paths {
		rel := p
		if dir != "" {
			var ok bool
			if rel, ok = strings.CutPrefix(p, dir+"/"); !ok {
				continue
			}
		}
		name, _, isDir := strings.Cut(rel, "/")
		if seen[name] {
			continue
		}
		seen[name] = true
		if isDir {
			entries = append(entries, fmt.Sprintf("drwxr-xr-x  %2d dev dev  4096 Nov 29 21:17 %s", 2+b.rng.IntN(6), name))
		} else {
			entries = append(entries, fmt.Sprintf("-rw-r--r--   1 dev dev %5d Nov 29 21:17 %s", len(b.files[p]), name))
		}
	}
	out := fmt.Sprintf("total %d\ndrwxr-xr-x  %d dev dev  4096 Nov 29 21:17 .\ndrwxr-xr-x  9 dev dev  4096 Nov 29 21:17 ..\n",
		4*len(entries), 2+len(entries)) + strings.Join(entries, "\n") + "\n"
	cmd := "ls -la"
	if dir != "" {
		cmd += " " + dir
	}
	b.call(n, "bash", map[string]any{"command": cmd}, out, contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}

// notes is a small result that carries the facts due: an issue, a
// scratch file, an environment dump.
func (b *builder) notes(n int) {
	facts := b.due(n, "notes")
	if len(facts) == 0 {
		return
	}
	cmd := b.pick([]string{"cat .reika/notes.md", "gh issue view --comments", "cat ../handoff.txt", "git log -1 --format=%B"})
	var sb strings.Builder
	sb.WriteString(b.pick([]string{"Notes kept while reproducing the bug:\n", "Handoff from the previous session:\n", "From the issue thread:\n"}))
	for _, f := range facts {
		sb.WriteString("FACT " + f.Key + ": " + f.Value + "\n")
	}
	sb.WriteString(b.pick([]string{"(see the thread for the full discussion)\n", "-- end of notes --\n", "Nothing else recorded.\n"}))
	b.call(n, "bash", map[string]any{"command": cmd}, sb.String(), contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}

func (b *builder) notesRound(n int) {
	b.say("%s", b.pick([]string{
		"The issue thread may have details the task does not; checking.",
		"Let me check the notes kept for this task.",
		"Looking at what was recorded about this before.",
	}))
	b.notes(n)
}

var subtestWords = []string{"empty", "one_round", "long_turn", "cut", "shed", "fold", "note", "emergency", "no_window",
	"16k", "24k", "32k", "128k", "stream", "whole", "refused", "retry", "cached", "vllm", "llamacpp", "ollama", "cjk", "huge"}

// testsByPackage lists the test functions of each package directory.
func (b *builder) testsByPackage() (dirs []string, tests map[string][]string) {
	tests = map[string][]string{}
	re := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	for _, p := range b.src.goFiles("", true) {
		if !strings.HasSuffix(p, "_test.go") {
			continue
		}
		d := path.Dir(p)
		for _, m := range re.FindAllStringSubmatch(b.files[p], -1) {
			tests[d] = append(tests[d], m[1])
		}
	}
	for d := range tests {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs, tests
}

// testLog is go test -v -race over every package: thousands of lines,
// nearly all of them passing, and a failure at the end.
func (b *builder) testLog(n int, withFact bool) {
	dirs, tests := b.testsByPackage()
	var sb strings.Builder
	lines := 0
	w := func(format string, args ...any) {
		fmt.Fprintf(&sb, format+"\n", args...)
		lines++
	}
	failDir := b.spec.focus
	var failTest string
	for _, d := range dirs {
		if d == failDir {
			continue
		}
		b.packageLog(w, d, tests[d])
	}
	ts := tests[failDir]
	if len(ts) == 0 {
		for _, d := range dirs {
			if len(tests[d]) > 0 {
				failDir, ts = d, tests[d]
			}
		}
	}
	failTest = ts[b.rng.IntN(len(ts))]
	for _, t := range ts {
		if t != failTest {
			b.testRun(w, t)
		}
	}
	sub := b.pick(subtestWords)
	w("=== RUN   %s", failTest)
	w("=== RUN   %s/%s", failTest, sub)
	w("    %s_test.go:%d: Plan(%s) = request of %d messages with an orphaned tool result, want none", path.Base(failDir), 40+b.rng.IntN(300), sub, 20+b.rng.IntN(80))
	w("--- FAIL: %s/%s (0.%02ds)", failTest, sub, b.rng.IntN(100))
	w("--- FAIL: %s (0.%02ds)", failTest, b.rng.IntN(100))
	w("FAIL")
	if withFact {
		for _, f := range b.due(n, "log") {
			w("FACT %s: %s", f.Key, f.Value)
		}
	}
	w("FAIL\tgithub.com/reika-lsp/reika/%s\t%d.%03ds", failDir, 1+b.rng.IntN(9), b.rng.IntN(1000))
	w("FAIL")
	cmd := "go test -race -v -count=1 ./..."
	b.call(n, "bash", map[string]any{"command": cmd, "timeout": 600}, sb.String()+"exit status 1\n", contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}

func (b *builder) packageLog(w func(string, ...any), d string, ts []string) {
	for _, t := range ts {
		b.testRun(w, t)
	}
	if len(ts) == 0 {
		w("?   \tgithub.com/reika-lsp/reika/%s\t[no test files]", d)
		return
	}
	w("PASS")
	w("ok  \tgithub.com/reika-lsp/reika/%s\t%d.%03ds", d, 1+b.rng.IntN(30), b.rng.IntN(1000))
}

func (b *builder) testRun(w func(string, ...any), t string) {
	w("=== RUN   %s", t)
	if b.rng.Float64() < 0.3 {
		w("=== PAUSE %s", t)
		w("=== CONT  %s", t)
	}
	subs := b.rng.IntN(14)
	for i := range subs {
		s := fmt.Sprintf("%s_%d", b.pick(subtestWords), i)
		w("=== RUN   %s/%s", t, s)
		if b.rng.Float64() < 0.15 {
			w("    %s: window %d, estimate %d, prompt %d", strings.ToLower(t[4:min(len(t), 14)])+"_test.go:"+fmt.Sprint(20+b.rng.IntN(400)),
				16000+1000*b.rng.IntN(100), b.rng.IntN(30000), b.rng.IntN(30000))
		}
		w("--- PASS: %s/%s (0.%02ds)", t, s, b.rng.IntN(20))
	}
	w("--- PASS: %s (%d.%02ds)", t, b.rng.IntN(2), b.rng.IntN(100))
}

var stdPackages = []string{"internal/goarch", "internal/abi", "internal/cpu", "internal/bytealg", "internal/byteorder",
	"internal/chacha8rand", "internal/coverage/rtcov", "internal/godebugs", "internal/goexperiment", "internal/goos",
	"internal/profilerecord", "internal/runtime/atomic", "internal/runtime/math", "internal/runtime/sys", "internal/stringslite",
	"runtime", "internal/race", "sync/atomic", "internal/sync", "sync", "errors", "io", "unicode", "unicode/utf8", "bytes",
	"strings", "math", "math/bits", "strconv", "internal/itoa", "slices", "sort", "internal/fmtsort", "reflect", "os",
	"internal/poll", "internal/syscall/unix", "syscall", "time", "io/fs", "path", "path/filepath", "fmt", "context",
	"encoding", "encoding/binary", "encoding/base64", "encoding/json", "hash", "hash/fnv", "math/rand/v2", "regexp/syntax",
	"regexp", "bufio", "net/netip", "net", "net/url", "mime", "crypto", "crypto/tls", "net/http", "log", "flag",
	"text/tabwriter", "compress/gzip", "compress/flate", "os/signal", "os/exec", "unicode/utf16"}

// buildLog is go build -x -a: thousands of lines of toolchain noise and a
// compile error at the end.
func (b *builder) buildLog(n int) {
	var sb strings.Builder
	work := fmt.Sprintf("/tmp/go-build%d", 100000000+b.rng.IntN(900000000))
	fmt.Fprintf(&sb, "WORK=%s\n", work)
	pkgs := slices.Clone(stdPackages)
	dirs, _ := b.testsByPackage()
	for _, d := range dirs {
		pkgs = append(pkgs, "github.com/reika-lsp/reika/"+d)
	}
	for i, p := range pkgs {
		id := fmt.Sprintf("b%03d", i+1)
		fmt.Fprintf(&sb, "mkdir -p $WORK/%s/\n", id)
		fmt.Fprintf(&sb, "cat >/tmp/go-build-cfg/%s/importcfg << 'EOF' # internal\n# import config\n", id)
		deps := 3 + b.rng.IntN(12)
		for j := 0; j < deps && j < i; j++ {
			q := pkgs[b.rng.IntN(i)]
			fmt.Fprintf(&sb, "packagefile %s=$WORK/b%03d/_pkg_.a\n", q, 1+b.rng.IntN(i))
		}
		sb.WriteString("EOF\n")
		fmt.Fprintf(&sb, "cd %s\n", "/work/reika")
		fmt.Fprintf(&sb, "/usr/local/go/pkg/tool/linux_amd64/compile -o $WORK/%s/_pkg_.a -trimpath \"$WORK/%s=>\" -p %s -lang=go1.26 -complete -buildid %x/%x -goversion go1.26.8 -c=2 -nolocalimports -importcfg $WORK/%s/importcfg -pack ./*.go\n",
			id, id, p, b.rng.Uint32(), b.rng.Uint32(), id)
		fmt.Fprintf(&sb, "/usr/local/go/pkg/tool/linux_amd64/buildid -w $WORK/%s/_pkg_.a # internal\n", id)
		fmt.Fprintf(&sb, "cp $WORK/%s/_pkg_.a /root/.cache/go-build/%02x/%x-d # internal\n", id, b.rng.IntN(256), b.rng.Uint64())
	}
	f := b.spec.edits[b.rng.IntN(len(b.spec.edits))]
	fmt.Fprintf(&sb, "# github.com/reika-lsp/reika/%s\n", path.Dir(f))
	fmt.Fprintf(&sb, "%s:%d:%d: undefined: keepGroup\n", f, 30+b.rng.IntN(200), 2+b.rng.IntN(20))
	fmt.Fprintf(&sb, "%s:%d:%d: too many arguments in call to s.fold\n", f, 30+b.rng.IntN(200), 2+b.rng.IntN(20))
	cmd := "go build -x -a ./... 2>&1"
	b.call(n, "bash", map[string]any{"command": cmd}, sb.String()+"exit status 1\n", contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}

// editRound changes two to four lines of a file the session edits.
func (b *builder) editRound(n int) {
	p := b.spec.edits[b.rng.IntN(len(b.spec.edits))]
	lines := fileLines(b.files[p])
	at := b.rng.IntN(len(lines) - 4)
	for range 50 {
		if strings.TrimSpace(lines[at]) != "" && !strings.HasPrefix(lines[at], "//") {
			break
		}
		at = b.rng.IntN(len(lines) - 4)
	}
	k := 2 + b.rng.IntN(3)
	old := lines[at : at+k]
	indent := old[0][:len(old[0])-len(strings.TrimLeft(old[0], "\t"))]
	var repl []string
	switch b.rng.IntN(3) {
	case 0:
		repl = append([]string{indent + "// " + b.pick([]string{
			"Keep the call and its results together.", "The boundary snaps back to the start of the group.",
			"Cached tokens come from the usage details when the engine gives them.", "Never parted: see the regression test.",
			"A second pass would break the O(1) steady state."})}, old...)
	case 1:
		repl = slices.Clone(old)
		repl[len(repl)-1] += " // reviewed"
	default:
		repl = slices.Clone(old)
		repl = append(repl[:1], append([]string{indent + "_ = 0 // placeholder while the fix is in progress"}, repl[1:]...)...)
	}
	oldText, newText := strings.Join(old, "\n"), strings.Join(repl, "\n")
	nl := append(append(slices.Clone(lines[:at]), repl...), lines[at+k:]...)
	b.files[p] = strings.Join(nl, "\n") + "\n"
	var d strings.Builder
	fmt.Fprintf(&d, "--- a/%s\n+++ b/%s\n@@ -%d,%d +%d,%d @@\n", p, p, at+1, k, at+1, len(repl))
	for _, l := range old {
		d.WriteString("-" + l + "\n")
	}
	for _, l := range repl {
		d.WriteString("+" + l + "\n")
	}
	b.say("%s %s.", b.pick([]string{"Making the change in", "Adjusting", "A small edit to", "Fixing that spot in", "Updating"}), p)
	b.call(n, "edit", map[string]any{"path": p, "old_text": oldText, "new_text": newText}, d.String(), contextwin.Payload{Kind: contextwin.Diff, Path: p})
}

// smallTest runs one test: ok, or a short failure.
func (b *builder) smallTest(n int) {
	dirs, tests := b.testsByPackage()
	d := b.spec.focus
	if b.rng.Float64() < 0.2 {
		d = b.pick(dirs)
	}
	if len(tests[d]) == 0 {
		d = dirs[0]
	}
	t := b.pick(tests[d])
	cmd := fmt.Sprintf("go test ./%s/ -run '^%s$' -count=1", d, t)
	var out string
	if b.rng.Float64() < 0.55 {
		out = fmt.Sprintf("ok  \tgithub.com/reika-lsp/reika/%s\t0.%03ds\n", d, b.rng.IntN(1000))
	} else {
		sub := b.pick(subtestWords)
		out = fmt.Sprintf("--- FAIL: %s (0.%02ds)\n    --- FAIL: %s/%s (0.00s)\n        %s_test.go:%d: got %d messages after the fold, want %d\nFAIL\nFAIL\tgithub.com/reika-lsp/reika/%s\t0.%03ds\nFAIL\n",
			t, b.rng.IntN(100), t, sub, path.Base(d), 20+b.rng.IntN(300), b.rng.IntN(40), b.rng.IntN(40), d, b.rng.IntN(1000))
	}
	b.call(n, "bash", map[string]any{"command": cmd}, out, contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}

// smallCommand is a command with a few lines of output.
func (b *builder) smallCommand(n int) {
	edited := b.spec.edits
	type cmdOut struct{ cmd, out, say string }
	opts := []cmdOut{
		{"go vet ./...", "", "Vetting everything."},
		{"gofmt -l .", "", "Checking formatting."},
		{"go build ./...", "", "Making sure it builds."},
		{"git status --short", " M " + strings.Join(edited[:1+b.rng.IntN(len(edited))], "\n M ") + "\n", "Checking what has changed so far."},
		{"git diff --stat", fmt.Sprintf(" %s | %d ++++--\n 1 file changed, %d insertions(+), %d deletions(-)\n", b.pick(edited), 2+b.rng.IntN(20), 1+b.rng.IntN(12), b.rng.IntN(8)), "How big is the change now?"},
		{"git log --oneline -5", "ef9ae19 sim: the note lists the facts planted in the conversation, as a careful model would\n1a82ae7 agent: the fixed prefix, and requests built from contextwin's view\ndf2e55f agent/tools: the result, proposal and front-end hook types\ne4add7e contextwin: a package doc that shows the session loop\n75f4789 contextwin: gofmt\n", "Recent history, to see what touched this last."},
		{fmt.Sprintf("wc -l %s", b.pick(edited)), fmt.Sprintf("%d %s\n", 100+b.rng.IntN(600), b.pick(edited)), "How long is the file now?"},
		{"go test ./" + b.spec.focus + "/ -count=1", fmt.Sprintf("ok  \tgithub.com/reika-lsp/reika/%s\t%d.%03ds\n", b.spec.focus, b.rng.IntN(5), b.rng.IntN(1000)), "Running the package tests."},
	}
	c := opts[b.rng.IntN(len(opts))]
	out := c.out
	if out == "" {
		out = "(no output; exit status 0)\n"
	}
	b.say("%s", c.say)
	b.call(n, "bash", map[string]any{"command": c.cmd}, out, contextwin.Payload{Kind: contextwin.Command, Path: c.cmd})
}

// writeTest writes a new test file of 30–70 lines.
func (b *builder) writeTest(n int) {
	d := b.spec.focus
	p := fmt.Sprintf("%s/regress_%d_test.go", d, n)
	var sb strings.Builder
	fmt.Fprintf(&sb, "package %s\n\nimport \"testing\"\n\n// A turn of many rounds keeps every result beside its call.\nfunc TestRegress%d(t *testing.T) {\n", path.Base(d), n)
	sb.WriteString("\tfor _, tc := range []struct {\n\t\tname   string\n\t\twindow int\n\t\trounds int\n\t}{\n")
	rows := 6 + b.rng.IntN(12)
	for i := range rows {
		fmt.Fprintf(&sb, "\t\t{%q, %d, %d},\n", fmt.Sprintf("%s_%d", b.pick(subtestWords), i), 16000+8000*b.rng.IntN(3), 40+b.rng.IntN(80))
	}
	sb.WriteString("\t} {\n\t\tt.Run(tc.name, func(t *testing.T) {\n\t\t\tgot := orphans(replayTurn(tc.window, tc.rounds))\n\t\t\tif got != 0 {\n\t\t\t\tt.Errorf(\"orphans(%s) = %d, want 0\", tc.name, got)\n\t\t\t}\n\t\t})\n\t}\n}\n")
	content := sb.String()
	b.files[p] = content
	b.say("Writing the regression test.")
	b.call(n, "write", map[string]any{"path": p, "content": content}, fmt.Sprintf("Wrote %d lines (%d bytes) to %s.\n", strings.Count(content, "\n"), len(content), p),
		contextwin.Payload{Kind: contextwin.Other, Path: p})
}

func (b *builder) final() {
	b.cur.Assistant = contextwin.Message{Role: contextwin.Assistant, Content: fmt.Sprintf(
		"Done. I changed %s; the regression test covers turns of 60 rounds and more, and go vet and go test -race ./... pass. "+
			"Nothing is left open on my side.", strings.Join(b.spec.edits, ", "))}
}

// smallMax is the largest result of the many-small session.
const smallMax = 6000

// stepSmall makes round n of a session of small results: targeted
// searches, short reads, short commands, small edits, listings.
func (b *builder) stepSmall(n int) {
	r := b.rng.Float64()
	switch {
	case r < 0.22:
		b.say("Searching for exactly that name.")
		if !b.grepTargeted(n) {
			b.readSmall(n)
		}
	case r < 0.46:
		b.say("%s", b.pick([]string{"Reading just that part of the file.", "A short look at the lines around it.",
			"Checking the few lines that matter here."}))
		b.readSmall(n)
	case r < 0.56:
		b.say("Running the focused test.")
		b.smallTest(n)
	case r < 0.68:
		b.smallCommand(n)
	case r < 0.93:
		b.editRound(n)
	case r < 0.97:
		b.say("Listing the package to find the related files.")
		b.listDir(n, b.spec.focus)
	default:
		b.writeTest(n)
	}
}

// readSmall reads 15–60 lines of a file of the focus package, fewer when
// the lines are long: never more than smallMax bytes.
func (b *builder) readSmall(n int) {
	var pool []string
	for _, p := range b.src.goFiles(b.spec.focus, true) {
		if strings.Count(b.files[p], "\n") >= 60 {
			pool = append(pool, p)
		}
	}
	p := b.pick(pool)
	lines := fileLines(b.files[p])
	count := 15 + b.rng.IntN(46)
	from := 1 + b.rng.IntN(len(lines)-count+1)
	text := numbered(lines[from-1:from-1+count], from)
	for len(text) > smallMax {
		count /= 2
		text = numbered(lines[from-1:from-1+count], from)
	}
	b.call(n, "read", map[string]any{"path": p, "offset": from, "limit": count}, text,
		contextwin.Payload{Kind: contextwin.Read, Path: p, From: from, To: from + count - 1, Total: len(lines)})
}

// grepTargeted searches for an identifier of the focus package with 2–25
// matches and a result under smallMax; false when none was found.
func (b *builder) grepTargeted(n int) bool {
	files := b.src.goFiles(b.spec.focus, true)
	for range 20 {
		ids := identRe.FindAllString(b.files[b.pick(files)], -1)
		if len(ids) == 0 {
			continue
		}
		pattern := b.pick(ids)
		dir := ""
		if b.rng.Float64() < 0.5 {
			dir = b.spec.focus
		}
		m := b.grep(pattern, dir, 26)
		if len(m) < 2 || len(m) > 25 {
			continue
		}
		text := b.grepText(pattern, dir)
		if len(text) > smallMax {
			continue
		}
		args := map[string]any{"pattern": pattern}
		if dir != "" {
			args["path"] = dir
		}
		b.call(n, "grep", args, text, contextwin.Payload{Kind: contextwin.Search, Path: pattern})
		return true
	}
	return false
}

// stepLogs makes round n of a session of long logs between reads and
// edits.
func (b *builder) stepLogs(n int) {
	if b.hasDue(n, "loghead") || b.hasDue(n, "log") {
		b.say("Running the suite again; the CI log says what it ran with at the top.")
		b.longLog(n)
		return
	}
	r := b.rng.Float64()
	switch {
	case r < 0.07:
		b.say("%s", b.pick([]string{"Running the whole suite with -race.", "Building everything verbosely to see the failure.",
			"Let me see the full CI log again."}))
		b.longLog(n)
	case r < 0.32:
		b.sayRead()
		b.readFile(n, b.readTarget())
	case r < 0.42:
		b.say("Reading that part of the file again, with the lines around it.")
		b.readRange(n)
	case r < 0.52:
		b.say("Searching for where that is used.")
		b.grepSmall(n)
	case r < 0.76:
		b.editRound(n)
	case r < 0.86:
		b.say("Running the focused test.")
		b.smallTest(n)
	default:
		b.smallCommand(n)
	}
}

// longLog is a CI log of 50–200 KB: a go test -race -v run or a go build
// -x, its run facts on its first lines (the facts due at its head), the
// verdict and the facts due at its tail on its last.
func (b *builder) longLog(n int) {
	target := 50<<10 + b.rng.IntN(145<<10)
	var sb strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&sb, format+"\n", args...) }
	for _, f := range b.due(n, "loghead") {
		w("FACT %s: %s", f.Key, f.Value)
	}
	w("ci: job %d, attempt %d, started 2026-11-29T21:%02d:%02dZ", 3000+b.rng.IntN(100), 1+b.rng.IntN(3), b.rng.IntN(60), b.rng.IntN(60))
	dirs, tests := b.testsByPackage()
	build := b.rng.IntN(3) == 0
	var cmd string
	if build {
		cmd = "go build -x -a ./... 2>&1 | tee ci-build.log"
		w("WORK=/tmp/go-build%d", 100000000+b.rng.IntN(900000000))
		for i := 0; sb.Len() < target; i++ {
			p := stdPackages[i%len(stdPackages)]
			id := fmt.Sprintf("b%03d", i+1)
			w("mkdir -p $WORK/%s/", id)
			w("cat >$WORK/%s/importcfg << 'EOF' # internal", id)
			for range 3 + b.rng.IntN(10) {
				w("packagefile %s=$WORK/b%03d/_pkg_.a", b.pick(stdPackages), 1+b.rng.IntN(i+1))
			}
			w("EOF")
			w("/usr/local/go/pkg/tool/linux_amd64/compile -o $WORK/%s/_pkg_.a -trimpath \"$WORK/%s=>\" -p %s -lang=go1.26 -complete -buildid %x/%x -goversion go1.26.8 -c=2 -importcfg $WORK/%s/importcfg -pack ./*.go",
				id, id, p, b.rng.Uint32(), b.rng.Uint32(), id)
			w("cp $WORK/%s/_pkg_.a /root/.cache/go-build/%02x/%x-d # internal", id, b.rng.IntN(256), b.rng.Uint64())
		}
		f := b.pick(b.spec.edits)
		w("# github.com/reika-lsp/reika/%s", path.Dir(f))
		w("%s:%d:%d: undefined: mergeLayer", f, 30+b.rng.IntN(200), 2+b.rng.IntN(20))
	} else {
		cmd = "go test -race -v -count=1 ./... 2>&1 | tee ci-test.log"
		for i := 0; sb.Len() < target; i++ {
			d := dirs[i%len(dirs)]
			b.packageLog(w, d, tests[d])
		}
		ts := tests[b.spec.focus]
		t := b.pick(ts)
		w("=== RUN   %s", t)
		w("    %s_test.go:%d: Load() endpoint = %q, want %q", path.Base(b.spec.focus), 40+b.rng.IntN(300), "http://127.0.0.1:8080/v1", "http://10.0.4.2:8080/v1")
		w("--- FAIL: %s (0.%02ds)", t, b.rng.IntN(100))
		w("FAIL\tgithub.com/reika-lsp/reika/%s\t%d.%03ds", b.spec.focus, 1+b.rng.IntN(9), b.rng.IntN(1000))
	}
	for _, f := range b.due(n, "log") {
		w("FACT %s: %s", f.Key, f.Value)
	}
	w("FAIL")
	b.call(n, "bash", map[string]any{"command": cmd, "timeout": 900}, sb.String()+"exit status 1\n", contextwin.Payload{Kind: contextwin.Command, Path: cmd})
}
