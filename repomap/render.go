package repomap

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Render returns the map in at most budget bytes: the most important
// files and symbols, grouped by file in path order, symbols in line order
// and nested under their class, impl, trait or module.
//
//	agent/run.go
//	  42: func Run(ctx context.Context, task Task) (Result, error)
//	py/shapes.py
//	  6: class Shape(Base)
//	    10: def area(self) -> float
//	dist/app.min.js (minified)
//	(not shown: 12 files, 340 symbols)
//
// Every file and every symbol is an entry with a score (rank.go); entries
// are taken best first, and an entry brings in what it needs to be read:
// its file's line and the symbols it is nested in. The size of the first
// k entries grows with k, so a binary search finds the most that fit,
// the last line counting what was left out. The same files, contents and
// focus always give the same bytes; a budget too small for anything gives
// "".
func (m *Map) Render(budget int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	files := m.sorted()
	fileRank, symScore := rank(files, m.focus)
	return render(files, fileRank, symScore, budget)
}

// An entry is a file without symbols (sym < 0) or a symbol, with its
// score. A file with symbols has no entry of its own: its line comes with
// its first symbol.
type entry struct {
	score float64
	file  int32
	sym   int32
}

const unshown = int(^uint(0) >> 1)

func render(files []*file, fileRank []float64, symScore [][]float64, budget int) string {
	var entries []entry
	totalSyms := 0
	for i, f := range files {
		if len(f.syms) == 0 {
			// Scored as the one symbol of its file, unused.
			entries = append(entries, entry{score: float64(fileRank[i] * spread), file: int32(i), sym: -1})
		}
		for j := range f.syms {
			entries = append(entries, entry{score: symScore[i][j], file: int32(i), sym: int32(j)})
		}
		totalSyms += len(f.syms)
	}
	// Best first; ties by path (files are in path order), then line.
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.file, b.file), cmp.Compare(a.sym, b.sym))
	})

	// One pass records when each file and symbol is first shown and the
	// size of each prefix of the entries.
	fileAt := make([]int, len(files))
	symAt := make([][]int, len(files))
	for i, f := range files {
		fileAt[i] = unshown
		symAt[i] = make([]int, len(f.syms))
		for j := range symAt[i] {
			symAt[i][j] = unshown
		}
	}
	size := make([]int, len(entries)+1)
	nfiles := make([]int, len(entries)+1) // files shown by the first k entries
	nsyms := make([]int, len(entries)+1)
	for k, e := range entries {
		cost, nf, ns := 0, 0, 0
		f := files[e.file]
		if fileAt[e.file] == unshown {
			fileAt[e.file] = k
			cost += len(header(f))
			nf++
		}
		for j := int(e.sym); j >= 0 && symAt[e.file][j] == unshown; j = f.syms[j].Container {
			symAt[e.file][j] = k
			cost += lineLen(f.syms[j])
			ns++
		}
		size[k+1], nfiles[k+1], nsyms[k+1] = size[k]+cost, nfiles[k]+nf, nsyms[k]+ns
	}
	fits := func(k int) bool {
		return size[k]+len(trailer(len(files)-nfiles[k], totalSyms-nsyms[k])) <= budget
	}
	// fits(k) is true up to some k and false after: an entry that adds a
	// file's line adds at least 2 bytes and one that adds a symbol's at
	// least 6, while the trailer loses at most a digit and an "s" per
	// count.
	k := sort.Search(len(entries)+1, func(k int) bool { return !fits(k) }) - 1
	if k < 0 {
		return ""
	}

	var b strings.Builder
	b.Grow(size[k] + 64)
	for i, f := range files {
		if fileAt[i] >= k {
			continue
		}
		b.WriteString(header(f))
		for j, s := range f.syms {
			if symAt[i][j] < k {
				writeLine(&b, s)
			}
		}
	}
	b.WriteString(trailer(len(files)-nfiles[k], totalSyms-nsyms[k]))
	return b.String()
}

// header is a file's line: its path, and the note when there is one.
func header(f *file) string {
	if f.note != "" {
		return clean(f.path) + " (" + f.note + ")\n"
	}
	return clean(f.path) + "\n"
}

// trailer is the last line of a map that leaves something out.
func trailer(files, syms int) string {
	if files == 0 && syms == 0 {
		return ""
	}
	return fmt.Sprintf("(not shown: %s, %s)\n", countNoun(files, "file"), countNoun(syms, "symbol"))
}

// countNoun is n and noun, in the plural unless n is 1: "1 file",
// "3 files".
func countNoun(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// lineLen is the length of a symbol's line as writeLine writes it.
func lineLen(s sym) int {
	digits := 1
	for n := s.Line; n >= 10; n /= 10 {
		digits++
	}
	return 2*(s.depth+1) + digits + len(": ") + len(s.Signature) + 1
}

func writeLine(b *strings.Builder, s sym) {
	for range s.depth + 1 {
		b.WriteString("  ")
	}
	b.WriteString(strconv.Itoa(s.Line))
	b.WriteString(": ")
	b.WriteString(s.Signature)
	b.WriteByte('\n')
}
