package synth

import (
	"github.com/reika-lsp/reika/agent/replay"
)

// recipe shapes one generated session.
type recipe struct {
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
	taskFacts []replay.Fact
	places    []factPlace
	// users are the user's later messages, by round.
	users map[int]string
	// mix is how rounds are drawn after the opening: "" for the mixed
	// session of §7, "small" for many small results, "logs" for long
	// logs between reads, "unseen" for a session of unseen.go.
	mix string

	// An unseen session's: the system prompt ("" for this repository's),
	// the tree it works in, the big file its task names and the rounds
	// that read it whole, and each round's kind (modes[n]: "tiny",
	// "small", "mixed", "logs").
	system   string
	tree     string
	big      string
	bigReads map[int]bool
	modes    []string
}

// factPlace plants a fact: in the user message of a round, or in the
// result of a small command (notes) or at the tail of a long log (log),
// at about the given round; or on the first lines of a long log
// (loghead).
type factPlace struct {
	round int
	where string // "user", "notes", "short", "log", "loghead"
	fact  replay.Fact
}

// recipes are the four sessions of testdata/sessions, in the README's order.
var recipes = []recipe{
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
		taskFacts: []replay.Fact{
			{Key: "issue", Value: "reika-lsp/reika#412"},
			{Key: "branch", Value: "fix/fold-orphaned-results"},
			{Key: "engine_build", Value: "llama.cpp b4921 (qwen2.5-coder-14b-q5_k_m)"},
			{Key: "repro_window", Value: "REIKA_CONTEXT_WINDOW=16384"},
			{Key: "reviewer", Value: "@mika-tanaka"},
		},
		places: []factPlace{
			{3, "notes", replay.Fact{Key: "failing_seed", Value: "fuzz seed 0x7f3a9c21"}},
			{9, "notes", replay.Fact{Key: "orphan_msg", Value: "tool_call_id call_r37_1 has no matching call"}},
			{14, "log", replay.Fact{Key: "first_bad_commit", Value: "5a0be75 (O(1) steady-state planning)"}},
			{21, "notes", replay.Fact{Key: "template_error", Value: "Jinja: tool message must follow an assistant tool_calls message"}},
			{30, "notes", replay.Fact{Key: "go_toolchain", Value: "go1.26.8 linux/amd64"}},
			{38, "user", replay.Fact{Key: "deadline", Value: "before the v0.3.0 tag on Friday"}},
			{47, "notes", replay.Fact{Key: "bench_baseline", Value: "BenchmarkPlanSteady 412 ns/op 0 allocs/op"}},
			{63, "log", replay.Fact{Key: "race_flake", Value: "TestOverflowRetry/second_refusal under -race -count=20"}},
			{88, "notes", replay.Fact{Key: "ci_job", Value: "ci/linux-race #1187"}},
			{130, "user", replay.Fact{Key: "style_rule", Value: "failures read F(x) = got, want want"}},
			{175, "notes", replay.Fact{Key: "golden_dir", Value: "testdata/contextwin/recap"}},
			{220, "user", replay.Fact{Key: "release_note", Value: "fold never parts a tool result from its call"}},
			{265, "notes", replay.Fact{Key: "perf_budget", Value: "Plan under 2 µs at 300 rounds"}},
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
		taskFacts: []replay.Fact{
			{Key: "issue", Value: "reika-lsp/reika#388"},
			{Key: "branch", Value: "feat/cached-tokens-everywhere"},
			{Key: "vllm_version", Value: "vLLM 0.8.5 with --enable-prefix-caching"},
			{Key: "sglang_port", Value: "30000"},
			{Key: "owner", Value: "@jo-alvarez"},
		},
		places: []factPlace{
			{4, "notes", replay.Fact{Key: "capture_file", Value: "testdata/engine-captures/vllm/chat_stream_usage.sse"}},
			{8, "notes", replay.Fact{Key: "usage_field", Value: "usage.prompt_tokens_details.cached_tokens"}},
			{15, "log", replay.Fact{Key: "failing_test", Value: "TestStreamUsage/vllm_cached_tokens"}},
			{24, "notes", replay.Fact{Key: "sglang_quirk", Value: "SGLang sends cached_tokens only with stream_options.include_usage"}},
			{33, "notes", replay.Fact{Key: "minus_one_rule", Value: "CachedTokens = -1 when the engine did not say"}},
			{44, "user", replay.Fact{Key: "api_freeze", Value: "engine.Usage keeps its four fields"}},
			{57, "notes", replay.Fact{Key: "llama_field", Value: "timings.cache_n"}},
			{71, "log", replay.Fact{Key: "race_report", Value: "DATA RACE in (*call).stop vs transport.RoundTrip"}},
			{95, "notes", replay.Fact{Key: "ollama_note", Value: "Ollama reports no cached tokens at all"}},
			{150, "user", replay.Fact{Key: "doc_target", Value: "ARCHITECTURE.md section Requests"}},
			{190, "notes", replay.Fact{Key: "proxy_env", Value: "GOPROXY=https://goproxy.corp.lan"}},
			{240, "user", replay.Fact{Key: "merge_window", Value: "Thursday 14:00 UTC"}},
			{290, "notes", replay.Fact{Key: "bench_stream", Value: "BenchmarkStreamDecode 38 µs/op"}},
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
		taskFacts: []replay.Fact{
			{Key: "issue", Value: "reika-lsp/reika#455"},
			{Key: "branch", Value: "fix/sim-unique-old-text"},
			{Key: "repro_seed", Value: "conversationSeed 0x2f61a9d3"},
			{Key: "edit_error", Value: "old_text occurs 2 times in lsp/server.go"},
			{Key: "reviewer", Value: "@noor-haddad"},
		},
		places: []factPlace{
			{6, "notes", replay.Fact{Key: "dup_line", Value: "func (s *Server) handle(ctx context.Context) error"}},
			{19, "notes", replay.Fact{Key: "policy_rounds", Value: "REIKA_SIM_ROUNDS=240"}},
			{33, "notes", replay.Fact{Key: "test_dir", Value: "agent/engine/sim/testdata/dupdecl"}},
			{48, "user", replay.Fact{Key: "no_new_deps", Value: "standard library only in agent/engine/sim"}},
			{64, "notes", replay.Fact{Key: "go_toolchain", Value: "go1.26.8 linux/amd64"}},
			{82, "notes", replay.Fact{Key: "bench_reply", Value: "BenchmarkReply 91 µs/op"}},
			{105, "notes", replay.Fact{Key: "ci_job", Value: "ci/linux #2210"}},
			{140, "user", replay.Fact{Key: "naming", Value: "call the helper uniqueLine, not findUnique"}},
			{190, "notes", replay.Fact{Key: "flaky_test", Value: "TestPolicyEdits/crlf under -count=50"}},
			{260, "notes", replay.Fact{Key: "golden_file", Value: "agent/engine/sim/testdata/policy.golden"}},
			{340, "user", replay.Fact{Key: "release_note", Value: "the simulator never proposes an ambiguous edit"}},
			{430, "notes", replay.Fact{Key: "perf_budget", Value: "reply under 150 µs on a 20000-file tree"}},
			{520, "notes", replay.Fact{Key: "handoff", Value: "leave the crlf case to #461"}},
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
		taskFacts: []replay.Fact{
			{Key: "issue", Value: "reika-lsp/reika#470"},
			{Key: "branch", Value: "fix/config-layer-order"},
			{Key: "ci_run", Value: "ci/linux-race #3021"},
			{Key: "layer_order", Value: "flag > environment > workspace > user > default"},
			{Key: "owner", Value: "@ines-okafor"},
		},
		places: []factPlace{
			{4, "loghead", replay.Fact{Key: "runner", Value: "ubuntu-24.04 8 cores (runner-17)"}},
			{9, "loghead", replay.Fact{Key: "go_cache", Value: "GOCACHE=/ci/cache/go-build (cold)"}},
			{14, "notes", replay.Fact{Key: "bad_commit", Value: "c41d0e2 (settings: one struct per layer)"}},
			{22, "loghead", replay.Fact{Key: "env_seen", Value: "REIKA_ENDPOINT=http://10.0.4.2:8080/v1"}},
			{31, "log", replay.Fact{Key: "failing_test", Value: "TestLayers/workspace_over_env"}},
			{40, "user", replay.Fact{Key: "freeze", Value: "config.Value keeps its two fields"}},
			{52, "loghead", replay.Fact{Key: "seed", Value: "-shuffle=1733011200"}},
			{66, "log", replay.Fact{Key: "race", Value: "DATA RACE in (*Settings).merge vs Load"}},
			{85, "loghead", replay.Fact{Key: "timeout", Value: "-timeout=20m (raised from 10m)"}},
			{120, "user", replay.Fact{Key: "doc_target", Value: "README section Settings"}},
			{165, "loghead", replay.Fact{Key: "artifact", Value: "ci-artifacts/3021/config-race.log"}},
			{210, "log", replay.Fact{Key: "coverage", Value: "agent/config coverage 87.4% of statements"}},
			{255, "user", replay.Fact{Key: "merge_window", Value: "Wednesday 09:00 UTC"}},
		},
		users: map[int]string{
			40:  "One constraint: config.Value stays as it is, the LSP status code reads it.",
			120: "Please also document the order in the README, one short paragraph.",
			255: "Looks right. Rerun the config tests with -race before you wrap up.",
		},
	},
}
