package repomap

import (
	"math"
	"path"
	"strings"
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
	// spread is the part of a file's rank not owed to references (what
	// teleports to it) that its symbols share evenly.
	spread = 0.1

	maxIterations = 100
	tolerance     = 1e-12

	// maxDefiners is how many files may define a name before a use of it
	// stops saying which of them a file uses (New, String, main, a vendored
	// copy): a file's use of such a name links only to the files of its
	// own directory that define it, and to none when as many of those do.
	// Without the bound the graph has an
	// edge from every user to every definer, which grows with the square
	// of the repository (100k files: 1.3 GB and four minutes).
	maxDefiners = 32
)

// An edge says that file from uses name, which file to defines, with
// weight w.
type edge struct {
	from, to int32
	w        float64
	name     string
}

// A def says that a file defines a name, and whether only as something
// called (a function, method or macro).
type def struct {
	file     int32
	callable bool
}

// rank computes each file's PageRank and each symbol's score.
//
// The graph has a node per file and an edge from a file to each other file
// that defines a name it uses. An edge's weight grows with the uses, as
// √uses (calls only, when the name is defined as a function or method:
// variables and fields share such names), and falls with how common the
// name is, as 1/√(files using it); a name several files define is split
// among them. Go's visibility holds: an unexported name links only files
// in the same directory (its package), and a test file's names only the
// package's test files. The walk teleports to every file alike, or,
// with focus files, to those for focusShare of the time; a file that uses
// nothing others define teleports too.
//
// A symbol's score is the rank that flows into its file along edges
// labelled with its name, plus an even share of spread times the rank the
// file has otherwise (by teleporting). So a symbol others use outranks one
// no one does. A focus file passes most of its rank on to the files it
// uses, so its own symbols share instead its whole teleport weight (at
// least focusShare over the number of focus files): the outline of the
// files the user works in comes right after the definitions they use
// most.
//
// The arithmetic runs in a fixed order, uses only operations IEEE 754
// rounds exactly (no math.Log, whose assembly differs by platform), and
// rounds every product explicitly (float64(…) forbids fused
// multiply-adds), so the scores are the same bits on every platform.
func rank(files []*file, focus map[string]bool) (fileRank []float64, symScore [][]float64) {
	if len(files) == 0 {
		return nil, nil
	}
	defs := definitions(files)
	edges, out := referenceEdges(files, defs, usersOf(files, defs), newVisibility(files))
	p := teleport(files, focus)
	r := pageRank(edges, out, p)
	flow := symbolInflow(files, edges, out, r)
	return r, symbolScores(files, focus, flow, r, p)
}

// definitions maps each name to the files that define it, in file order,
// one def per file: callable only when every symbol of that file that
// defines the name is a function, method or macro.
func definitions(files []*file) map[string][]def {
	defs := make(map[string][]def)
	for i, f := range files {
		for _, s := range f.syms {
			callable := s.Kind == Func || s.Kind == Method || s.Kind == Macro
			for name := range s.defines() {
				d := defs[name]
				if k := len(d) - 1; k >= 0 && d[k].file == int32(i) {
					d[k].callable = d[k].callable && callable
					continue
				}
				defs[name] = append(d, def{int32(i), callable})
			}
		}
	}
	return defs
}

// usersOf counts, for each defined name, the files that use it: how
// common the name is.
func usersOf(files []*file, defs map[string][]def) map[string]int {
	users := make(map[string]int, len(defs))
	for _, f := range files {
		for _, r := range f.refs {
			if _, ok := defs[r.Name]; ok {
				users[r.Name]++
			}
		}
	}
	return users
}

// visibility is what Go lets one file use of another's: per file, its
// directory (its package) and whether it is a Go test file.
type visibility struct {
	files  []*file
	dirs   []string
	goTest []bool
}

func newVisibility(files []*file) visibility {
	v := visibility{files: files, dirs: make([]string, len(files)), goTest: make([]bool, len(files))}
	for i, f := range files {
		v.dirs[i] = path.Dir(f.path)
		v.goTest[i] = f.lang == langGo && strings.HasSuffix(f.path, "_test.go")
	}
	return v
}

