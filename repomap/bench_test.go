package repomap

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/repomap/internal/cmem"
	"golang.org/x/tools/txtar"
)

// openFiles is n files as an editor might have open: this repository's Go
// files, repeated under copyN/ directories until there are n.
func openFiles(b *testing.B, n int) []txtar.File {
	b.Helper()
	var repo []txtar.File
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			repo = append(repo, txtar.File{Name: filepath.ToSlash(strings.TrimPrefix(p, "../")), Data: data})
		}
		return nil
	})
	if err != nil || len(repo) == 0 {
		b.Fatalf("reading the repository's Go files: %v", err)
	}
	var out []txtar.File
	for i := 0; len(out) < n; i++ {
		for _, f := range repo[:min(len(repo), n-len(out))] {
			out = append(out, txtar.File{Name: fmt.Sprintf("copy%d/%s", i, f.Name), Data: f.Data})
		}
	}
	return out
}

func totalBytes(files []txtar.File) int {
	n := 0
	for _, f := range files {
		n += len(f.Data)
	}
	return n
}

// Ranking and rendering the map of 500 files already parsed: what a
// shrink event or a new session pays.
func BenchmarkRender500(b *testing.B) {
	files := openFiles(b, 500)
	m := build(files)
	defer m.Close()
	m.SetFocus(files[0].Name, files[1].Name)
	b.ReportMetric(float64(totalBytes(files))/500, "src-B/file")
	for b.Loop() {
		m.Render(12000)
	}
}

// Opening 500 files at once and rendering their map: every file parsed
// from scratch.
func BenchmarkBuild500(b *testing.B) {
	files := openFiles(b, 500)
	for b.Loop() {
		m := build(files)
		m.Render(12000)
		m.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/500, "ns/file")
}

// One keystroke in an open file, in a map of 500: the incremental reparse
// and the file's extraction. The file is the median-sized one of this
// repository, its largest, or a generated one of 256 KiB.
func BenchmarkUpdate(b *testing.B) {
	files := openFiles(b, 500)
	bySize := make([]txtar.File, len(files))
	copy(bySize, files)
	sortBySize(bySize)
	// And a generated file at half the parse limit.
	var big []byte
	for i := 0; len(big) < MaxParseBytes/2; i++ {
		big = fmt.Appendf(big, "// F%d doubles n.\nfunc F%d(n int) int {\n\tif n > %d {\n\t\treturn F%d(n - 1)\n\t}\n\treturn 2 * n\n}\n\n", i, i, i, max(i-1, 0))
	}
	big = append([]byte("package big\n\n"), big...)
	for _, tc := range []struct {
		name string
		f    txtar.File
	}{
		{"median", bySize[len(bySize)/2]},
		{"largest", bySize[len(bySize)-1]},
		{"256KiB", txtar.File{Name: "big/big.go", Data: big}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m := build(files)
			defer m.Close()
			typed := splice(tc.f.Data, len(tc.f.Data)/2, 0, "x")
			// The file has been edited before: its tree is among those
			// kept.
			m.Update(tc.f.Name, typed)
			m.Update(tc.f.Name, tc.f.Data)
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					m.Update(tc.f.Name, typed)
				} else {
					m.Update(tc.f.Name, tc.f.Data)
				}
				i++
			}
			b.ReportMetric(float64(len(tc.f.Data)), "file-B")
		})
	}
}

func sortBySize(fs []txtar.File) {
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && len(fs[j].Data) < len(fs[j-1].Data); j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}

// Memory a file costs while open: Go heap (its copy of the content,
// symbols and references) and C heap (the syntax trees, of which the map
// keeps keepTrees), per file of 500 and per tree.
func BenchmarkMemoryPerFile(b *testing.B) {
	files := openFiles(b, 500)
	var goBytes, cBytes float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c0 := cmem.InUse()
		m := build(files)
		runtime.GC()
		runtime.ReadMemStats(&after)
		c1 := cmem.InUse()
		goBytes = float64(after.HeapAlloc) - float64(before.HeapAlloc)
		cBytes = float64(c1 - c0)
		if c0 < 0 {
			cBytes = -1
		}
		runtime.KeepAlive(m)
		m.Close()
	}
	b.ReportMetric(goBytes/float64(len(files)), "go-B/file")
	b.ReportMetric(cBytes/float64(len(files)), "c-B/file")
	b.ReportMetric(cBytes/float64(min(len(files), keepTrees)), "c-B/tree")
	b.ReportMetric(float64(totalBytes(files))/float64(len(files)), "src-B/file")
}

// Building the map of a large repository, every file parsed once and the
// map rendered: what `reika-lsp map` and a session's first map of a big
// workspace pay. The time per file stays flat as the repository grows
// (run with -benchtime 1x; for 100k files, run reika-lsp map on a
// generated tree, as RELIABILITY.md says).
func BenchmarkBuildLarge(b *testing.B) {
	for _, n := range []int{5000, 20000} {
		b.Run(fmt.Sprintf("%dfiles", n), func(b *testing.B) {
			files := openFiles(b, n)
			for b.Loop() {
				m := build(files)
				m.Render(12000)
				m.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/file")
		})
	}
}
