package agent

import (
	"context"
	"github.com/reika-lsp/reika/contextwin"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/agenttest"
	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/tools"
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
