package lsp

import (
	"testing"

	"github.com/reika-lsp/reika/agent/tools"
)

// reika.ask's trust values are the tools' modes, spelt once in names.go.
func TestTrustNames(t *testing.T) {
	for _, tc := range []struct {
		trust string
		mode  tools.Mode
	}{{TrustAsk, tools.AskAll}, {TrustPlan, tools.Plan}} {
		if tools.Mode(tc.trust) != tc.mode {
			t.Errorf("trust %q is not the mode %q", tc.trust, tc.mode)
		}
	}
}
