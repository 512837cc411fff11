package langserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/reika-lsp/reika/agent/tools"
)

// severities names the diagnostics the agent is shown; hints and
// information are left out.
var severities = map[protocol.DiagnosticSeverity]string{
	protocol.DiagnosticSeverityError:   "error",
	protocol.DiagnosticSeverityWarning: "warning",
}

// Diagnostics are the errors and warnings of paths as their servers see
// the text the agent sees: each file given to its server, and its
// diagnostics for that version waited for (Options.Settle). Files no
// server serves go to the fallback.
func (s *Servers) Diagnostics(ctx context.Context, paths []string) (tools.NavAnswer, error) {
	var ans tools.NavAnswer
	var sources, rest []string
	for _, path := range paths {
		abs, err := s.resolve(path)
		if err != nil {
			return tools.NavAnswer{}, err
		}
		if !s.Serves(abs) {
			rest = append(rest, path)
			continue
		}
		srv, err := s.with(ctx, abs, func(p *proc) error {
			text, err := s.opts.Text(abs)
			if err != nil {
				return err
			}
			diags, err := s.diagnose(ctx, p, abs, text)
			ans.Locations = append(ans.Locations, s.diagnostics(p.enc, abs, text, diags, false)...)
			return err
		})
		if err != nil {
			return tools.NavAnswer{}, err
		}
		if !strings.Contains(","+strings.Join(sources, ",")+",", ","+srv.Name+",") {
			sources = append(sources, srv.Name)
		}
	}
	if len(rest) > 0 {
		other, err := s.fallback().Diagnostics(ctx, rest)
		if err != nil && len(sources) == 0 {
			return tools.NavAnswer{}, err
		}
		if err == nil {
			ans.Locations = append(ans.Locations, other.Locations...)
			ans.Approximate = other.Approximate
			sources = append(sources, other.Source)
		}
	}
	ans.Source = strings.Join(sources, ", ")
	return ans, nil
}

// Introduced returns the errors an edit of the file at path brought: old
// is the file's text before it (tools.Proposal.Old), and the text the
// agent sees now is the text after. The server is given each text in
// turn and its diagnostics for each waited for (Options.Settle; the
// first look at a file waits up to Options.Timeout, the workspace's
// load); an error is new when the text before had fewer of that message
// (positions move with an edit; messages stay). The errors the edit
// brought to other files (callers of a changed signature) follow, from
// what the server published of them after the edit against before it. A
// file no server serves gives an empty answer.
func (s *Servers) Introduced(ctx context.Context, path, old string) (tools.NavAnswer, error) {
	abs, err := s.resolve(path)
	if err != nil || !s.Serves(abs) {
		return tools.NavAnswer{}, err
	}
	var ans tools.NavAnswer
	srv, err := s.with(ctx, abs, func(p *proc) error {
		now, err := s.opts.Text(abs)
		if err != nil || now == old {
			return err
		}
		before, err := s.diagnose(ctx, p, abs, old)
		if err != nil {
			return err
		}
		// The pass that follows the text before settles first, so
		// that what it publishes of other files is not the edit's.
		p.quiet(ctx, quietGap, quietBound)
		others := p.published()
		after, err := s.diagnose(ctx, p, abs, now)
		if err != nil {
			return err
		}
		ans.Locations = s.diagnostics(p.enc, abs, now, newErrors(before, after), true)
		ans.Locations = append(ans.Locations, s.elsewhere(ctx, p, abs, others)...)
		return nil
	})
	ans.Source = srv.Name
	return ans, err
}

// A server's pass over the workspace publishes file after file: it is
// over when nothing came for quietGap (at most quietBound).
const (
	quietGap   = 150 * time.Millisecond
	quietBound = time.Second
)

// elsewhere are the new errors of the files other than abs that the
// server published since others (its diagnostics before the edit) in the
// pass that follows the edit: a changed signature breaks its callers.
func (s *Servers) elsewhere(ctx context.Context, p *proc, abs string, others map[protocol.DocumentURI]published) []tools.NavLocation {
	p.quiet(ctx, quietGap, quietBound)
	var out []tools.NavLocation
	self := uri.File(abs)
	now := p.published()
	uris := make([]protocol.DocumentURI, 0, len(now))
	for u := range now {
		uris = append(uris, u)
	}
	slices.Sort(uris)
	for _, u := range uris {
		if u == self || now[u].seq == others[u].seq {
			continue
		}
		if errs := newErrors(others[u].diags, now[u].diags); len(errs) > 0 {
			out = append(out, s.diagnostics(p.enc, u.Filename(), s.text(u.Filename()), errs, true)...)
		}
	}
	return out
}

// diagnose gives the server text as the file abs and waits for its
// diagnostics of that version.
func (s *Servers) diagnose(ctx context.Context, p *proc, abs, text string) ([]protocol.Diagnostic, error) {
	u := uri.File(abs)
	version, seq, err := p.sync(ctx, u, LanguageOf(abs), text)
	if err != nil {
		return nil, err
	}
	bound := s.opts.Settle
	if seq <= 0 {
		// The server's first look at the file: it may be loading the
		// workspace still, which the request's bound covers.
		bound = max(bound, s.opts.Timeout)
	}
	diags, ok := p.waitDiagnostics(ctx, u, version, seq, bound)
	if !ok {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !p.alive() {
			return nil, fmt.Errorf("diagnostics of %s: %w%s", relPath(s.root(), abs), errDied, p.stderr.said())
		}
		if last, ok := p.standing(u); ok {
			return last, nil
		}
		return nil, fmt.Errorf("%s gave no diagnostics of %s within %v", p.srv.Name, relPath(s.root(), abs), bound)
	}
	return diags, nil
}

// newErrors are the errors of after that before had fewer of, by message.
func newErrors(before, after []protocol.Diagnostic) []protocol.Diagnostic {
	had := map[string]int{}
	for _, d := range before {
		if d.Severity == protocol.DiagnosticSeverityError {
			had[d.Message]++
		}
	}
	var out []protocol.Diagnostic
	for _, d := range after {
		if d.Severity != protocol.DiagnosticSeverityError {
			continue
		}
		if had[d.Message] > 0 {
			had[d.Message]--
			continue
		}
		out = append(out, d)
	}
	return out
}

// diagnostics converts a file's diagnostics (their places in enc), errors
// only when onlyErrors.
func (s *Servers) diagnostics(enc encoding, abs, text string, diags []protocol.Diagnostic, onlyErrors bool) []tools.NavLocation {
	var out []tools.NavLocation
	for _, d := range diags {
		sev, ok := severities[d.Severity]
		if !ok || onlyErrors && d.Severity != protocol.DiagnosticSeverityError {
			continue
		}
		line := int(d.Range.Start.Line) + 1
		l := s.location(enc, protocol.Location{URI: uri.File(abs), Range: d.Range}, text, tools.NavSnippet(text, line, line, line))
		l.Severity, l.Message = sev, d.Message
		out = append(out, l)
		if len(out) == maxLocations {
			break
		}
	}
	return out
}
