package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/config"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/contextwin"
)

type mapOf string

func (m mapOf) Render(budget int) string { return string(m)[:min(len(m), budget)] }
func (mapOf) Learn(tools.FileText)       {}

type noEngine struct{}

func (noEngine) Chat(context.Context, engine.Request, func(engine.Delta)) (*engine.Response, error) {
	return nil, engine.Canceled
}

// A window that leaves a round no room beside the fixed prefix is said to
// be too small before the first request; one the prefix takes more than
// half of is said to be small; minimal mode is suggested only to a session
// not already in it.
func TestRoomWarning(t *testing.T) {
	box := &agenttest.Toolbox{Names: []string{"read", "grep", "edit"}}
	for _, tc := range []struct {
		window  int
		minimal bool
		want    string // "" for no warning
	}{
		{window: 131072, want: ""},
		{window: 3500, want: "small window"},
		{window: 1400, want: "window too small"},
		{window: 700, minimal: true, want: "window too small"},
	} {
		s, err := newSession(sessionConfig{Engine: noEngine{}, Tools: box,
			RepoMap: mapOf(strings.Repeat("pkg/file.go: func F()\n", 1000)), Context: contextwin.Config{Window: tc.window, Reserve: 256, Minimal: tc.minimal}})
		if err != nil {
			t.Fatal(err)
		}
		got := s.RoomWarning()
		if tc.want == "" && got != "" || tc.want != "" && !strings.HasPrefix(got, tc.want) {
			t.Errorf("RoomWarning() at %d tokens (minimal %v) = %q, want it to start with %q", tc.window, tc.minimal, got, tc.want)
		}
		if strings.Contains(got, "minimal mode") == tc.minimal && got != "" {
			t.Errorf("RoomWarning() at %d tokens (minimal %v) = %q: minimal mode suggested wrongly", tc.window, tc.minimal, got)
		}
	}
}

// The cache model the planner starts from is the one discovery found, or
// the one the settings force; a checkpointed one is told at start.
func TestStartCacheModel(t *testing.T) {
	_, url := simURL(t, sim.Config{Flavor: sim.VLLM})
	for _, tc := range []struct {
		name   string
		env    map[string]string
		want   contextwin.CacheModel
		source string
		notice string // "" for none about the cache
	}{
		{"discovered: vLLM's blocks", nil, contextwin.CacheModel{Class: contextwin.CacheBlocks, Block: 16}, "vLLM's default block size", ""},
		{"forced checkpointed", map[string]string{"REIKA_CACHE_CLASS": "checkpointed", "REIKA_SWA_WINDOW": "1024"},
			contextwin.CacheModel{Class: contextwin.CacheCheckpointed, SWA: 1024}, "env REIKA_CACHE_CLASS",
			"prompt cache checkpointed (sliding window 1024) (env REIKA_CACHE_CLASS): SWA model (window 1024)"},
		{"forced dense", map[string]string{"REIKA_CACHE_CLASS": "dense"}, contextwin.CacheModel{Class: contextwin.CacheDense}, "env REIKA_CACHE_CLASS", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(context.Background(), Setup{
				Getenv:     func(k string) string { return tc.env[k] },
				ConfigFile: NoConfigFile,
				Override: func(st *config.Settings) {
					st.Endpoint = config.Value[string]{Value: url, Source: config.Source{Layer: config.Flag, Detail: "test"}}
				},
				Folders:  []string{t.TempDir()},
				StateDir: NoTranscript,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			d := s.Info().Connection.Discovery
			if s.cfg.Context.Cache != tc.want || d.Cache != tc.want || !strings.HasPrefix(d.CacheSource.Text, tc.source) {
				t.Errorf("planner's cache = %+v, discovery's %+v (%s); want %+v (%s)", s.cfg.Context.Cache, d.Cache, d.CacheSource, tc.want, tc.source)
			}
			var told []string
			for _, n := range s.Info().Notices {
				if strings.HasPrefix(n.Text, "prompt cache") {
					told = append(told, n.Text)
				}
			}
			if tc.notice == "" && len(told) > 0 || tc.notice != "" && (len(told) != 1 || !strings.HasPrefix(told[0], tc.notice)) {
				t.Errorf("notices about the cache = %q, want %q", told, tc.notice)
			}
		})
	}
}
