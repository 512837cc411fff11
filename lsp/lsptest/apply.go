package lsptest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// The wire shapes of a workspace edit, read here on their own terms.

type wsEdit struct {
	Changes           map[string][]textEdit     `json:"changes"`
	DocumentChanges   []json.RawMessage         `json:"documentChanges"`
	ChangeAnnotations map[string]wireAnnotation `json:"changeAnnotations"`
}

type wireAnnotation struct {
	Label             string `json:"label"`
	NeedsConfirmation bool   `json:"needsConfirmation"`
	Description       string `json:"description"`
}

type textEdit struct {
	Range        Range  `json:"range"`
	NewText      string `json:"newText"`
	AnnotationID string `json:"annotationId"`
}

type docChange struct {
	Kind         string `json:"kind"`
	URI          string `json:"uri"`
	AnnotationID string `json:"annotationId"`
	Options      *struct {
		Overwrite      bool `json:"overwrite"`
		IgnoreIfExists bool `json:"ignoreIfExists"`
	} `json:"options"`
	TextDocument *struct {
		URI     string `json:"uri"`
		Version *int32 `json:"version"`
	} `json:"textDocument"`
	Edits []textEdit `json:"edits"`
}

// staged is a file as a workspace edit is being applied to it.
type staged struct {
	abs     string
	text    string
	open    bool  // an editor document before the edit
	version int32 // its version then
	sent    int32 // the version the editor last sent of it
	create  bool  // the edit creates it on disk
	changes []map[string]any
	touched bool
}

// ApplyWorkspaceEdit applies a workspace edit as a careful editor does:
// all or nothing; a versioned document edit must be for the version the
// editor has (else it fails, as vscode-languageclient does); ranges must
// be inside the text, at character boundaries of the negotiated encoding,
// and must not overlap; a file is created only when the client said it
// can, never over an existing one unless asked. Edited documents that were
// not open are opened (didOpen), as editors load them into buffers; every
// changed document gets one didChange. It returns the change annotations
// that asked for confirmation ("label: description"); the user confirms.
//
// The edit is staged first (the per-kind appliers of docChangeKinds, or
// the plain changes), then committed: nothing changes unless all of it
// applies.
func (e *Editor) ApplyWorkspaceEdit(raw json.RawMessage) (confirmed []string, err error) {
	// An edit is checked against the buffers and made in one step, no
	// keystroke between.
	e.typing.Lock()
	defer e.typing.Unlock()
	var we wsEdit
	if err := json.Unmarshal(raw, &we); err != nil {
		e.violation("a workspace edit that does not decode: %v", err)
		return nil, err
	}
	c := e.cfg.Caps
	if len(we.DocumentChanges) > 0 && !c.DocumentChanges && !c.Neovim {
		e.violation("documentChanges sent to a client without workspace.workspaceEdit.documentChanges")
	}
	if len(we.ChangeAnnotations) > 0 && !c.Annotations {
		e.violation("changeAnnotations sent to a client without changeAnnotationSupport")
	}
	a := &applier{e: e, we: we, files: map[string]*staged{}, annotated: map[string]bool{}}
	stage := a.stageChanges
	if len(we.DocumentChanges) > 0 {
		stage = a.stageDocumentChanges
	}
	if err := stage(); err != nil {
		return nil, err
	}
	if err := a.commit(); err != nil {
		return nil, err
	}
	return a.confirmed, nil
}

// applier is one workspace edit being applied: the files it stages, in
// the order it first touches them, and the annotations the user confirms.
type applier struct {
	e         *Editor
	we        wsEdit
	files     map[string]*staged
	order     []*staged
	annotated map[string]bool // labels already confirmed
	confirmed []string
}

// docChangeKinds stage one entry of documentChanges, by its kind ("" is a
// text document edit); a kind not here (rename, delete) is one the fake
// editor does not do.
var docChangeKinds = map[string]func(a *applier, dc docChange, raw json.RawMessage) error{
	"":       (*applier).stageTextDocumentEdit,
	"create": (*applier).stageCreate,
}

// stageDocumentChanges stages documentChanges in their order.
func (a *applier) stageDocumentChanges() error {
	for _, raw := range a.we.DocumentChanges {
		var dc docChange
		if err := json.Unmarshal(raw, &dc); err != nil {
			a.e.violation("a document change that does not decode: %v", err)
			return err
		}
		stage, ok := docChangeKinds[dc.Kind]
		if !ok {
			stage = (*applier).refuseKind
		}
		if err := stage(a, dc, raw); err != nil {
			return err
		}
	}
	return nil
}

// stageChanges stages the plain changes map, by URI.
func (a *applier) stageChanges() error {
	uris := make([]string, 0, len(a.we.Changes))
	for uri := range a.we.Changes {
		uris = append(uris, uri)
	}
	sort.Strings(uris)
	for _, uri := range uris {
		abs, err := URIPath(uri)
		if err != nil {
			a.e.violation("changes for %q: %v", uri, err)
			return err
		}
		if err := a.edit(abs, nil, a.we.Changes[uri]); err != nil {
			return err
		}
	}
	return nil
}

