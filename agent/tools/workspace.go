package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// folder is one workspace root.
type folder struct {
	root string // clean absolute path, as configured (the editor's view)
	real string // root with its symbolic links resolved
}

// target is a path a tool was asked about, resolved and confined.
type target struct {
	abs string // absolute and clean, as the editor knows it (not symlink-resolved)
	// rel is how results name the file: slash-separated and relative to
	// the first folder; absolute for other folders and the spill dir.
	rel    string
	folder int // index in Set.folders; -1 for the spill dir
}

// resolve turns a path from the model into a confined target. Relative
// paths are taken against the first folder (or, when the file is missing
// there, another folder that has it). The path must stay inside a folder
// (or the spill dir when spill is set), lexically and after its symbolic
// links are resolved, so that neither `..` nor a link can reach outside.
func (s *Set) resolve(p string, spill bool) (target, error) {
	if strings.TrimSpace(p) == "" {
		return target{}, errors.New("the path is empty")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return target{}, fmt.Errorf("the path %q contains a NUL byte", p)
	}
	orig := p
	p = filepath.FromSlash(p)
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
	} else {
		abs = filepath.Join(s.folders[0].root, p)
		if len(s.folders) > 1 && !exists(abs) {
			for _, f := range s.folders[1:] {
				if alt := filepath.Join(f.root, p); within(f.root, alt) && exists(alt) {
					abs = alt
					break
				}
			}
		}
	}
	t := target{abs: abs, folder: -1}
	for i, f := range s.folders {
		if within(f.root, abs) {
			t.folder = i
			break
		}
	}
	if t.folder < 0 && !(spill && s.spillDir != "" && within(s.spillDir, abs)) {
		return target{}, fmt.Errorf("%s is outside the workspace (%s); use a path inside it", orig, s.rootList())
	}
	real, err := realPath(abs)
	if err != nil {
		return target{}, fmt.Errorf("cannot resolve %s: %w", orig, err)
	}
	if !s.inside(real, spill) {
		return target{}, fmt.Errorf("%s leads through a symbolic link to %s, outside the workspace; use a path inside it", orig, real)
	}
	t.rel = abs
	if t.folder == 0 {
		rel, err := filepath.Rel(s.folders[0].root, abs)
		if err == nil {
			t.rel = filepath.ToSlash(rel)
		}
	}
	return t, nil
}

// folderRel is abs relative to the workspace folder that holds it, with
// forward slashes; rel when no folder does.
func (s *Set) folderRel(abs, rel string) string {
	for _, f := range s.folders {
		if within(f.root, abs) {
			if r, err := filepath.Rel(f.root, abs); err == nil {
				return filepath.ToSlash(r)
			}
		}
	}
	return rel
}

// protection says why the file at abs is protected, judged by its path
// in the workspace and by where its symbolic links lead: sub/cfg linked to
// .git/config is .git/config.
func (s *Set) protection(abs, rel string) string {
	if why := Protection(s.folderRel(abs, rel)); why != "" {
		return why
	}
	real, err := realPath(abs)
	if err != nil {
		return ""
	}
	for _, f := range s.folders {
		if within(f.real, real) {
			if r, err := filepath.Rel(f.real, real); err == nil {
				if why := Protection(filepath.ToSlash(r)); why != "" {
					return why + " (" + rel + " leads there through a symbolic link)"
				}
			}
		}
	}
	return ""
}

// Recheck judges p's file again as its symbolic links stand now, for a
// front end that writes it itself long after the proposal was made (a
// question to the user between): it must still resolve inside root, and
// lead to no protected path the proposal did not say it touches. A link
// put in place meanwhile cannot carry the write elsewhere.
func Recheck(root string, p Proposal) error {
	q, err := Rejudge([]string{root}, p)
	if err != nil {
		return err
	}
	if p.Protected == "" && q.Protected != "" {
		return errors.New(q.Protected)
	}
	return nil
}

// Rejudge judges p's file again as the file system stands now, every
// component's symbolic links resolved, for a front end about to send or
// write it: an error when it now leads outside every root (or cannot be
// resolved), else p with Protected set when it is protected now (sub/d
// replaced by a link to ../.git since the proposal makes sub/d/config
// .git/config). A Protected already set is kept.
func Rejudge(roots []string, p Proposal) (Proposal, error) {
	real, err := realPath(p.Abs)
	if err != nil {
		return p, fmt.Errorf("cannot resolve %s: %w", p.Path, err)
	}
	for _, root := range roots {
		rr, err := realPath(filepath.Clean(root))
		if err != nil || !within(rr, real) {
			continue
		}
		if p.Protected != "" {
			return p, nil
		}
		if rel, err := filepath.Rel(filepath.Clean(root), p.Abs); err == nil && within(filepath.Clean(root), p.Abs) {
			if why := Protection(filepath.ToSlash(rel)); why != "" {
				p.Protected = why
				return p, nil
			}
		}
		if rel, err := filepath.Rel(rr, real); err == nil {
			if why := Protection(filepath.ToSlash(rel)); why != "" {
				p.Protected = fmt.Sprintf("%s now leads through a symbolic link to %s: %s", p.Path, filepath.ToSlash(rel), why)
			}
		}
		return p, nil
	}
	return p, fmt.Errorf("%s now leads through a symbolic link to %s, outside the workspace", p.Path, real)
}

// inside reports whether the symlink-resolved path real is in a folder, or
// in the spill dir when spill is set.
func (s *Set) inside(real string, spill bool) bool {
	for _, f := range s.folders {
		if within(f.real, real) {
			return true
		}
	}
	if spill && s.spillDir != "" {
		if sr, err := realPath(s.spillDir); err == nil && within(sr, real) {
			return true
		}
	}
	return false
}

// confined reports whether abs, a path found by walking a folder, resolves
// inside the workspace; links that leave it are skipped by glob and grep.
func (s *Set) confined(abs string) bool {
	real, err := realPath(abs)
	return err == nil && s.inside(real, false)
}

func (s *Set) rootList() string {
	roots := make([]string, len(s.folders))
	for i, f := range s.folders {
		roots[i] = f.root
	}
	return strings.Join(roots, ", ")
}

// within reports whether p is root or below it; both must be clean.
func within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// realPath resolves the symbolic links of p's longest existing prefix and
// appends the rest, which does not exist yet (a file to create). A broken
// link on the way is an error: what it would create is unknown.
func realPath(p string) (string, error) {
	cur, tail := p, ""
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, tail), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%s is a broken symbolic link", cur)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		tail = filepath.Join(filepath.Base(cur), tail)
		cur = parent
	}
}
