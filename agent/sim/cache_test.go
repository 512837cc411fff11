package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cacheStep is one request on a slot: a prompt of n tokens that shares
// its first common tokens with what the slot holds, which then holds the
// prompt and gen tokens generated after it; and where the slot restarts
// and which checkpoints it then keeps.
type cacheStep struct {
	name        string
	n, common   int
	gen         int
	wantFrom    int
	wantRestart Restart
	wantPoints  []int
}

// runSteps plays steps on one slot of model m, each against what the one
// before left.
func runSteps(t *testing.T, m CacheModel, steps []cacheStep) {
	t.Helper()
	m, err := m.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	var c slotCache
	for _, st := range steps {
		from, why := m.restart(c, st.common)
		if from != st.wantFrom || why != st.wantRestart {
			t.Errorf("%s: restart(%d held, prompt ended at %d, points %v; common %d) = %d %q, want %d %q",
				st.name, len(c.tokens), c.promptEnd, c.points, st.common, from, why, st.wantFrom, st.wantRestart)
		}
		c.points = m.processed(c.points, from, st.n)
		if !slices.Equal(c.points, st.wantPoints) {
			t.Errorf("%s: checkpoints after prefilling %d tokens from %d = %v, want %v", st.name, st.n, from, c.points, st.wantPoints)
		}
		c.tokens, c.promptEnd = make([]string, st.n+st.gen), st.n
	}
}

func TestCacheRules(t *testing.T) {
	// MinStep 1: a full slot drops its oldest checkpoint, as no two
	// stand closer than a token.
	t.Run("recurrent", func(t *testing.T) {
		runSteps(t, CacheModel{Kind: CacheRecurrent, Ubatch: 8, Checkpoints: 3, MinStep: 1}, []cacheStep{
			{name: "cold", n: 100, common: 0, wantFrom: 0, wantPoints: []int{88, 96}},
			// An append takes three more, one where it began; the oldest go
			// past three.
			{name: "append", n: 120, common: 100, wantFrom: 100, wantPoints: []int{100, 108, 116}},
			{name: "change near the end", n: 120, common: 110, wantFrom: 108, wantRestart: RestartCheckpoint,
				wantPoints: []int{100, 108, 116}},
			// The restart at 100, a checkpoint right at the change, erases
			// 108 and 116; the shorter prompt's first point (93) lies
			// before the restart and is not taken.
			{name: "change at a checkpoint", n: 105, common: 100, wantFrom: 100, wantPoints: []int{100, 101}},
			{name: "change before every checkpoint", n: 105, common: 90, wantFrom: 0, wantRestart: RestartZero,
				wantPoints: []int{93, 101}},
			{name: "nothing in common", n: 105, common: 0, wantFrom: 0, wantPoints: []int{93, 101}},
		})
	})
	t.Run("recurrent, a full slot keeps its first checkpoint", func(t *testing.T) {
		// Past the limit the oldest of those within MinStep of the one
		// before goes: the first checkpoint outlives the appends'.
		runSteps(t, CacheModel{Kind: CacheRecurrent, Ubatch: 8, Checkpoints: 3, MinStep: 50}, []cacheStep{
			{name: "cold", n: 100, wantPoints: []int{88, 96}},
			{name: "append", n: 120, common: 100, wantFrom: 100, wantPoints: []int{88, 108, 116}},
			{name: "change before the appends", n: 120, common: 90, wantFrom: 88, wantRestart: RestartCheckpoint,
				wantPoints: []int{88, 108, 116}},
		})
	})
	t.Run("recurrent, a change in the reply", func(t *testing.T) {
		// The slot holds the reply it generated: a prompt that changes
		// within it restarts at the prompt's last checkpoint, one that
		// takes it whole is an append.
		runSteps(t, CacheModel{Kind: CacheRecurrent, Ubatch: 8}, []cacheStep{
			{name: "cold", n: 100, gen: 20, wantPoints: []int{88, 96}},
			{name: "reply re-rendered", n: 150, common: 110, gen: 20, wantFrom: 96, wantRestart: RestartCheckpoint,
				wantPoints: []int{88, 96, 138, 146}},
			{name: "reply kept", n: 200, common: 170, wantFrom: 170, wantPoints: []int{88, 96, 138, 146, 170, 188, 196}},
		})
	})
	t.Run("swa", func(t *testing.T) {
		runSteps(t, CacheModel{Kind: CacheSWA, Window: 16, Ubatch: 8, Checkpoints: 3, MinStep: 1}, []cacheStep{
			{name: "cold", n: 200, wantPoints: []int{188, 196}},
			{name: "append", n: 300, common: 200, wantFrom: 200, wantPoints: []int{200, 288, 296}},
			// The window's cells are restored up to the token before the
			// checkpoint.
			{name: "change before the window", n: 300, common: 250, wantFrom: 199, wantRestart: RestartCheckpoint,
				wantPoints: []int{199, 288, 296}},
			// 10 tokens before the previous prompt's end: the window
			// still holds what comes before the change.
			{name: "change within the window", n: 300, common: 290, wantFrom: 290, wantPoints: []int{288, 290, 296}},
			{name: "change at the window's edge", n: 300, common: 284, wantFrom: 284, wantPoints: []int{284, 288, 296}},
			{name: "change before every checkpoint", n: 300, common: 150, wantFrom: 0, wantRestart: RestartZero,
				wantPoints: []int{288, 296}},
		})
	})
	t.Run("dense", func(t *testing.T) {
		runSteps(t, CacheModel{}, []cacheStep{
			{name: "cold", n: 200},
			{name: "append", n: 300, common: 200, wantFrom: 200},
			{name: "change", n: 300, common: 20, wantFrom: 20},
		})
	})
}