func (a *applier) stageTextDocumentEdit(dc docChange, raw json.RawMessage) error {
	if dc.TextDocument == nil {
		a.e.violation("a document change with neither kind nor textDocument: %s", raw)
		return errors.New("malformed document change")
	}
	abs, err := URIPath(dc.TextDocument.URI)
	if err != nil {
		a.e.violation("a text document edit for %q: %v", dc.TextDocument.URI, err)
		return err
	}
	return a.edit(abs, dc.TextDocument.Version, dc.Edits)
}

func (a *applier) stageCreate(dc docChange, _ json.RawMessage) error {
	if !contains(a.e.cfg.Caps.ResourceOperations, "create") {
		a.e.violation("a create operation sent to a client without resourceOperations create")
	}
	a.annotate(dc.AnnotationID)
	abs, err := URIPath(dc.URI)
	if err != nil {
		a.e.violation("a create operation for %q: %v", dc.URI, err)
		return err
	}
	overwrite, ignore := false, false
	if dc.Options != nil {
		overwrite, ignore = dc.Options.Overwrite, dc.Options.IgnoreIfExists
	}
	if a.exists(abs) && !overwrite {
		if ignore {
			return nil
		}
		return fmt.Errorf("%s already exists", a.e.Rel(abs))
	}
	f := &staged{abs: abs, create: true}
	a.files[abs] = f
	a.order = append(a.order, f)
	return nil
}

func (a *applier) refuseKind(dc docChange, _ json.RawMessage) error {
	if !contains(a.e.cfg.Caps.ResourceOperations, dc.Kind) {
		a.e.violation("a %s operation sent to a client without resourceOperations %s", dc.Kind, dc.Kind)
	}
	return fmt.Errorf("the fake editor does not %s files", dc.Kind)
}

// file is abs as staged so far: the editor's buffer, else the disk.
func (a *applier) file(abs string) (*staged, error) {
	if f, ok := a.files[abs]; ok {
		return f, nil
	}
	e := a.e
	f := &staged{abs: abs}
	e.mu.Lock()
	d, open := e.docs[abs]
	if open {
		f.open, f.version, f.text, f.sent = true, d.Version, d.Text, d.sent
	}
	e.mu.Unlock()
	if !open {
		data, err := os.ReadFile(abs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Rel(abs), err)
		}
		f.text = string(data)
	}
	a.files[abs] = f
	a.order = append(a.order, f)
	return f, nil
}

// exists reports whether abs is a file: staged for creation, open, or on
// disk.
func (a *applier) exists(abs string) bool {
	if f, ok := a.files[abs]; ok && f.create {
		return true
	}
	a.e.mu.Lock()
	_, open := a.e.docs[abs]
	a.e.mu.Unlock()
	_, err := os.Stat(abs)
	return open || err == nil
}

// annotate checks an annotation id and, the first time a label that needs
// confirmation comes, has the user confirm it.
func (a *applier) annotate(id string) {
	if id == "" {
		return
	}
	an, ok := a.we.ChangeAnnotations[id]
	if !ok {
		a.e.violation("annotation id %q is not among the edit's changeAnnotations", id)
		return
	}
	if !a.e.cfg.Caps.Annotations {
		a.e.violation("an annotated edit sent to a client without changeAnnotationSupport")
	}
	if an.NeedsConfirmation && !a.annotated[an.Label] {
		a.annotated[an.Label] = true
		shown := an.Label
		if an.Description != "" {
			shown += ": " + an.Description
		}
		a.confirmed = append(a.confirmed, shown)
	}
}

// placed is a text edit at its byte offsets.
type placed struct {
	start, end int
	te         textEdit
}

// edit stages one document's text edits: for the version the editor has
// (when versioned), placed in its text, applied from the end.
func (a *applier) edit(abs string, version *int32, edits []textEdit) error {
	f, err := a.file(abs)
	if err != nil {
		return err
	}
	name := a.e.Rel(abs)
	if version != nil {
		if !f.open {
			return fmt.Errorf("the edit is for version %d of %s, which is not open in the editor", *version, name)
		}
		if eg := a.e.cfg.Caps.Eglot; eg != "" {
			have := f.version
			if eg != "1.9" {
				have = f.sent // counted only when sent
			}
			if *version != have {
				return &eglotStale{name: filepath.Base(abs), want: *version, have: have}
			}
			// Checked: placed in the buffer as it is now.
		} else if a.e.cfg.Caps.Neovim && *version == 0 {
			version = nil // not checked: the edit lands on whatever the buffer holds
		} else if a.e.cfg.Caps.Neovim {
			if *version < f.version {
				// Neovim prints "Buffer … newer than edits", skips
				// this document and applies the rest.
				a.e.Note("  (the editor skipped the edit to %s: its buffer is at version %d, the edit for %d)", name, f.version, *version)
				return nil
			}
			// Neovim checks only that its buffer is not newer.
		} else if *version != f.version {
			return fmt.Errorf("version %d of %s differs from the editor's version %d", *version, name, f.version)
		}
	}
	// eglot 1.17 over typing it has not sent: the positions were meant
	// for other text, and eglot puts one past a line's end at the end.
	loose := a.e.cfg.Caps.Eglot == "1.17" && f.open && f.version != f.sent
	ps, err := a.place(name, f.text, edits, loose)
	if err != nil {
		return err
	}
	// Apply from the end, so each range still means what it meant;
	// the didChange sends them in the same order.
	for i := len(ps) - 1; i >= 0; i-- {
		p := ps[i]
		f.changes = append(f.changes, map[string]any{"range": p.te.Range, "text": p.te.NewText})
		f.text = f.text[:p.start] + p.te.NewText + f.text[p.end:]
	}
	f.touched = true
	return nil
}

