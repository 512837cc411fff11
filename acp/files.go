package acp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent/tools"
)

// clientTimeout bounds a file request to the client: a client that does
// not answer leaves the agent to the disk.
const clientTimeout = 10 * time.Second

// buffers gives the agent the editor's text of the files the client told
// of or the agent changed, through fs/read_text_file when the client
// offers it (unsaved text included); other files are read from the disk.
type buffers struct{ s *session }

func (b buffers) Open(abs string) (string, int32, bool) {
	s := b.s
	if !s.srv.capabilities().Fs.ReadTextFile {
		return "", 0, false
	}
	s.mu.Lock()
	known := s.known[abs]
	s.mu.Unlock()
	if !known {
		return "", 0, false
	}
	text, err := s.readClient(s.srv.ctx, abs)
	if err != nil {
		return "", 0, false
	}
	return text, 0, true
}

func (s *session) readClient(ctx context.Context, abs string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	res, err := s.srv.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: s.id, Path: abs})
	if err != nil {
		return "", err
	}
	return res.Content, nil
}

// fileText is a file's text as the client has it (when it may be asked),
// else as the disk has it, and whether it exists.
func (s *session) fileText(ctx context.Context, abs string) (string, bool, error) {
	if text, _, ok := (buffers{s}).Open(abs); ok {
		return text, true, nil
	}
	b, err := os.ReadFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}

// propose lands a change: after the user's yes where it needs one (a
// protected path, or every change in the ask mode), written through
// fs/write_text_file when the client offers it, else to the disk, placed
// on the file's text as it is now (tools.PlanEdit). What landed is read
// back, and the outcome says it as it is.
func (s *session) propose(ctx context.Context, p tools.Proposal) (tools.Outcome, error) {
	name := p.Path
	// Judged as the file system stands now: a link put in place since the
	// proposal (sub/d made a link to ../.git) makes it protected.
	q, err := tools.Rejudge([]string{s.root}, p)
	if err != nil {
		return tools.Outcome{Reason: err.Error() + "; nothing was applied"}, nil
	}
	p = q
	if p.Protected != "" || tools.RunMode(ctx) == tools.AskAll {
		why := "every change asks first in this mode"
		if p.Protected != "" {
			why = p.Protected
		}
		switch s.permitChange(ctx, p, why) {
		case tools.Once, tools.ThisRun, tools.Always:
		case tools.Unasked:
			return tools.Outcome{Reason: "nobody could be asked about the change to " + name + "; nothing was applied"}, nil
		default:
			return tools.Outcome{Reason: "the user rejected the change to " + name}, nil
		}
	}
	// Placed on the text as it is now, by the language server's rule: a
	// hunk whose lines the user changed is refused, one they moved is
	// placed where they are.
	cur, exists, err := s.fileText(ctx, p.Abs)
	plan, done := tools.Place(p, name, tools.Current{Text: cur, Exists: exists}, err)
	if done != nil {
		return *done, nil
	}
	text := plan.Result()
	// And again just before it is written: the question may have waited
	// long, and the client writes through the links as they are then.
	if err := tools.Recheck(s.root, p); err != nil {
		return tools.Outcome{Reason: fmt.Sprintf("%v; nothing was applied", err)}, nil
	}
	viaClient := s.srv.capabilities().Fs.WriteTextFile
	if viaClient {
		wctx, cancel := context.WithTimeout(ctx, clientTimeout)
		_, err = s.srv.conn.WriteTextFile(wctx, sdk.WriteTextFileRequest{SessionId: s.id, Path: p.Abs, Content: text})
		cancel()
	} else {
		err = writeDisk(p.Abs, text, p.Create)
	}
	if err != nil {
		return tools.Outcome{Reason: fmt.Sprintf("writing %s failed: %v; nothing was applied", name, oneLine(err.Error()))}, nil
	}
	s.mu.Lock()
	s.known[p.Abs] = true
	s.mu.Unlock()
	if now, exists, err := s.fileText(ctx, p.Abs); err == nil && (!exists || now != text) {
		return tools.Outcome{Reason: name + " does not hold the change after it was written: the editor changed it or did not keep it"}, nil
	}
	out := tools.Outcome{Applied: true}
	if plan.Reanchored {
		out.Note = "The user had changed the file since you read it; the change was placed on their text. Read the file again before changing it further."
	}
	return out, nil
}

// writeDisk writes a file's new text, keeping its mode; a new file's
// directories are made.
func writeDisk(abs, text string, create bool) error {
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(abs); err == nil {
		mode = st.Mode().Perm()
		if mode&0o200 == 0 {
			// Root would write it all the same: the user's mark is kept.
			return fmt.Errorf("%s is read-only (mode %04o): not changed", filepath.Base(abs), mode)
		}
	} else if create {
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(abs, []byte(text), mode)
}

// pathOf is the path of a file: URI, or of an absolute path given as one.
func pathOf(uri string) (string, bool) {
	if filepath.IsAbs(uri) {
		return filepath.Clean(uri), true
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || !strings.HasPrefix(u.Path, "/") {
		return "", false
	}
	return filepath.Clean(filepath.FromSlash(u.Path)), true
}
