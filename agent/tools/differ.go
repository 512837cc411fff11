package tools

import (
	"strings"

	"github.com/sourcegraph/go-diff/diff"
)

// splitKeep splits text into lines that keep their terminators; the last
// line has none when the text does not end with a newline.
func splitKeep(text string) []string {
	var lines []string
	for text != "" {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, text[:i+1])
		text = text[i+1:]
	}
	return lines
}

type opKind int

const (
	opEqual opKind = iota
	opDelete
	opInsert
)

// edit is a run of lines: a[a0:a1] equal to b[b0:b1], deleted from a, or
// inserted from b.
type edit struct {
	kind           opKind
	a0, a1, b0, b1 int
}

// maxDiffCost bounds the work of the differ: past this many differing
// lines in the middle of two texts, it calls the whole middle replaced.
const maxDiffCost = 1000

// diffLines computes a shortest edit script from a to b, lines compared
// with their terminators (Myers' algorithm, after trimming the common
// head and tail, which is where most edits leave a file alone).
func diffLines(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []edit
	add := func(e edit) {
		if e.a0 == e.a1 && e.b0 == e.b1 {
			return
		}
		if n := len(out); n > 0 && out[n-1].kind == e.kind {
			out[n-1].a1, out[n-1].b1 = e.a1, e.b1
			return
		}
		out = append(out, e)
	}
	add(edit{opEqual, 0, pre, 0, pre})
	for _, e := range myers(a[pre:len(a)-suf], b[pre:len(b)-suf]) {
		add(edit{e.kind, e.a0 + pre, e.a1 + pre, e.b0 + pre, e.b1 + pre})
	}
	add(edit{opEqual, len(a) - suf, len(a), len(b) - suf, len(b)})
	return out
}

func myers(a, b []string) []edit {
	n, m := len(a), len(b)
	switch {
	case n == 0 && m == 0:
		return nil
	case n == 0:
		return []edit{{opInsert, 0, 0, 0, m}}
	case m == 0:
		return []edit{{opDelete, 0, n, 0, 0}}
	}
	limit := min(n+m, maxDiffCost)
	off := n + m + 1
	v := make([]int, 2*off+1)
	var trace [][]int // trace[d] is v[-d..d] before step d
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, d, n, m)
			}
		}
	}
	return []edit{{opDelete, 0, n, 0, 0}, {opInsert, n, n, 0, m}}
}

// backtrack walks the trace back from (n, m) to (0, 0), one edit per step.
func backtrack(trace [][]int, d, n, m int) []edit {
	var rev []edit
	x, y := n, m
	for ; d > 0; d-- {
		prev := trace[d] // v after step d-1, indexed k+d
		k := x - y
		var pk int
		if k == -d || (k != d && prev[k-1+d] < prev[k+1+d]) {
			pk = k + 1 // came down: an insertion
		} else {
			pk = k - 1 // came right: a deletion
		}
		px := prev[pk+d]
		py := px - pk
		mx, my := px, py+1
		if pk == k-1 {
			mx, my = px+1, py
		}
		if x > mx {
			rev = append(rev, edit{opEqual, mx, x, my, y})
		}
		if pk == k+1 {
			rev = append(rev, edit{opInsert, px, px, py, py + 1})
		} else {
			rev = append(rev, edit{opDelete, px, px + 1, py, py})
		}
		x, y = px, py
	}
	if x > 0 {
		rev = append(rev, edit{opEqual, 0, x, 0, y})
	}
	out := make([]edit, 0, len(rev))
	for i := len(rev) - 1; i >= 0; i-- {
		e := rev[i]
		if n := len(out); n > 0 && out[n-1].kind == e.kind {
			out[n-1].a1, out[n-1].b1 = e.a1, e.b1
			continue
		}
		out = append(out, e)
	}
	return out
}

// changeHunks turns an edit script into the changed regions of a, in byte
// offsets, each a run of deletions and insertions between equal lines.
func changeHunks(a, b []string, edits []edit) Hunks {
	offsets := make([]int, len(a)+1)
	for i, l := range a {
		offsets[i+1] = offsets[i] + len(l)
	}
	var hunks Hunks
	var cur *Hunk
	for _, e := range edits {
		if e.kind == opEqual {
			cur = nil
			continue
		}
		if cur == nil {
			hunks = append(hunks, Hunk{OldStart: offsets[e.a0], OldEnd: offsets[e.a0]})
			cur = &hunks[len(hunks)-1]
		}
		cur.OldEnd = offsets[e.a1]
		cur.Text += strings.Join(b[e.b0:e.b1], "")
	}
	return hunks
}

