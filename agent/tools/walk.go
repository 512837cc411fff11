package tools

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxWalk bounds the entries one walk visits, so that a search of a huge
// tree without a .gitignore ends.
const maxWalk = 200_000

// walk visits the files of folder fi below the directory start (relative,
// slash-separated; "" for the folder itself) in lexical order, skipping
// .git, what .gitignore files exclude, and symbolic links that lead
// outside the workspace or to directories. prune, when set, is asked
// whether a directory can hold anything of interest. The start directory
// itself is walked even if it is ignored: the model asked for it. It
// reports whether the walk stopped at maxWalk.
func (s *Set) walk(ctx context.Context, fi int, start string, prune func(dir string) bool, visit func(rel, abs string)) (truncated bool, err error) {
	root := s.folders[fi].root
	stack := s.rootIgnores(root)
	// The ignore files of the directories above start apply below it.
	if start != "" {
		stack = loadIgnore(stack, root, "")
		parts := strings.Split(start, "/")
		for i := range parts[:len(parts)-1] {
			stack = loadIgnore(stack, root, strings.Join(parts[:i+1], "/"))
		}
	}
	n := 0
	var walkDir func(dir string, stack ignoreStack) error
	walkDir = func(dir string, stack ignoreStack) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		stack = loadIgnore(stack, root, dir)
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
		if err != nil {
			return nil // an unreadable directory is skipped, not fatal
		}
		for _, e := range entries {
			if n++; n > maxWalk {
				truncated = true
				return fs.SkipAll
			}
			name := e.Name()
			rel := path.Join(dir, name)
			abs := filepath.Join(root, filepath.FromSlash(rel))
			switch t := e.Type(); {
			case t.IsDir():
				if name == ".git" || stack.ignored(rel, true) || (prune != nil && !prune(rel)) {
					continue
				}
				if err := walkDir(rel, stack); err != nil {
					return err
				}
			case t.IsRegular():
				if !stack.ignored(rel, false) {
					visit(rel, abs)
				}
			case t&fs.ModeSymlink != 0:
				if stack.ignored(rel, false) {
					continue
				}
				if st, err := os.Stat(abs); err == nil && st.Mode().IsRegular() && s.confined(abs) {
					visit(rel, abs)
				}
			}
		}
		return nil
	}
	err = walkDir(start, stack)
	if err == fs.SkipAll {
		err = nil
	}
	return truncated, err
}

// rootIgnores is the stack a walk of root starts with: .git/info/exclude
// when present.
func (s *Set) rootIgnores(root string) ignoreStack {
	if data, err := os.ReadFile(filepath.Join(root, ".git", "info", "exclude")); err == nil {
		return ignoreStack{parseIgnore("", data)}
	}
	return nil
}

// loadIgnore adds dir's .gitignore, if it has one, to a copy of the stack.
func loadIgnore(stack ignoreStack, root, dir string) ignoreStack {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dir), ".gitignore"))
	if err != nil {
		return stack
	}
	f := parseIgnore(dir, data)
	if len(f.rules) == 0 {
		return stack
	}
	return append(stack[:len(stack):len(stack)], f)
}