// visible reports whether file a can use what file b defines as name: in
// Go, an unexported name only within its package's directory, and
// anything in a test file only from the package's test files.
func (v visibility) visible(a, b int, name string) bool {
	if v.files[b].lang != langGo {
		return true
	}
	if v.goTest[b] && !v.goTest[a] || (v.goTest[b] || !exported(name)) && v.dirs[a] != v.dirs[b] {
		return false
	}
	return true
}

// referenceEdges are the graph's edges: from each file to each other file
// that defines a name it uses and that it can see, weighted √uses (calls
// only, for a callable definition) over √(files using the name) times
// the number of files defining it. out is each file's total outgoing
// weight.
func referenceEdges(files []*file, defs map[string][]def, users map[string]int, vis visibility) (edges []edge, out []float64) {
	out = make([]float64, len(files))
	type target struct {
		file int32
		uses int
	}
	var to []target
	near := map[string]map[string][]def{} // for names over maxDefiners: their definers by directory
	for a, f := range files {
		for _, r := range f.refs {
			to = to[:0]
			ds := defs[r.Name]
			if len(ds) > maxDefiners {
				byDir, ok := near[r.Name]
				if !ok {
					byDir = map[string][]def{}
					for _, d := range ds {
						byDir[vis.dirs[d.file]] = append(byDir[vis.dirs[d.file]], d)
					}
					near[r.Name] = byDir
				}
				if ds = byDir[vis.dirs[a]]; len(ds) > maxDefiners {
					continue // as common within the directory: says nothing
				}
			}
			for _, d := range ds {
				if int(d.file) == a || !vis.visible(a, int(d.file), r.Name) {
					continue
				}
				uses := r.Count
				if d.callable {
					uses = r.Calls
				}
				if uses > 0 {
					to = append(to, target{d.file, uses})
				}
			}
			if len(to) == 0 {
				continue
			}
			common := math.Sqrt(float64(users[r.Name])) * float64(len(to))
			for _, t := range to {
				w := math.Sqrt(float64(t.uses)) / common
				edges = append(edges, edge{from: int32(a), to: t.file, w: w, name: r.Name})
				out[a] += w
			}
		}
	}
	return edges, out
}

// pageRank iterates the walk from the teleport distribution p until the
// ranks move less than tolerance (at most maxIterations times): damping
// of a file's rank flows along its edges by weight, the rest and all the
// rank of a file with no edges teleports by p.
func pageRank(edges []edge, out, p []float64) []float64 {
	n := len(p)
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
	return r
}

// symbolInflow is, per file and symbol, the rank that flowed in along
// edges: each edge's rank goes to the symbols of its target file that
// define the edge's name, in equal parts. A file no edge reaches has nil.
func symbolInflow(files []*file, edges []edge, out, r []float64) [][]float64 {
	flow := make([][]float64, len(files))
	byName := make([]map[string][]int, len(files))
	for _, e := range edges {
		b := e.to
		if byName[b] == nil {
			byName[b] = make(map[string][]int)
			for j, s := range files[b].syms {
				for name := range s.defines() {
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
	return flow
}

// symbolScores is each symbol's inflow plus an even share of what its
// file has otherwise: spread times the rank not owed to inflow, or for a
// focus file its whole teleport weight.
func symbolScores(files []*file, focus map[string]bool, flow [][]float64, r, p []float64) [][]float64 {
	symScore := make([][]float64, len(files))
	for b, f := range files {
		ns := len(f.syms)
		if ns == 0 {
			continue
		}
		inflow := 0.0
		for _, x := range flow[b] {
			inflow += x
		}
		rest := float64(spread*max(r[b]-inflow, 0)) / float64(ns)
		if focus[f.path] {
			rest = p[b] / float64(ns)
		}
		sc := make([]float64, ns)
		for j := range sc {
			sc[j] = rest
			if flow[b] != nil {
				sc[j] += flow[b][j]
			}
		}
		symScore[b] = sc
	}
	return symScore
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
