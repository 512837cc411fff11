package main

import (
	"fmt"
	"html"
	"io"
	"os"
	"strings"

	"github.com/reika-lsp/reika/agent/replay"
)

// The replay's plot: for each session and window, one panel; in it, each
// strategy's prompt size per request (x: the request's index in the
// replay, y: its prompt tokens), and a mark on every request that does not
// extend the previous turn request — a filled circle for a turn request
// (a shrink event: the engine's cache is invalidated from where it
// differs), a hollow square for a side call. Refused requests carry no
// prompt and are left out. Plain SVG, written by hand; the same results
// give the same bytes.

// Plot geometry, in SVG user units.
const (
	plotPanelW = 900
	plotPanelH = 260
	plotMargin = 56 // left, for the y labels
	plotGap    = 44 // above each panel, for its title
	plotLegend = 40
	plotRight  = 16
	plotBottom = 28
)

// plotColors are the strategies' colours, in replay.Strategies order.
var plotColors = []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"}

// plotPanel is one panel of the plot: the replays of one session in one
// window, in the order they came.
type plotPanel struct {
	session string
	window  int
	res     []replay.Result
}

// writePlot draws results, grouped in panels by window and session in the
// order they come, as an SVG document.
func writePlot(w io.Writer, results []replay.Result) error {
	panels := plotPanels(results)
	width := plotMargin + plotPanelW + plotRight
	height := plotLegend + len(panels)*(plotGap+plotPanelH+plotBottom)
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	writePlotLegend(&b, panels)
	for i, p := range panels {
		writePlotPanel(&b, p, plotLegend+i*(plotGap+plotPanelH+plotBottom)+plotGap)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// plotPanels groups results by session and window, in the order they
// first come.
func plotPanels(results []replay.Result) []*plotPanel {
	var panels []*plotPanel
	for _, r := range results {
		var p *plotPanel
		for _, q := range panels {
			if q.session == r.Row.Session && q.window == r.Row.Window {
				p = q
			}
		}
		if p == nil {
			p = &plotPanel{session: r.Row.Session, window: r.Row.Window}
			panels = append(panels, p)
		}
		p.res = append(p.res, r)
	}
	return panels
}

// plotColor is the colour of the strategy name, black for one not in
// replay.Strategies.
func plotColor(name string) string {
	for i, s := range replay.Strategies {
		if s.Name == name {
			return plotColors[i%len(plotColors)]
		}
	}
	return "#000000"
}

// writePlotLegend draws the legend: the strategies of the first panel,
// then the marks.
func writePlotLegend(b *strings.Builder, panels []*plotPanel) {
	x := plotMargin
	if len(panels) > 0 {
		for _, r := range panels[0].res {
			fmt.Fprintf(b, `<line x1="%d" y1="20" x2="%d" y2="20" stroke="%s" stroke-width="2"/>`+"\n", x, x+20, plotColor(r.Row.Strategy))
			fmt.Fprintf(b, `<text x="%d" y="24">%s</text>`+"\n", x+24, html.EscapeString(r.Row.Strategy))
			x += 40 + 8*len(r.Row.Strategy)
		}
	}
	fmt.Fprintf(b, `<circle cx="%d" cy="20" r="3" fill="#444444"/><text x="%d" y="24">shrink event (turn request)</text>`+"\n", x+4, x+12)
	x += 190
	fmt.Fprintf(b, `<rect x="%d" y="17" width="6" height="6" fill="none" stroke="#444444"/><text x="%d" y="24">side call not extending</text>`+"\n", x+1, x+12)
}

// plotScale maps a request's index and its prompt tokens to a point of a
// panel whose top edge is at top.
type plotScale struct {
	top, window, requests int
}

func (s plotScale) x(k int) float64 {
	return plotMargin + float64(k)*plotPanelW/float64(max(1, s.requests-1))
}

func (s plotScale) y(tokens int) float64 {
	return float64(s.top+plotPanelH) - float64(tokens)*plotPanelH/float64(s.window)
}

// writePlotPanel draws panel p with its top edge at top: its title, frame,
// axis labels and usable line, then one series per replay.
func writePlotPanel(b *strings.Builder, p *plotPanel, top int) {
	n := 1
	for _, r := range p.res {
		n = max(n, answered(r))
	}
	sc := plotScale{top: top, window: p.window, requests: n}
	fmt.Fprintf(b, `<g class="panel" data-session="%s" data-window="%d">`+"\n", html.EscapeString(p.session), p.window)
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="14">%s, window %d: prompt tokens per request</text>`+"\n",
		plotMargin, top-12, html.EscapeString(p.session), p.window)
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999999"/>`+"\n", plotMargin, top, plotPanelW, plotPanelH)
	for _, f := range []int{0, 1, 2, 3, 4} {
		tok := p.window * f / 4
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%d</text>`+"\n", plotMargin-6, sc.y(tok)+4, tok)
	}
	usable := p.window - replay.Reserve
	fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#999999" stroke-dasharray="4 4"/>`+"\n",
		plotMargin, sc.y(usable), plotMargin+plotPanelW, sc.y(usable))
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">request %d</text>`+"\n", plotMargin+plotPanelW, top+plotPanelH+18, n)
	for _, r := range p.res {
		writePlotSeries(b, r, sc)
	}
	b.WriteString("</g>\n")
}

// writePlotSeries draws one replay's answered requests as a polyline, then
// its marks: a circle on each turn request that does not extend the
// previous one, a square on each such side call.
func writePlotSeries(b *strings.Builder, r replay.Result, sc plotScale) {
	c := plotColor(r.Row.Strategy)
	var pts, marks strings.Builder
	k := 0
	for _, q := range r.Requests {
		if q.Refused {
			continue
		}
		x, y := sc.x(k), sc.y(q.PromptTokens)
		fmt.Fprintf(&pts, "%.1f,%.1f ", x, y)
		switch {
		case !q.Extends && q.Side:
			fmt.Fprintf(&marks, `<rect class="side" x="%.1f" y="%.1f" width="6" height="6" fill="#ffffff" stroke="%s"/>`+"\n", x-3, y-3, c)
		case !q.Extends:
			fmt.Fprintf(&marks, `<circle class="event" cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x, y, c)
		}
		k++
	}
	fmt.Fprintf(b, `<polyline data-strategy="%s" fill="none" stroke="%s" stroke-width="1" points="%s"/>`+"\n",
		html.EscapeString(r.Row.Strategy), c, strings.TrimSpace(pts.String()))
	b.WriteString(marks.String())
}

// answered counts the requests of a replay the engine answered.
func answered(r replay.Result) int {
	n := 0
	for _, q := range r.Requests {
		if !q.Refused {
			n++
		}
	}
	return n
}

// writePlotFile writes the plot of results to the file name.
func writePlotFile(name string, results []replay.Result) error {
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := writePlot(f, results); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plot %s: %w", name, err)
	}
	return nil
}
