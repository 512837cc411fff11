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

type writeArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

// write proposes a new file. It never replaces an existing one: that is
// edit's work, which shows the user what changes.
func (s *Set) write(ctx context.Context, raw json.RawMessage) Result {
	var a writeArgs
	if r := decode(WriteTool, raw, &a); r != nil {
		return *r
	}
	if strings.TrimSpace(a.Path) == "" {
		return failf(`write needs "path": the new file, relative to the workspace root`)
	}
	if a.Content == nil {
		return failf(`write needs "content": the whole text of the new file`)
	}
	t, err := s.resolve(a.Path, false)
	if err != nil {
		return failf(WriteTool+": %v", err)
	}
	p := contextwin.Payload{Kind: contextwin.Diff, Path: t.rel}
	if why := badName(s.folderRel(t.abs, t.rel)); why != "" {
		return Result{Error: true, Payload: p, Content: WriteTool + ": " + t.rel + " was not created: " + why}
	}
	open := false
	if s.buffers != nil {
		_, _, open = s.buffers.Open(t.abs)
	}
	st, err := os.Stat(t.abs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Result{Error: true, Payload: p, Content: fmt.Sprintf(WriteTool+": cannot create %s: %v", t.rel, err)}
	}
	if err == nil || open {
		what := "exists"
		if err == nil && st.IsDir() {
			what = "is a directory"
		} else if open {
			what = "exists (it is open in the editor)"
		}
		return Result{Error: true, Payload: p,
			Content: fmt.Sprintf("%s: %s %s; %s only creates new files: change it with %s (old_text/new_text or a diff)", WriteTool, t.rel, what, WriteTool, EditTool)}
	}
	return s.propose(ctx, Proposal{Path: t.rel, Abs: t.abs, New: *a.Content, Create: true})
}
