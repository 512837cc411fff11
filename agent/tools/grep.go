package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// Limits of the grep tool.
const (
	grepMax      = 2000    // matches listed
	grepLineLen  = 400     // longer matching lines are clipped
	grepFileSize = 2 << 20 // larger files are not searched
)

type grepArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

func (s *Set) grep(ctx context.Context, raw json.RawMessage) Result {
	var a grepArgs
	if r := decode(GrepTool, raw, &a); r != nil {
		return *r
	}
	if a.Pattern == "" {
		return failf(GrepTool + ` needs "pattern", a Go regular expression, such as {"pattern":"func \\w+Handler"}`)
	}
	p := contextwin.Payload{Kind: contextwin.Search, Path: a.Pattern}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return Result{Error: true, Payload: p,
			Content: fmt.Sprintf(GrepTool+": the pattern is not a valid Go regular expression: %v; RE2 has no lookaround or backreferences, and literal ( [ { . * + ? need a backslash", err)}
	}
	files, where, truncated, why := s.grepFiles(ctx, a.Path)
	if why != "" {
		return Result{Error: true, Payload: p, Content: why}
	}
	var b strings.Builder
	matches, large, err := s.grepLines(ctx, re, files, &b)
	if err != nil {
		return Result{Error: true, Payload: p, Content: fmt.Sprintf(GrepTool+" stopped: %v", err)}
	}
	if matches == 0 {
		b.WriteString(fmt.Sprintf("no matches for %s in %s", a.Pattern, where))
	}
	if matches > grepMax {
		fmt.Fprintf(&b, "… and %d more matches (narrow the pattern or the path)\n", matches-grepMax)
	}
	if len(large) > 0 {
		fmt.Fprintf(&b, "\n(not searched, over 2 MB: %s)", strings.Join(large[:min(len(large), 5)], ", "))
		if len(large) > 5 {
			fmt.Fprintf(&b, " and %d more", len(large)-5)
		}
	}
	if truncated {
		fmt.Fprintf(&b, "\n(the search stopped after %d entries; give a narrower path)", maxWalk)
	}
	return Result{Content: strings.TrimSpace(b.String()), Payload: p}
}

// grepFile is a file grep searches: its display name and absolute path.
type grepFile struct{ name, abs string }

// grepFiles lists the files to search under path ("" or "." for the whole
// workspace), sorted by display name; where names what is searched, and
// truncated says the walk stopped at maxWalk entries. why is the message
// for the model when path cannot be searched, "" otherwise.
func (s *Set) grepFiles(ctx context.Context, path string) (files []grepFile, where string, truncated bool, why string) {
	where = "the workspace"
	var err error
	if strings.TrimSpace(path) != "" && path != "." {
		t, err := s.resolve(path, true)
		if err != nil {
			return nil, "", false, GrepTool + ": " + err.Error()
		}
		where = t.rel
		st, err := os.Stat(t.abs)
		if err != nil {
			return nil, "", false, fmt.Sprintf(GrepTool+": %s does not exist; give a directory or file in the workspace, or leave out path to search it all", t.rel)
		}
		switch {
		case !st.IsDir():
			files = append(files, grepFile{t.rel, t.abs})
		case t.folder < 0:
			return nil, "", false, GrepTool + ": give a file of the spill directory, not the directory itself"
		default:
			start, _ := filepath.Rel(s.folders[t.folder].root, t.abs)
			start = filepath.ToSlash(start)
			if start == "." {
				start = ""
			}
			truncated, err = s.walk(ctx, t.folder, start, nil, func(rel, abs string) {
				files = append(files, grepFile{s.display(t.folder, rel), abs})
			})
			if err != nil {
				return nil, "", false, fmt.Sprintf(GrepTool+" stopped: %v", err)
			}
		}
	} else {
		truncated, err = s.walk(ctx, 0, "", nil, func(rel, abs string) {
			files = append(files, grepFile{rel, abs})
		})
		if err != nil {
			return nil, "", false, fmt.Sprintf(GrepTool+" stopped: %v", err)
		}
	}
	slices.SortFunc(files, func(x, y grepFile) int { return strings.Compare(x.name, y.name) })
	return files, where, truncated, ""
}

// grepLines writes the first grepMax lines of files that match re to b,
// as path:line: text, and counts all matches. large are the files too
// large to search; err is set when ctx ended the search.
func (s *Set) grepLines(ctx context.Context, re *regexp.Regexp, files []grepFile, b *strings.Builder) (matches int, large []string, err error) {
	// Every match starts with the literal prefix, if the pattern has one:
	// files without it need no line-by-line look.
	prefix, _ := re.LiteralPrefix()
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return matches, large, err
		}
		text, ok := s.searchable(f.abs, &large, f.name)
		if !ok || (prefix != "" && !strings.Contains(text, prefix)) {
			continue
		}
		for i, line := range splitLines(text) {
			if !re.MatchString(line) {
				continue
			}
			if matches++; matches <= grepMax {
				fmt.Fprintf(b, "%s:%d: %s\n", f.name, i+1, validUTF8(clipWithCount(line, grepLineLen)))
			}
		}
	}
	return matches, large, nil
}

// searchable returns the text grep searches in a file: the open buffer if
// any, else the file unless it is too large (noted in large) or binary.
func (s *Set) searchable(abs string, large *[]string, name string) (string, bool) {
	if s.buffers != nil {
		if text, _, ok := s.buffers.Open(abs); ok {
			return text, !isBinary([]byte(text))
		}
	}
	st, err := os.Stat(abs)
	if err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	if st.Size() > grepFileSize {
		*large = append(*large, name)
		return "", false
	}
	data, err := os.ReadFile(abs)
	if err != nil || isBinary(data) {
		return "", false
	}
	return string(data), true
}