// place converts the edits' ranges to offsets of text, strictly (or,
// loose, as eglot does: a position past a line's end at its end, a line
// past the text's end at the end), and sorts them; ranges that overlap
// are an error.
func (a *applier) place(name, text string, edits []textEdit, loose bool) ([]placed, error) {
	e := a.e
	offset := Offset
	if loose {
		offset = offsetLoose
	}
	var ps []placed
	for _, te := range edits {
		a.annotate(te.AnnotationID)
		s, err := offset(text, te.Range.Start, e.Encoding)
		if err != nil {
			e.violation("edit to %s: %v", name, err)
			return nil, fmt.Errorf("edit to %s: %w", name, err)
		}
		t, err := offset(text, te.Range.End, e.Encoding)
		if err != nil {
			e.violation("edit to %s: %v", name, err)
			return nil, fmt.Errorf("edit to %s: %w", name, err)
		}
		if t < s {
			e.violation("edit to %s: range %s ends before it starts", name, te.Range)
			return nil, fmt.Errorf("edit to %s: a backwards range", name)
		}
		ps = append(ps, placed{s, t, te})
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].start < ps[j].start })
	for i := 1; i < len(ps); i++ {
		if ps[i].start < ps[i-1].end {
			e.violation("edits to %s overlap: %s and %s", name, ps[i-1].te.Range, ps[i].te.Range)
			return nil, fmt.Errorf("edits to %s overlap", name)
		}
	}
	return ps, nil
}

// commit writes the staged edit: files on disk first, then the buffers
// and their didChange.
func (a *applier) commit() error {
	for _, f := range a.order {
		if !f.create {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.abs), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(f.abs, nil, 0o644); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	for _, f := range a.order {
		if f.touched {
			if err := a.e.change(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// change puts a staged file's text in its buffer, opening it first when it
// is not open, and sends its one didChange.
func (e *Editor) change(f *staged) error {
	e.mu.Lock()
	d, open := e.docs[f.abs]
	e.mu.Unlock()
	if !open {
		if err := e.open(f.abs); err != nil {
			return err
		}
		e.mu.Lock()
		d = e.docs[f.abs]
		e.mu.Unlock()
	}
	e.mu.Lock()
	before := d.Text
	d.Text = f.text
	e.bump(d)
	changes := append(d.pending, f.changes...)
	if e.undoing {
		// The user's undo: the text before the edit back, one change.
		changes = append(changes, undoChange(f.text, before, e.Encoding))
		d.Text = before
		e.bump(d)
	}
	if e.cfg.Caps.Eglot != "" {
		d.pending = changes // sent when the user pauses
		e.idleLocked()
		e.mu.Unlock()
		return nil
	}
	uri, version := d.URI, d.Version
	d.pending, d.sent = nil, d.Version
	e.mu.Unlock()
	e.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": changes,
	})
	return nil
}

// Files lists the workspace's files on disk, by relative path.
func (e *Editor) Files() []string {
	var out []string
	filepath.WalkDir(e.Root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, e.Rel(p))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// Current is a workspace file as the editor has it: its open buffer, else
// the disk; ok is false when there is neither.
func (e *Editor) Current(path string) (text string, ok bool) {
	if d, open := e.Doc(path); open {
		return d.Text, true
	}
	data, err := os.ReadFile(e.Abs(path))
	if err != nil {
		return "", false
	}
	return string(data), true
}

// undoChange is the one content change that turns text back into before:
// the span between their common prefix and suffix.
func undoChange(text, before, enc string) map[string]any {
	p := 0
	for p < len(text) && p < len(before) && text[p] == before[p] {
		p++
	}
	q := 0
	for q < len(text)-p && q < len(before)-p && text[len(text)-1-q] == before[len(before)-1-q] {
		q++
	}
	return map[string]any{"range": RangeOf(text, p, len(text)-q, enc), "text": before[p : len(before)-q]}
}
