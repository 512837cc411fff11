package synth

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Source is the repository at one commit, or a directory tree of another
// codebase: its text files, what the recordings read, grep, list, build
// and edit.
type Source struct {
	rev   string
	paths []string          // sorted
	files map[string]string // text files only
	dirs  []string          // sorted, "" for the root
	// module is the import path of the root, "" when a directory's path
	// is its import path (GOROOT/src); workdir is where its commands run,
	// as a build log shows it.
	module, workdir string
}

// importPath is the import path of the package in dir.
func (s *Source) importPath(dir string) string {
	if s.module == "" {
		return dir
	}
	return s.module + "/" + dir
}

// LoadSource reads the repository at root as it was at commit rev, through
// git archive: its regular, non-empty UTF-8 text files, less the engine
// captures and fuzz corpora.
func LoadSource(root, rev string) (*Source, error) {
	cmd := exec.Command("git", "-C", root, "archive", "--format=tar", rev)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git archive %s: %w", rev, err)
	}
	src := &Source{rev: rev, files: map[string]string{}, module: "github.com/reika-lsp/reika", workdir: "/work/reika"}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg || strings.HasPrefix(h.Name, "testdata/engine-captures/") || strings.Contains(h.Name, "/testdata/fuzz/") {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		if !isText(data) {
			continue
		}
		src.files[h.Name] = string(data)
	}
	src.index()
	return src, nil
}

// isText reports whether data is what a Source keeps: non-empty UTF-8
// text without NUL bytes.
func isText(data []byte) bool {
	return len(data) > 0 && bytes.IndexByte(data, 0) < 0 && utf8.Valid(data)
}

// index sets the sorted paths and directories of the files.
func (s *Source) index() {
	dirs := map[string]bool{"": true}
	for p := range s.files {
		s.paths = append(s.paths, p)
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	sort.Strings(s.paths)
	for d := range dirs {
		s.dirs = append(s.dirs, d)
	}
	sort.Strings(s.dirs)
}

// maxTreeFile is the largest file LoadTree keeps: larger ones are
// generated tables, not code a session reads.
const maxTreeFile = 1 << 20

// LoadTree reads the directory dir of the tree at root, a codebase that is
// not this repository (GOROOT/src), as a Source whose paths are relative
// to root and are their packages' import paths: the regular text files of
// up to 1 MiB, less testdata directories. rev names the tree in the
// recordings' headers (the Go version and dir).
func LoadTree(root, dir, rev string) (*Source, error) {
	src := &Source{rev: rev, files: map[string]string{}, workdir: root}
	err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxTreeFile {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !isText(data) {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		src.files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", filepath.Join(root, dir), err)
	}
	if len(src.files) == 0 {
		return nil, fmt.Errorf("load %s: no text files", filepath.Join(root, dir))
	}
	src.index()
	return src, nil
}

// goFiles lists the Go files under dir ("" for all), tests included or not.
func (s *Source) goFiles(dir string, tests bool) []string {
	var out []string
	for _, p := range s.paths {
		if !strings.HasSuffix(p, ".go") || (!tests && strings.HasSuffix(p, "_test.go")) {
			continue
		}
		if dir == "" || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	return out
}