// wordsPrompt is a request whose user message is n words, those at the
// indices in changed spelled differently.
func wordsPrompt(n int, changed ...int) map[string]any {
	var b strings.Builder
	b.WriteString("x")
	for i := range n {
		if slices.Contains(changed, i) {
			b.WriteString(" b")
		} else {
			b.WriteString(" a")
		}
	}
	return body(system("A system prompt."), user(b.String()))
}

// promptToks is the prompt the simulator evaluates for a request body.
func promptToks(t *testing.T, b any) []string {
	t.Helper()
	c, err := parseChat(mustJSON(t, b))
	if err != nil {
		t.Fatal(err)
	}
	return PromptTokens(renderPrompt(c.messages, c.tools))
}

// TestCacheKinds drives the rules through the server: the figures it
// reports and its log line.
func TestCacheKinds(t *testing.T) {
	const ubatch, window = 8, 16
	kinds := []CacheModel{{Kind: CacheDense}, {Kind: CacheSWA, Window: window, Ubatch: ubatch}, {Kind: CacheRecurrent, Ubatch: ubatch}}
	for _, m := range kinds {
		t.Run(string(m.Kind)+" append", func(t *testing.T) {
			_, url := start(t, Config{Cache: m})
			first := chatOK(t, url, wordsPrompt(200))
			next := wordsPrompt(200)
			next["messages"] = append(next["messages"].([]msg), assistant(first.content()), user("and then?"))
			if got, want := chatOK(t, url, next).Timings.CacheN, first.Usage.TotalTokens; got != want {
				t.Errorf("append: cache_n = %d, want the prompt and reply, %d", got, want)
			}
		})
	}

	base := wordsPrompt(200)
	n := len(promptToks(t, base))
	late := wordsPrompt(200, 195)   // a change a few tokens before the end
	middle := wordsPrompt(200, 100) // one about 100 tokens before it
	cLate := commonPrefix(promptToks(t, base), promptToks(t, late))
	cMiddle := commonPrefix(promptToks(t, base), promptToks(t, middle))
	// The late change lies between the prompt's two checkpoints, within
	// the window; the middle one before both, and before the window.
	if n-cLate > window || n-cLate <= checkpointBack || n-cLate > checkpointBack+ubatch || n-cMiddle <= window+ubatch+checkpointBack {
		t.Fatalf("changes at %d and %d of %d do not fall where the test needs them", cLate, cMiddle, n)
	}
	tests := []struct {
		name        string
		m           CacheModel
		second      map[string]any
		wantCache   int
		wantRestart Restart
	}{
		{"dense, change in the middle", CacheModel{}, middle, cMiddle, RestartAtChange},
		{"swa, change within the window", CacheModel{Kind: CacheSWA, Window: window, Ubatch: ubatch}, late, cLate, RestartAtChange},
		{"swa, change before the window", CacheModel{Kind: CacheSWA, Window: window, Ubatch: ubatch}, middle, 0, RestartZero},
		{"recurrent, change near the end", CacheModel{Kind: CacheRecurrent, Ubatch: ubatch}, late, n - checkpointBack - ubatch, RestartCheckpoint},
		{"recurrent, change in the middle", CacheModel{Kind: CacheRecurrent, Ubatch: ubatch}, middle, 0, RestartZero},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			s, url := start(t, Config{Cache: tt.m, Log: &log})
			chatOK(t, url, base)
			got := chatOK(t, url, tt.second)
			if got.Timings.CacheN != tt.wantCache || got.Timings.PromptN != n-tt.wantCache {
				t.Errorf("cache_n, prompt_n = %d, %d, want %d, %d", got.Timings.CacheN, got.Timings.PromptN, tt.wantCache, n-tt.wantCache)
			}
			rec := waitRecords(t, s, 2)[1]
			common := commonPrefix(promptToks(t, base), promptToks(t, tt.second))
			if rec.Restart != tt.wantRestart || rec.Common != common {
				t.Errorf("record: restart %q, common %d, want %q, %d", rec.Restart, rec.Common, tt.wantRestart, common)
			}
			line := strings.Split(strings.TrimSpace(log.String()), "\n")[1]
			wantLog := fmt.Sprintf(" cache=%d new=%d ", tt.wantCache, n-tt.wantCache)
			if tt.wantRestart != RestartAtChange {
				wantLog = fmt.Sprintf(" cache=%d new=%d restart=%s common=%d ", tt.wantCache, n-tt.wantCache, tt.wantRestart, common)
			}
			if !strings.Contains(line, wantLog) || tt.wantRestart == RestartAtChange && strings.Contains(line, "restart=") {
				t.Errorf("log line %q, want it to hold %q", line, wantLog)
			}
		})
	}
}

