package repomap

import (
	"math"
	"path"
	"unicode"
	"unicode/utf8"
)

// Ranking constants.
const (
	// damping is PageRank's: the share of a file's rank that flows along
	// its references; the rest returns to the teleport distribution.
	damping = 0.85
	// focusShare is the part of the teleport distribution given to the
	// focus files when there are any; the rest is spread over all files.
	focusShare = 0.5
	// spread is the part of a file's rank its symbols share evenly; the
	// rest goes to them in proportion to the references they receive.
	spread = 0.1

	maxIterations = 100
	tolerance     = 1e-12
)

// An edge says that file from uses name, which file to defines, with
// weight w.
type edge struct {
	from, to int32
	w        float64
	name     string
}

// rank computes each file's PageRank and each symbol's score.
//
// The graph has a node per file and an edge from a file to each other file
// that defines a name it uses, weighted by √(uses) and split evenly when
// several files define the name. A Go name that is not exported links
// only files in the same directory (its package). The walk teleports to
// every file alike, or with focus files to those for focusShare of the
// time; a file that uses nothing others define teleports too.
//
// A symbol's score is its file's rank shared out: spread evenly over the
// file's symbols, the rest in proportion to the rank that flows in along
// edges labelled with the symbol's name. So a file always scores at least
// as high as its best symbol, and a symbol others use outranks one no one
// does.
//
// The arithmetic runs in a fixed order and every product is rounded
// explicitly (float64(…) forbids fused multiply-adds), so the scores are
// the same bits on every platform.
func rank(files []*file, focus map[string]bool) (fileRank []float64, symScore [][]float64) {
	n := len(files)
	if n == 0 {
		return nil, nil
	}
	defs := make(map[string][]int32)
	for i, f := range files {
		for _, s := range f.syms {
			for _, name := range s.defines {
				d := defs[name]
				if len(d) == 0 || d[len(d)-1] != int32(i) {
					defs[name] = append(d, int32(i))
				}
			}
		}
	}
	dirs := make([]string, n)
	for i, f := range files {
		dirs[i] = path.Dir(f.path)
	}

	var edges []edge
	out := make([]float64, n)
	var to []int32
	for a, f := range files {
		for _, r := range f.refs {
			d := defs[r.Name]
			if len(d) == 0 {
				continue
			}
			to = to[:0]
			for _, b := range d {
				if int(b) == a || files[b].lang == langGo && !exported(r.Name) && dirs[b] != dirs[a] {
					continue
				}
				to = append(to, b)
			}
			if len(to) == 0 {
				continue
			}
			w := math.Sqrt(float64(r.Count)) / float64(len(to))
			for _, b := range to {
				edges = append(edges, edge{from: int32(a), to: b, w: w, name: r.Name})
				out[a] += w
			}
		}
	}

	p := teleport(files, focus)
	r := make([]float64, n)
	copy(r, p)
	next := make([]float64, n)
	share := make([]float64, n)
	for range maxIterations {
		dangling := 0.0
		for a := range n {
			if out[a] == 0 {
				dangling += r[a]
			} else {
				share[a] = float64(damping*r[a]) / out[a]
			}
		}
		for b := range n {
			next[b] = float64((1-damping)*p[b]) + float64(float64(damping*dangling)*p[b])
		}
		for _, e := range edges {
			next[e.to] += float64(share[e.from] * e.w)
		}
		delta := 0.0
		for i := range n {
			delta += math.Abs(next[i] - r[i])
		}
		r, next = next, r
		if delta < tolerance {
			break
		}
	}

	// The rank that flowed in along each edge goes to the symbols of the
	// target file that define the edge's name.
	flow := make([][]float64, n)
	byName := make([]map[string][]int, n)
	for _, e := range edges {
		b := e.to
		if byName[b] == nil {
			byName[b] = make(map[string][]int)
			for j, s := range files[b].syms {
				for _, name := range s.defines {
					byName[b][name] = append(byName[b][name], j)
				}
			}
			flow[b] = make([]float64, len(files[b].syms))
		}
		syms := byName[b][e.name]
		f := float64(r[e.from]*e.w) / out[e.from] / float64(len(syms))
		for _, j := range syms {
			flow[b][j] += f
		}
	}
	symScore = make([][]float64, n)
	for b, f := range files {
		ns := len(f.syms)
		if ns == 0 {
			continue
		}
		total := 0.0
		for _, x := range flow[b] {
			total += x
		}
		sc := make([]float64, ns)
		for j := range sc {
			if total > 0 {
				sc[j] = r[b] * (spread/float64(ns) + float64((1-spread)*flow[b][j])/total)
			} else {
				sc[j] = r[b] / float64(ns)
			}
		}
		symScore[b] = sc
	}
	return r, symScore
}

// teleport is where a random walk restarts: every file alike, or with
// focus files present, focusShare of the time one of them.
func teleport(files []*file, focus map[string]bool) []float64 {
	n := len(files)
	p := make([]float64, n)
	nf := 0
	for _, f := range files {
		if focus[f.path] {
			nf++
		}
	}
	base := 1.0 / float64(n)
	if nf > 0 {
		base = (1 - focusShare) / float64(n)
	}
	for i, f := range files {
		p[i] = base
		if focus[f.path] {
			p[i] += focusShare / float64(nf)
		}
	}
	return p
}

// exported reports whether a Go name is visible outside its package.
func exported(name string) bool {
	r, _ := utf8.DecodeRuneInString(name)
	return unicode.IsUpper(r)
}
