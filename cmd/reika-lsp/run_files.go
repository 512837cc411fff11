package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/reika-lsp/reika/agent/tools"
)

// diskEdits lands a headless run's proposals on the disk, where there is
// no editor: placed on the file as it is now by the front ends' rule
// (tools.PlanEdit), written whole under a temporary name and renamed over
// the file in its directory (the file's mode kept), inside an os.Root of
// the workspace so that no symbolic link carries the write out of it. A
// protected path is refused: nobody can be asked.
type diskEdits struct {
	root string
	// landing is held while a proposal is read, placed and written: two
	// changes to one file never interleave.
	landing sync.Mutex
	mu      sync.Mutex
	done    []string // workspace-relative paths changed, in order, once each
}

func newDiskEdits(root string) *diskEdits { return &diskEdits{root: root} }

// changed is the files the run changed, in the order it first changed
// them.
func (d *diskEdits) changed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.done...)
}

func (d *diskEdits) propose(_ context.Context, p tools.Proposal) (tools.Outcome, error) {
	d.landing.Lock()
	defer d.landing.Unlock()
	name := p.Path
	// Judged as the file system stands now: a link made since the
	// proposal can make the path protected, or lead out.
	q, err := tools.Rejudge([]string{d.root}, p)
	if err != nil {
		return tools.Outcome{Reason: err.Error() + "; nothing was applied"}, nil
	}
	if q.Protected != "" {
		return tools.Outcome{Reason: fmt.Sprintf("refused: non-interactive run; %s is protected (%s), and a headless run never changes a protected path: nothing was applied; tell the user the change instead", name, q.Protected)}, nil
	}
	cur, exists, err := diskText(p.Abs)
	plan, done := tools.Place(q, name, tools.Current{Text: cur, Exists: exists}, err)
	if done != nil {
		return *done, nil
	}
	if err := writeInside(d.root, p.Abs, plan.Result()); err != nil {
		return tools.Outcome{Reason: fmt.Sprintf("writing %s failed: %v; nothing was applied", name, err)}, nil
	}
	d.mu.Lock()
	if !containsString(d.done, name) {
		d.done = append(d.done, name)
	}
	d.mu.Unlock()
	out := tools.Outcome{Applied: true}
	if plan.Reanchored {
		out.Note = "The file had changed since you read it; the change was placed on its text as it is now. Read the file again before changing it further."
	}
	return out, nil
}

// diskText is a file's text and whether it exists.
func diskText(abs string) (string, bool, error) {
	b, err := os.ReadFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}

// writeInside writes text to the file at abs, below root, atomically: a
// temporary file in the same directory, synced, given the file's mode
// (0644 for a new one), then renamed over it. Every step goes through an
// os.Root of root's real path, which refuses a symbolic link that leads
// out of it; a link inside it is written through to its target, never
// replaced. A read-only file is not changed.
func writeInside(root, abs, text string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	rel, err := resolveBelow(realRoot, abs)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(realRoot)
	if err != nil {
		return err
	}
	defer r.Close()
	mode := fs.FileMode(0o644)
	switch st, err := r.Stat(rel); {
	case err == nil && !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", filepath.ToSlash(rel))
	case err == nil:
		mode = st.Mode().Perm()
		if mode&0o200 == 0 {
			return fmt.Errorf("%s is read-only (mode %04o): not changed", filepath.ToSlash(rel), mode)
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := r.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
			return err
		}
	default:
		return err
	}
	var tag [6]byte
	rand.Read(tag[:])
	tmp := filepath.Join(filepath.Dir(rel), "."+filepath.Base(rel)+".reika-"+hex.EncodeToString(tag[:]))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if err == nil {
		err = f.Chmod(mode) // exactly the file's mode, whatever the umask
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.Rename(tmp, rel)
	}
	if err != nil {
		r.Remove(tmp)
	}
	return err
}

// resolveBelow is abs relative to realRoot, the symbolic links of its
// longest existing part resolved (the rest does not exist yet); an error
// when that leads out of realRoot.
func resolveBelow(realRoot, abs string) (string, error) {
	dir, rest := filepath.Clean(abs), ""
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			full := filepath.Join(real, rest)
			rel, err := filepath.Rel(realRoot, full)
			if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return "", fmt.Errorf("%s leads to %s, outside the workspace", abs, full)
			}
			return rel, nil
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, fs.ErrNotExist) || parent == dir {
			return "", err
		}
		rest, dir = filepath.Join(filepath.Base(dir), rest), parent
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// approvals answers the tools' questions by the run's flags: nobody is
// there to ask. A refusal is what the model is told (tools.Config.Unasked)
// and what the printer shows.
type approvals struct {
	commands, network bool
	// sandboxed is set once the session started: commands run contained.
	sandboxed bool
	report    func(q tools.Question, refusal string)
}

func (a *approvals) ask(_ context.Context, q tools.Question) tools.Answer {
	refusal := a.refusal(q)
	a.report(q, refusal)
	if refusal != "" {
		return tools.Unasked
	}
	return tools.ThisRun
}

// refusal is why q is refused, "" when the flags allow it.
func (a *approvals) refusal(q tools.Question) string {
	const prefix = "refused: non-interactive run; "
	switch q.Kind {
	case tools.AskCommand:
		switch {
		case q.Outside:
			return prefix + "a headless run never runs a command outside the sandbox"
		case !a.commands:
			return prefix + "rerun with --allow-commands to allow commands that ask (they run in the sandbox)"
		case !a.sandboxed:
			return prefix + "there is no sandbox on this machine, and --allow-commands runs only contained commands"
		case q.Network && !a.network:
			return prefix + "rerun with --allow-network as well to allow a command the network"
		}
		return ""
	case tools.AskFetch:
		if !a.network {
			return prefix + "rerun with --allow-network to allow fetch_url to reach new hosts"
		}
		return ""
	case tools.AskMCP:
		return prefix + "a headless run calls no MCP tool (each call asks the user)"
	}
	return prefix + "nobody can be asked about it"
}
