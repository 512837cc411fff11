package lsptest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Open opens a file in the editor (textDocument/didOpen with its text on
// disk).
func (e *Editor) Open(path string) {
	e.t.Helper()
	if err := e.open(e.Abs(path)); err != nil {
		e.t.Fatalf("open %s: %v", path, err)
	}
}

func (e *Editor) open(abs string) error {
	data, err := os.ReadFile(abs)
	if err != nil {
		return err
	}
	e.mu.Lock()
	if _, ok := e.docs[abs]; ok {
		e.mu.Unlock()
		return nil // already open: the editor shows it
	}
	d := &Document{Path: abs, URI: FileURI(abs), Version: 1, Text: string(data)}
	if e.cfg.Caps.Neovim {
		d.Version = 0 // Neovim opens every buffer at version 0
	}
	d.sent = d.Version
	e.docs[abs] = d
	e.mu.Unlock()
	e.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": d.URI, "languageId": languageID(abs), "version": d.Version, "text": d.Text}})
	return nil
}

func languageID(path string) string {
	switch filepath.Ext(path) {
	case ".go":
		return "go"
	case ".md":
		return "markdown"
	case ".py":
		return "python"
	case ".ts":
		return "typescript"
	case ".js":
		return "javascript"
	}
	return "plaintext"
}

// Doc returns the editor's copy of an open document.
func (e *Editor) Doc(path string) (Document, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d, ok := e.docs[e.Abs(path)]
	if !ok {
		return Document{}, false
	}
	return *d, true
}

// Text is the text of an open document; it fails the test when the
// document is not open.
func (e *Editor) Text(path string) string {
	e.t.Helper()
	d, ok := e.Doc(path)
	if !ok {
		e.t.Fatalf("%s is not open in the editor", path)
	}
	return d.Text
}

// Docs lists the open documents, by path.
func (e *Editor) Docs() []Document {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Document
	for _, d := range e.docs {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Edit is the user replacing the first occurrence of old with new in an
// open document: one incremental didChange in the negotiated encoding.
func (e *Editor) Edit(path, old, new string) {
	e.t.Helper()
	if err := e.TryEdit(path, old, new); err != nil {
		e.t.Fatal(err)
	}
}

// TryEdit is Edit returning its error, for use off the test's goroutine.
func (e *Editor) TryEdit(path, old, new string) error {
	abs := e.Abs(path)
	e.typing.Lock()
	defer e.typing.Unlock()
	e.mu.Lock()
	d, ok := e.docs[abs]
	if !ok {
		e.mu.Unlock()
		return fmt.Errorf("edit %s: not open", path)
	}
	i := strings.Index(d.Text, old)
	if i < 0 {
		e.mu.Unlock()
		return fmt.Errorf("edit %s: %q is not in the document", path, old)
	}
	rng := RangeOf(d.Text, i, i+len(old), e.Encoding)
	d.Text = d.Text[:i] + new + d.Text[i+len(old):]
	e.bump(d)
	d.sent = d.Version
	uri, version := d.URI, d.Version
	e.mu.Unlock()
	e.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []any{map[string]any{"range": rng, "text": new}},
	})
	return nil
}

// TypePending replaces old with new in an open document as the user
// typing does in Neovim: the buffer and its version change now, the
// didChange waits for the next one the editor sends (its debounce).
func (e *Editor) TypePending(path, old, new string) error {
	abs := e.Abs(path)
	e.mu.Lock()
	defer e.mu.Unlock()
	d, ok := e.docs[abs]
	if !ok {
		return fmt.Errorf("edit %s: not open", path)
	}
	i := strings.Index(d.Text, old)
	if i < 0 {
		return fmt.Errorf("edit %s: %q is not in the document", path, old)
	}
	d.pending = append(d.pending, map[string]any{"range": RangeOf(d.Text, i, i+len(old), e.Encoding), "text": new})
	d.Text = d.Text[:i] + new + d.Text[i+len(old):]
	e.bump(d)
	e.idleLocked()
	return nil
}

// eglotIdle is eglot-send-changes-idle-time.
const eglotIdle = 500 * time.Millisecond

// idleLocked restarts eglot's idle timer, after which it sends the
// pending changes; e.mu is held. It does nothing for other editors.
func (e *Editor) idleLocked() {
	if e.cfg.Caps.Eglot == "" {
		return
	}
	if e.idle != nil {
		e.idle.Stop()
	}
	e.idle = time.AfterFunc(eglotIdle, e.flushPending)
}

// flushPending sends the changes TypePending held back, one didChange a
// document, as Neovim does when its debounce ends.
func (e *Editor) flushPending() {
	type send struct {
		uri     string
		version int32
		changes []map[string]any
	}
	var sends []send
	e.typing.Lock()
	defer e.typing.Unlock()
	e.mu.Lock()
	if e.shut {
		e.mu.Unlock()
		return
	}
	for _, d := range e.docs {
		if len(d.pending) > 0 {
			sends = append(sends, send{d.URI, d.Version, d.pending})
			d.pending = nil
			d.sent = d.Version
		}
	}
	e.mu.Unlock()
	for _, s := range sends {
		e.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": s.uri, "version": s.version},
			"contentChanges": s.changes,
		})
	}
}

// Save writes an open document to disk and sends didSave.
func (e *Editor) Save(path string) {
	e.t.Helper()
	d, ok := e.Doc(path)
	if !ok {
		e.t.Fatalf("save %s: not open", path)
	}
	if err := os.WriteFile(d.Path, []byte(d.Text), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": d.URI}})
}

// Close closes an open document.
func (e *Editor) Close(path string) {
	abs := e.Abs(path)
	e.mu.Lock()
	d, ok := e.docs[abs]
	delete(e.docs, abs)
	e.mu.Unlock()
	if ok {
		e.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": d.URI}})
	}
}

// Find is the range of the first match of the regular expression re in
// an open document (of its first group, when it has one).
func (e *Editor) Find(path, re string) Range {
	e.t.Helper()
	text := e.Text(path)
	start, end, err := find(text, re)
	if err != nil {
		e.t.Fatalf("%s: %v", path, err)
	}
	return RangeOf(text, start, end, e.Encoding)
}

// FindLine is the range of the whole line (line break included, lines
// as LSP counts them) holding the first match of re.
func (e *Editor) FindLine(path, re string) Range {
	e.t.Helper()
	text := e.Text(path)
	start, _, err := find(text, re)
	if err != nil {
		e.t.Fatalf("%s: %v", path, err)
	}
	_, l := lineAt(text, start)
	return RangeOf(text, l.start, l.next, e.Encoding)
}

func find(text, re string) (int, int, error) {
	rx, err := regexp.Compile(re)
	if err != nil {
		return 0, 0, err
	}
	m := rx.FindStringSubmatchIndex(text)
	if m == nil {
		return 0, 0, fmt.Errorf("no match for /%s/", re)
	}
	if len(m) >= 4 && m[2] >= 0 {
		return m[2], m[3], nil
	}
	return m[0], m[1], nil
}

// --- code actions ---

// bump raises a document's version for a change. Neovim's version is the
// buffer's change count: after the buffer opened at 0, the first change
// brings it well above 1.
func (e *Editor) bump(d *Document) {
	if e.cfg.Caps.Neovim && d.Version == 0 {
		d.Version = 2
	}
	d.Version++
}