// unifiedDiff writes the edit script as a unified diff with ctx lines of
// context, hunk headers and "\ No newline at end of file" markers; "" when
// nothing changed. name is the file's path in the --- and +++ lines.
// Within each run of changed lines the removed lines come first, as git
// writes them. The hunks are built here; go-diff prints them.
func unifiedDiff(name string, a, b []string, edits []edit, ctx int) string {
	fd := &diff.FileDiff{OrigName: "a/" + name, NewName: "b/" + name}
	// Group the changes whose gaps are small enough to share context.
	i := 0
	for i < len(edits) {
		if edits[i].kind == opEqual {
			i++
			continue
		}
		j := i // the group's last change
		for j+1 < len(edits) {
			if edits[j+1].kind != opEqual {
				j++ // a deletion next to an insertion
				continue
			}
			if j+2 < len(edits) && edits[j+1].a1-edits[j+1].a0 <= 2*ctx {
				j += 2 // a short gap: the next change joins the group
				continue
			}
			break
		}
		first, last := edits[i], edits[j]
		a0 := max(0, first.a0-ctx)
		b0 := first.b0 - (first.a0 - a0)
		a1 := min(len(a), last.a1+ctx)
		b1 := last.b1 + (a1 - last.a1)
		var hb hunkBody
		hb.context(a[a0:first.a0])
		for _, e := range edits[i : j+1] {
			switch e.kind {
			case opEqual:
				hb.context(a[e.a0:e.a1])
			case opDelete:
				hb.removed = append(hb.removed, a[e.a0:e.a1]...)
			case opInsert:
				hb.added = append(hb.added, b[e.b0:e.b1]...)
			}
		}
		hb.context(a[last.a1:a1])
		fd.Hunks = append(fd.Hunks, &diff.Hunk{
			OrigStartLine: hunkStart(a0, a1-a0), OrigLines: int32(a1 - a0),
			NewStartLine: hunkStart(b0, b1-b0), NewLines: int32(b1 - b0),
			OrigNoNewlineAt: hb.origNoEOLAt,
			Body:            hb.body,
		})
		i = j + 1
	}
	if fd.Hunks == nil {
		return ""
	}
	out, err := diff.PrintFileDiff(fd)
	if err != nil {
		return "" // printing to memory does not fail
	}
	return string(out)
}

// hunkBody builds a go-diff hunk body from lines that keep their
// terminators. go-diff marks a missing newline on the old side with an
// offset into the body, and on the new side by the body's lack of a final
// newline; the line without one is the last of its text, so it ends its
// side of the hunk.
type hunkBody struct {
	body           []byte
	origNoEOLAt    int32
	removed, added []string // the current run of changes, not yet written
}

// context writes the pending run of changes, then lines common to both
// sides.
func (h *hunkBody) context(lines []string) {
	h.flush()
	for _, l := range lines {
		h.line(' ', l)
	}
}

func (h *hunkBody) flush() {
	for _, l := range h.removed {
		h.line('-', l)
		if !strings.HasSuffix(l, "\n") {
			h.body = append(h.body, '\n')
			h.origNoEOLAt = int32(len(h.body))
		}
	}
	for _, l := range h.added {
		h.line('+', l)
	}
	h.removed, h.added = h.removed[:0], h.added[:0]
}

func (h *hunkBody) line(prefix byte, l string) {
	h.body = append(h.body, prefix)
	h.body = append(h.body, l...)
}

// hunkStart is the first line of one side of a hunk header: 1-based, or
// for an empty side the line before it.
func hunkStart(start, count int) int32 {
	if count == 0 {
		return int32(start)
	}
	return int32(start + 1)
}

// LineHunks are the regions of old, whole lines in byte offsets, that new
// replaces, each with its replacement: what a line diff of the two texts
// says changed.
func LineHunks(old, new string) Hunks {
	a, b := splitKeep(old), splitKeep(new)
	return changeHunks(a, b, diffLines(a, b))
}