// TestCacheSaveRestore saves a recurrent slot, restores it into a new
// server, and checks that its checkpoints came back with its tokens: a
// change near the end restarts at the last one, not at 0.
func TestCacheSaveRestore(t *testing.T) {
	const ubatch = 8
	dir := t.TempDir()
	m := CacheModel{Kind: CacheRecurrent, Ubatch: ubatch}
	base, late := wordsPrompt(200), wordsPrompt(200, 195)
	n := len(promptToks(t, base))

	_, url1 := start(t, Config{Cache: m, SlotSavePath: dir})
	chatOK(t, url1, base)
	if status, data := do(t, "POST", url1+"/slots/0?action=save", map[string]any{"filename": "r.bin"}); status != 200 {
		t.Fatalf("save = %d %s", status, data)
	}
	var f slotFile
	if data, err := os.ReadFile(filepath.Join(dir, "r.bin")); err != nil || json.Unmarshal(data, &f) != nil {
		t.Fatalf("reading the slot file: %v", err)
	}
	if want := []int{n - checkpointBack - ubatch, n - checkpointBack}; !slices.Equal(f.Checkpoints, want) || f.PromptEnd != n {
		t.Errorf("the file's checkpoints, prompt end = %v, %d, want %v, %d", f.Checkpoints, f.PromptEnd, want, n)
	}

	_, url2 := start(t, Config{Cache: m, SlotSavePath: dir})
	if status, data := do(t, "POST", url2+"/slots/0?action=restore", map[string]any{"filename": "r.bin"}); status != 200 {
		t.Fatalf("restore = %d %s", status, data)
	}
	if got, want := chatOK(t, url2, with(late, "id_slot", 0)).Timings.CacheN, n-checkpointBack-ubatch; got != want {
		t.Errorf("after restore, a change near the end: cache_n = %d, want the restored checkpoint %d", got, want)
	}

	// Erased, the slot holds no checkpoint either.
	do(t, "POST", url2+"/slots/0?action=erase", nil)
	if got := chatOK(t, url2, with(base, "id_slot", 0)).Timings.CacheN; got != 0 {
		t.Errorf("after erase: cache_n = %d, want 0", got)
	}

	// A file whose checkpoints lie outside its tokens is refused.
	f.Checkpoints = []int{len(f.Tokens) + 1}
	bad, _ := json.Marshal(f)
	if err := os.WriteFile(filepath.Join(dir, "bad.bin"), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if status, data := do(t, "POST", url2+"/slots/0?action=restore", map[string]any{"filename": "bad.bin"}); status != 400 {
		t.Errorf("restore of a file with a checkpoint past its tokens = %d %s, want 400", status, data)
	}
}

// TestCacheConfig checks the kinds' names, the defaults and the refusals.
func TestCacheConfig(t *testing.T) {
	for _, name := range []string{"dense", "swa", "recurrent", "", " SWA "} {
		if _, err := ParseCacheKind(name); err != nil {
			t.Errorf("ParseCacheKind(%q) = %v", name, err)
		}
	}
	if k, err := ParseCacheKind("mamba"); err == nil {
		t.Errorf("ParseCacheKind(mamba) = %q, want an error", k)
	}
	s, err := New(Config{Cache: CacheModel{Kind: CacheSWA}})
	if err != nil {
		t.Fatal(err)
	}
	want := CacheModel{Kind: CacheSWA, Window: DefaultSWAWindow, Checkpoints: DefaultCheckpoints, MinStep: DefaultMinStep, Ubatch: DefaultUbatch, Block: DefaultBlock}
	if got := s.Config().Cache; got != want {
		t.Errorf("defaults: %+v, want %+v", got, want)
	}
	for _, cfg := range []Config{
		{Flavor: VLLM, Cache: CacheModel{Kind: CacheSWA}},
		{Flavor: Ollama, Cache: CacheModel{Kind: CacheSWA}},
		{Cache: CacheModel{Kind: CacheSWA, Window: -1}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted it, want an error", cfg.Cache)
		}
	}
}

func TestParseEngine(t *testing.T) {
	tests := []struct {
		in     string
		flavor Flavor
		kind   CacheKind
	}{
		{"", LlamaCpp, CacheDense},
		{"dense", LlamaCpp, CacheDense},
		{"swa", LlamaCpp, CacheSWA},
		{"Recurrent", LlamaCpp, CacheRecurrent},
		{"vllm", VLLM, CacheDense},
	}
	for _, tt := range tests {
		f, k, err := ParseEngine(tt.in)
		if err != nil || f != tt.flavor || k != tt.kind {
			t.Errorf("ParseEngine(%q) = %q, %q, %v, want %q, %q", tt.in, f, k, err, tt.flavor, tt.kind)
		}
	}
	if _, _, err := ParseEngine("ollama"); err == nil {
		t.Errorf("ParseEngine(ollama) = nil error, want one")
	}
}

// FuzzCacheModel plays random requests on a slot and holds the rules'
// invariants: a restart is at the change, at a checkpoint the slot held
// at or before it, or at 0; a dense or an appended prompt restarts at the
// change; the checkpoints stay ascending, within the prompt and the
// limit.
func FuzzCacheModel(f *testing.F) {
	f.Add(uint8(1), []byte{200, 0, 250, 200, 250, 120, 90, 80})
	f.Add(uint8(2), []byte{100, 0, 180, 100, 180, 170, 180, 10})
	f.Fuzz(func(t *testing.T, kind uint8, steps []byte) {
		m, err := CacheModel{Kind: []CacheKind{CacheDense, CacheSWA, CacheRecurrent}[int(kind)%3],
			Window: 24, Ubatch: 16, Checkpoints: 3}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		var c slotCache
		for i := 0; i+1 < len(steps); i += 2 {
			n := int(steps[i]) + 1
			common := min(int(steps[i+1]), len(c.tokens), n-1)
			from, why := m.restart(c, common)
			held := slices.Contains(c.points, from)
			switch {
			case from > common:
				t.Fatalf("restart %d after the change at %d", from, common)
			case (m.Kind == CacheDense || common >= len(c.tokens)) && from != common:
				t.Fatalf("%s, common %d of %d held: restart %d, want the change", m.Kind, common, len(c.tokens), from)
			case from != common && from != 0 && !held:
				t.Fatalf("restart %d is neither the change %d, 0 nor a checkpoint of %v", from, common, c.points)
			case (why == RestartCheckpoint) != (from < common && from > 0), (why == RestartZero) != (from == 0 && common > 0):
				t.Fatalf("restart %d for a change at %d reported as %q", from, common, why)
			}
			c.points = m.processed(c.points, from, n)
			if len(c.points) > m.Checkpoints {
				t.Fatalf("checkpoints %v: want at most %d", c.points, m.Checkpoints)
			}
			for j, p := range c.points {
				if p <= 0 || p > n || j > 0 && p <= c.points[j-1] || m.Kind == CacheDense {
					t.Fatalf("checkpoints %v after a prompt of %d tokens (%s)", c.points, n, m.Kind)
				}
			}
			c.tokens, c.promptEnd = make([]string, n+int(steps[i])%7), n
		}
	})
}
