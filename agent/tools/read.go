package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// Limits of the read tool.
const (
	readLines    = 2000      // lines shown by default, and at most
	readLineLen  = 2000      // longer lines are clipped
	readMaxBytes = 256 << 10 // a page stops early past this much output
	maxFileSize  = 20 << 20  // read and edit refuse larger files
)

type readArgs struct {
	Path   string  `json:"path"`
	Offset flexInt `json:"offset"`
	Limit  flexInt `json:"limit"`
}

func (s *Set) read(_ context.Context, raw json.RawMessage) Result {
	var a readArgs
	if r := decode(ReadTool, raw, &a); r != nil {
		return *r
	}
	if strings.TrimSpace(a.Path) == "" {
		return failf(`read needs "path": the file to read, relative to the workspace root, such as {"path":"main.go"}`)
	}
	t, err := s.resolve(a.Path, true)
	if err != nil {
		return failf(ReadTool+": %v", err)
	}
	text, _, err := s.current(t, ReadTool)
	if err != nil {
		return failf("%v", err)
	}
	lines := splitLines(text)
	total := len(lines)
	p := contextwin.Payload{Kind: contextwin.Read, Path: t.rel, Total: total}
	file := &FileText{Path: t.rel, Abs: t.abs, Text: text}
	if total == 0 {
		return Result{Content: fmt.Sprintf("(%s is empty)", t.rel), Payload: p, Read: file}
	}
	from := max(a.Offset.n, 1)
	if from > total {
		return Result{Error: true, Payload: p,
			Content: fmt.Sprintf("offset %d is past the end of %s, which has %s; read from offset=1 or a smaller offset", from, t.rel, plural(total, "line"))}
	}
	limit := a.Limit.n
	if limit <= 0 || limit > readLines {
		limit = readLines
	}
	to := min(total, from+limit-1)
	var b strings.Builder
	for n := from; n <= to; n++ {
		if b.Len() > readMaxBytes {
			to = n - 1
			break
		}
		fmt.Fprintf(&b, "%6d\t%s\n", n, validUTF8(clipWithCount(lines[n-1], readLineLen)))
	}
	if to < total {
		fmt.Fprintf(&b, "… %s more; read with offset=%d", plural(total-to, "line"), to+1)
	}
	p.From, p.To = from, to
	return Result{Content: strings.TrimSuffix(b.String(), "\n"), Payload: p, Read: file}
}

// current returns the text of the file at t: the open editor buffer if
// there is one, with its version, else the file on disk, with version -1.
// Directories, missing, huge and binary files are errors that say what to
// do instead.
func (s *Set) current(t target, tool string) (text string, version int32, err error) {
	if s.buffers != nil {
		if text, v, ok := s.buffers.Open(t.abs); ok {
			if isBinary([]byte(text)) {
				return "", 0, fmt.Errorf("%s: %s looks like a binary file; %s works on text files only", tool, t.rel, tool)
			}
			return text, v, nil
		}
	}
	st, err := os.Stat(t.abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		hint := "find files with " + GlobTool
		if tool == EditTool {
			hint = "create a new file with " + WriteTool + ", or find the right path with " + GlobTool
		}
		return "", 0, fmt.Errorf("%s: %s does not exist; %s", tool, t.rel, hint)
	case err != nil:
		return "", 0, fmt.Errorf("%s: cannot open %s: %v", tool, t.rel, err)
	case st.IsDir():
		return "", 0, fmt.Errorf(`%s: %s is a directory; list its files with %s, such as {"pattern":%q}`, tool, t.rel, GlobTool, strings.TrimSuffix(t.rel, "/")+"/*")
	case !st.Mode().IsRegular():
		return "", 0, fmt.Errorf("%s: %s is not a regular file", tool, t.rel)
	case st.Size() > maxFileSize:
		return "", 0, fmt.Errorf("%s: %s is %d MB, over the %d MB limit; search it with %s, or look at parts with %s (head, sed -n)", tool, t.rel, st.Size()>>20, maxFileSize>>20, GrepTool, BashTool)
	}
	data, err := os.ReadFile(t.abs)
	if err != nil {
		return "", 0, fmt.Errorf("%s: cannot read %s: %v", tool, t.rel, err)
	}
	if isBinary(data) {
		return "", 0, fmt.Errorf("%s: %s looks like a binary file; %s works on text files only", tool, t.rel, tool)
	}
	return string(data), -1, nil
}
