package config

import (
	"strings"
	"testing"

	"github.com/reika-lsp/reika/contextwin"
)

func TestCacheModelSetting(t *testing.T) {
	file, err := ParseFile("/cfg/reika/config.json", []byte(`{"profile": "box", "profiles": {"box": {"cache_class": "Checkpointed", "swa_window": 4096}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		in     Inputs
		want   contextwin.CacheModel
		source string
		ok     bool
		warn   string
	}{
		{"nothing set: discovery decides", Inputs{}, contextwin.CacheModel{}, "", false, ""},
		{"the environment", Inputs{Env: envOf("REIKA_CACHE_CLASS", "dense")}, contextwin.CacheModel{Class: contextwin.CacheDense}, "env REIKA_CACHE_CLASS", true, ""},
		{"a class and a window", Inputs{Env: envOf("REIKA_CACHE_CLASS", "checkpointed", "REIKA_SWA_WINDOW", "1024")},
			contextwin.CacheModel{Class: contextwin.CacheCheckpointed, SWA: 1024}, "env REIKA_CACHE_CLASS", true, ""},
		{"a window alone means checkpointed", Inputs{Env: envOf("REIKA_SWA_WINDOW", "512")},
			contextwin.CacheModel{Class: contextwin.CacheCheckpointed, SWA: 512}, "env REIKA_SWA_WINDOW", true, ""},
		{"a window of 0: recurrent", Inputs{Env: envOf("REIKA_SWA_WINDOW", "0")},
			contextwin.CacheModel{Class: contextwin.CacheCheckpointed}, "env REIKA_SWA_WINDOW", true, ""},
		{"a window beside blocks is not the blocks'", Inputs{Env: envOf("REIKA_CACHE_CLASS", "blocks", "REIKA_SWA_WINDOW", "512")},
			contextwin.CacheModel{Class: contextwin.CacheBlocks}, "env REIKA_CACHE_CLASS", true, ""},
		{"the profile, spelt in capitals", Inputs{File: file, FilePath: "/cfg/reika/config.json"},
			contextwin.CacheModel{Class: contextwin.CacheCheckpointed, SWA: 4096}, "file /cfg/reika/config.json (profile box)", true, ""},
		{"the editor over the profile", Inputs{File: file, FilePath: "/cfg/reika/config.json", Editor: map[string]any{"cacheClass": "dense"}},
			contextwin.CacheModel{Class: contextwin.CacheDense}, "editor startup options", true, ""},
		{"a misspelt class is ignored", Inputs{Env: envOf("REIKA_CACHE_CLASS", "sliding")}, contextwin.CacheModel{}, "", false,
			`REIKA_CACHE_CLASS = "sliding" is not dense, checkpointed, blocks, boundary or unknown; ignored`},
		{"a hybrid model on vLLM and its block", Inputs{Env: envOf("REIKA_CACHE_CLASS", "boundary", "REIKA_CACHE_BLOCK", "528")},
			contextwin.CacheModel{Class: contextwin.CacheBoundary, Block: 528}, "env REIKA_CACHE_CLASS", true, ""},
		{"a block beside checkpointed is not its", Inputs{Env: envOf("REIKA_CACHE_CLASS", "checkpointed", "REIKA_CACHE_BLOCK", "528")},
			contextwin.CacheModel{Class: contextwin.CacheCheckpointed}, "env REIKA_CACHE_CLASS", true, ""},
		{"a negative window is ignored", Inputs{Env: envOf("REIKA_SWA_WINDOW", "-1")}, contextwin.CacheModel{}, "", false, "REIKA_SWA_WINDOW = -1 is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Resolve(tc.in)
			m, src, ok := s.CacheModel()
			if m != tc.want || ok != tc.ok || ok && src.String() != tc.source {
				t.Errorf("CacheModel() = %+v, %q, %v; want %+v, %q, %v", m, src, ok, tc.want, tc.source, tc.ok)
			}
			if got := strings.Join(s.Warnings, "\n"); tc.warn == "" && got != "" || !strings.Contains(got, tc.warn) {
				t.Errorf("Warnings = %q, want %q", got, tc.warn)
			}
		})
	}
}

// checkpoint_min_step tells llama-server's --checkpoint-min-step, from
// any layer, the editor's camelCase too; a negative one is refused.
func TestCheckpointMinStepSetting(t *testing.T) {
	file, err := ParseFile("/cfg/reika/config.json", []byte(`{"checkpoint_min_step": 2048}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   Inputs
		want int
		set  bool
		warn string
	}{
		{"unset", Inputs{}, 0, false, ""},
		{"the environment", Inputs{Env: envOf("REIKA_CHECKPOINT_MIN_STEP", "512")}, 512, true, ""},
		{"the file", Inputs{File: file, FilePath: "/cfg/reika/config.json"}, 2048, true, ""},
		{"the editor over the file", Inputs{File: file, FilePath: "/cfg/reika/config.json", Editor: map[string]any{"checkpointMinStep": 1024}}, 1024, true, ""},
		{"a negative one is ignored", Inputs{Env: envOf("REIKA_CHECKPOINT_MIN_STEP", "-1")}, 0, false, "REIKA_CHECKPOINT_MIN_STEP = -1 is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Resolve(tc.in)
			if got := s.CheckpointMinStep; got.Value != tc.want || got.IsSet() != tc.set {
				t.Errorf("CheckpointMinStep = %d (set %v), want %d (set %v)", got.Value, got.IsSet(), tc.want, tc.set)
			}
			if got := strings.Join(s.Warnings, "\n"); tc.warn == "" && got != "" || !strings.Contains(got, tc.warn) {
				t.Errorf("Warnings = %q, want %q", got, tc.warn)
			}
		})
	}
}
