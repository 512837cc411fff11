package synth

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path"
	"sort"
	"strings"
	"unicode/utf8"
)

// Source is the repository at one commit: its text files, what the
// recordings read, grep, list, build and edit.
type Source struct {
	rev   string
	paths []string          // sorted
	files map[string]string // text files only
	dirs  []string          // sorted, "" for the root
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
	src := &Source{rev: rev, files: map[string]string{}}
	dirs := map[string]bool{"": true}
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
		if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) || len(data) == 0 {
			continue
		}
		src.files[h.Name] = string(data)
		src.paths = append(src.paths, h.Name)
		for d := path.Dir(h.Name); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	sort.Strings(src.paths)
	for d := range dirs {
		src.dirs = append(src.dirs, d)
	}
	sort.Strings(src.dirs)
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
