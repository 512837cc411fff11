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
func (e *Editor) ApplyWorkspaceEdit(raw json.RawMessage) (confirmed []string, err error) {
	var we wsEdit
	if err := json.Unmarshal(raw, &we); err != nil {
		e.violation("a workspace edit that does not decode: %v", err)
		return nil, err
	}
	c := e.cfg.Caps
	if len(we.DocumentChanges) > 0 && !c.DocumentChanges {
		e.violation("documentChanges sent to a client without workspace.workspaceEdit.documentChanges")
	}
	if len(we.ChangeAnnotations) > 0 && !c.Annotations {
		e.violation("changeAnnotations sent to a client without changeAnnotationSupport")
	}

	files := map[string]*staged{}
	var order []*staged
	get := func(abs string) (*staged, error) {
		if f, ok := files[abs]; ok {
			return f, nil
		}
		f := &staged{abs: abs}
		e.mu.Lock()
		d, open := e.docs[abs]
		if open {
			f.open, f.version, f.text = true, d.Version, d.Text
		}
		e.mu.Unlock()
		if !open {
			data, err := os.ReadFile(abs)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", e.Rel(abs), err)
			}
			f.text = string(data)
		}
		files[abs] = f
		order = append(order, f)
		return f, nil
	}
	exists := func(abs string) bool {
		if f, ok := files[abs]; ok && f.create {
			return true
		}
		e.mu.Lock()
		_, open := e.docs[abs]
		e.mu.Unlock()
		_, err := os.Stat(abs)
		return open || err == nil
	}
	annotated := map[string]bool{}
	note := func(id string) {
		if id == "" {
			return
		}
		a, ok := we.ChangeAnnotations[id]
		if !ok {
			e.violation("annotation id %q is not among the edit's changeAnnotations", id)
			return
		}
		if !c.Annotations {
			e.violation("an annotated edit sent to a client without changeAnnotationSupport")
		}
		if a.NeedsConfirmation && !annotated[a.Label] {
			annotated[a.Label] = true
			shown := a.Label
			if a.Description != "" {
				shown += ": " + a.Description
			}
			confirmed = append(confirmed, shown)
		}
	}
	edit := func(abs string, version *int32, edits []textEdit) error {
		name := e.Rel(abs)
		f, ok := files[abs]
		if !ok || !f.create {
			var err error
			if f, err = get(abs); err != nil {
				return err
			}
		}
		if version != nil {
			if !f.open {
				return fmt.Errorf("the edit is for version %d of %s, which is not open in the editor", *version, name)
			}
			if *version != f.version {
				return fmt.Errorf("version %d of %s differs from the editor's version %d", *version, name, f.version)
			}
		}
		type placed struct {
			start, end int
			te         textEdit
		}
		var ps []placed
		for _, te := range edits {
			note(te.AnnotationID)
			s, err := Offset(f.text, te.Range.Start, e.Encoding)
			if err != nil {
				e.violation("edit to %s: %v", name, err)
				return fmt.Errorf("edit to %s: %w", name, err)
			}
			t, err := Offset(f.text, te.Range.End, e.Encoding)
			if err != nil {
				e.violation("edit to %s: %v", name, err)
				return fmt.Errorf("edit to %s: %w", name, err)
			}
			if t < s {
				e.violation("edit to %s: range %s ends before it starts", name, te.Range)
				return fmt.Errorf("edit to %s: a backwards range", name)
			}
			ps = append(ps, placed{s, t, te})
		}
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].start < ps[j].start })
		for i := 1; i < len(ps); i++ {
			if ps[i].start < ps[i-1].end {
				e.violation("edits to %s overlap: %s and %s", name, ps[i-1].te.Range, ps[i].te.Range)
				return fmt.Errorf("edits to %s overlap", name)
			}
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

	if len(we.DocumentChanges) > 0 {
		for _, raw := range we.DocumentChanges {
			var dc docChange
			if err := json.Unmarshal(raw, &dc); err != nil {
				e.violation("a document change that does not decode: %v", err)
				return nil, err
			}
			switch dc.Kind {
			case "":
				if dc.TextDocument == nil {
					e.violation("a document change with neither kind nor textDocument: %s", raw)
					return nil, errors.New("malformed document change")
				}
				abs, err := URIPath(dc.TextDocument.URI)
				if err != nil {
					e.violation("a text document edit for %q: %v", dc.TextDocument.URI, err)
					return nil, err
				}
				if err := edit(abs, dc.TextDocument.Version, dc.Edits); err != nil {
					return nil, err
				}
			case "create":
				if !contains(c.ResourceOperations, "create") {
					e.violation("a create operation sent to a client without resourceOperations create")
				}
				note(dc.AnnotationID)
				abs, err := URIPath(dc.URI)
				if err != nil {
					e.violation("a create operation for %q: %v", dc.URI, err)
					return nil, err
				}
				overwrite, ignore := false, false
				if dc.Options != nil {
					overwrite, ignore = dc.Options.Overwrite, dc.Options.IgnoreIfExists
				}
				if exists(abs) && !overwrite {
					if ignore {
						continue
					}
					return nil, fmt.Errorf("%s already exists", e.Rel(abs))
				}
				f := &staged{abs: abs, create: true}
				files[abs] = f
				order = append(order, f)
			default:
				if !contains(c.ResourceOperations, dc.Kind) {
					e.violation("a %s operation sent to a client without resourceOperations %s", dc.Kind, dc.Kind)
				}
				return nil, fmt.Errorf("the fake editor does not %s files", dc.Kind)
			}
		}
	} else {
		uris := make([]string, 0, len(we.Changes))
		for uri := range we.Changes {
			uris = append(uris, uri)
		}
		sort.Strings(uris)
		for _, uri := range uris {
			abs, err := URIPath(uri)
			if err != nil {
				e.violation("changes for %q: %v", uri, err)
				return nil, err
			}
			if err := edit(abs, nil, we.Changes[uri]); err != nil {
				return nil, err
			}
		}
	}

	// Commit: files on disk first, then the buffers and their didChange.
	for _, f := range order {
		if !f.create {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.abs), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(f.abs, nil, 0o644); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	for _, f := range order {
		if !f.touched {
			continue
		}
		e.mu.Lock()
		d, open := e.docs[f.abs]
		e.mu.Unlock()
		if !open {
			if err := e.open(f.abs); err != nil {
				return nil, err
			}
			e.mu.Lock()
			d = e.docs[f.abs]
			e.mu.Unlock()
		}
		e.mu.Lock()
		d.Text = f.text
		d.Version++
		uri, version := d.URI, d.Version
		e.mu.Unlock()
		e.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": version},
			"contentChanges": f.changes,
		})
	}
	return confirmed, nil
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
