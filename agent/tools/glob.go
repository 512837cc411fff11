package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// globMax is how many paths glob lists.
const globMax = 1000

type globArgs struct {
	Pattern string `json:"pattern"`
}

func (s *Set) glob(ctx context.Context, raw json.RawMessage) Result {
	var a globArgs
	if r := decode(GlobTool, raw, &a); r != nil {
		return *r
	}
	if strings.TrimSpace(a.Pattern) == "" {
		return failf(`glob needs "pattern", such as {"pattern":"**/*.go"}`)
	}
	p := contextwin.Payload{Kind: contextwin.Search, Path: a.Pattern}
	fi, pattern, err := s.relPattern(a.Pattern)
	if err != nil {
		return Result{Error: true, Content: GlobTool + ": " + err.Error(), Payload: p}
	}
	g := compileGlob(pattern)
	var found []string
	truncated, err := s.walk(ctx, fi, "", g.mayContain, func(rel, _ string) {
		if g.match(rel) {
			found = append(found, rel)
		}
	})
	if err != nil {
		return Result{Error: true, Content: fmt.Sprintf("glob %s stopped: %v", a.Pattern, err), Payload: p}
	}
	slices.Sort(found)
	if len(found) == 0 {
		msg := fmt.Sprintf("no files match %s", a.Pattern)
		if st, err := os.Stat(filepath.Join(s.folders[fi].root, filepath.FromSlash(pattern))); err == nil && st.IsDir() {
			msg += fmt.Sprintf("; it is a directory: list its files with %s/* or %s/**", strings.TrimSuffix(pattern, "/"), strings.TrimSuffix(pattern, "/"))
		} else if !strings.Contains(pattern, "/") {
			msg += fmt.Sprintf(" at the top level; to look in every directory use **/%s", pattern)
		}
		return Result{Content: msg, Payload: p}
	}
	var b strings.Builder
	for i, f := range found {
		if i == globMax {
			fmt.Fprintf(&b, "… and %d more (narrow the pattern)\n", len(found)-globMax)
			break
		}
		b.WriteString(s.display(fi, f))
		b.WriteByte('\n')
	}
	if truncated {
		fmt.Fprintf(&b, "(the search stopped after %d entries; narrow the pattern)\n", maxWalk)
	}
	return Result{Content: strings.TrimSuffix(b.String(), "\n"), Payload: p}
}

// relPattern turns a glob pattern into one relative to a folder: relative
// patterns belong to the first folder, absolute ones to the folder they
// start in. A pattern may not climb out with "..".
func (s *Set) relPattern(pattern string) (int, string, error) {
	if strings.IndexByte(pattern, 0) >= 0 {
		return 0, "", fmt.Errorf("the pattern %q contains a NUL byte", pattern)
	}
	p := filepath.ToSlash(pattern)
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".." {
			return 0, "", fmt.Errorf("the pattern %s climbs out with ..; patterns are relative to the workspace root (%s)", pattern, s.folders[0].root)
		}
	}
	if !strings.HasPrefix(p, "/") && !filepath.IsAbs(pattern) {
		return 0, strings.TrimPrefix(p, "./"), nil
	}
	for i, f := range s.folders {
		root := filepath.ToSlash(f.root)
		if p == root {
			return i, "", nil
		}
		if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(root, "/")+"/"); ok {
			return i, rest, nil
		}
	}
	return 0, "", fmt.Errorf("%s is outside the workspace (%s); use a pattern relative to the workspace root, such as **/*.go", pattern, s.rootList())
}

// display names a file found in folder fi as results show it.
func (s *Set) display(fi int, rel string) string {
	if fi == 0 {
		return rel
	}
	return filepath.Join(s.folders[fi].root, filepath.FromSlash(rel))
}
