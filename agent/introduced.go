package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/reika-lsp/reika/agent/tools"
)

// EditChecker tells which errors an edit introduced: the file at abs was
// old before it and is now as the agent sees it. agent/langserver's
// Servers is one, asking the file's language server.
type EditChecker interface {
	Introduced(ctx context.Context, abs, old string) (tools.NavAnswer, error)
}

// Bounds of what an edit's result is told of its errors.
const (
	// introducedWait bounds the whole check, the server's two waits for
	// diagnostics (before and after) included.
	introducedWait = 10 * time.Second
	// maxIntroduced errors are listed; the rest counted.
	maxIntroduced = 10
	// maxIntroducedMessage clips one error's message.
	maxIntroducedMessage = 300
)

// introduced appends to the result of an applied edit the errors the
// edit introduced, as the file's language server sees them. It is a
// no-op without a checker, for a result without an applied change, and
// when the server has nothing to say in time: the edit's result stands
// as it was.
func (r *run) introduced(ctx context.Context, res tools.Result) tools.Result {
	c := r.s.cfg.Checker
	if c == nil || res.Error || res.Proposal == nil || res.Outcome == nil || !res.Outcome.Applied {
		return res
	}
	ctx, cancel := context.WithTimeout(ctx, introducedWait)
	defer cancel()
	ans, err := c.Introduced(ctx, res.Proposal.Abs, res.Proposal.Old)
	if err != nil || len(ans.Locations) == 0 {
		return res
	}
	res.Content += introducedBlock(ans)
	return res
}

// introducedBlock is the text that tells the model the errors: one line
// each, "path:line:column: message", at most maxIntroduced.
func introducedBlock(ans tools.NavAnswer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n\nErrors this edit introduced (%s):\n", ans.Source)
	for i, l := range ans.Locations {
		if i == maxIntroduced {
			fmt.Fprintf(&b, "… and %d more\n", len(ans.Locations)-i)
			break
		}
		msg := clipWithEllipsis(strings.Join(strings.Fields(l.Message), " "), maxIntroducedMessage)
		fmt.Fprintf(&b, "%s:%d:%d: %s\n", l.Path, l.Line, l.Column, msg)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
