package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent/tools"
)

// maxDocumentSize is the largest document the store keeps. A bigger one
// is refused: it is not source the agent can read in a window anyway.
const maxDocumentSize = 32 << 20

// Document is an open document as the editor has it.
type Document struct {
	// URI is the document's URI as the client spelt it at didOpen.
	URI protocol.DocumentURI
	// Path is the absolute path of a file: URI; "" for other schemes
	// (untitled:, git:), which tools never see.
	Path       string
	LanguageID string
	Version    int32
	Text       string
}

// Change is one entry of didChange's contentChanges: the text that
// replaces Range, or the whole document when Range is nil.
type Change struct {
	Range *protocol.Range
	Text  string
}

// DecodeChanges decodes the contentChanges array of didChange's params.
// It does not use protocol.TextDocumentContentChangeEvent, whose Range is
// a value: there a full replacement (no "range" key) reads as an insertion
// at 0:0. Here a change without "range" (or with "range": null) has a nil
// Range. The deprecated "rangeLength" is ignored: the range is the truth.
func DecodeChanges(raw json.RawMessage) ([]Change, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, fmt.Errorf("contentChanges is not an array: %.40q", raw)
	}
	var wire []struct {
		Range *protocol.Range `json:"range"`
		Text  *string         `json:"text"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, fmt.Errorf("decode contentChanges: %w", err)
	}
	changes := make([]Change, len(wire))
	for i, w := range wire {
		if w.Text == nil {
			return nil, fmt.Errorf("contentChanges[%d] has no text", i)
		}
		changes[i] = Change{Range: w.Range, Text: *w.Text}
	}
	return changes, nil
}

// Documents holds the documents open in the editor, which the agent reads
// before the disk. It is safe for concurrent use.
//
// A document is found by its URI; a file is also found by its path, so two
// spellings of one file's URI ("%3A" or ":", "%7E" or "~") name one
// document.
type Documents struct {
	mu   sync.RWMutex
	docs map[string]*stored // by key
	// changed is closed, and replaced, at every change to the store.
	changed chan struct{}
	// watches are the waits that see every text of a document (Watch),
	// by key.
	watches map[string][]*docWatch
	// lost are the documents the store lost track of (Lose), by key, with
	// why: open in the editor with a text the store does not know, until
	// the editor sends it whole again (a didOpen, or a didChange whose
	// first change is the whole text).
	lost map[string]string
}

// docWatch is one Watch.
type docWatch struct{ see func(Seen) }

// Seen is one text a watched document passed through: after one content
// change of a didChange (Open true), at a reopen (Open true), or its close
// (Open false, no text).
type Seen struct {
	Text    string
	Version int32
	Open    bool
}

var _ tools.Buffers = (*Documents)(nil)

// stored is a document with what applying a change needs: its line
// starts (lineStarts), made at the first change and kept up to date by
// the ones after, so that a keystroke does not read the whole text again.
type stored struct {
	Document
	lines []int     // nil until the first change
	ascii bool      // no byte ≥ 0x80 in the text; may be false for an ASCII one
	at    time.Time // the last didOpen or didChange
}

// NewDocuments returns an empty store.
func NewDocuments() *Documents {
	return &Documents{docs: make(map[string]*stored), changed: make(chan struct{})}
}

// Changed returns a channel closed at the next change to the store: an
// open, a change or a close.
func (d *Documents) Changed() <-chan struct{} {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.changed
}

// touch wakes those waiting on Changed; d.mu is held.
func (d *Documents) touch() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// key is where a document is stored: its path for a file, else its URI.
func key(uri protocol.DocumentURI) (k, path string) {
	if p, err := URIToPath(uri); err == nil {
		return "path:" + p, p
	}
	return "uri:" + string(uri), ""
}

// checkText refuses a text the store will not keep.
func checkText(uri protocol.DocumentURI, text string) error {
	if len(text) > maxDocumentSize {
		return fmt.Errorf("%s is too large to keep open (%d MiB, the limit is %d MiB): the agent will read it from disk", uri, len(text)>>20, maxDocumentSize>>20)
	}
	if i := strings.IndexByte(text, 0); i >= 0 {
		return fmt.Errorf("%s looks binary (a NUL byte at offset %d): the agent will not read it as an open document", uri, i)
	}
	return nil
}

// DidOpen records a document the editor opened (textDocument/didOpen). A
// document already open is replaced: the client's text is the truth. A
// document over 32 MiB or with a NUL byte is refused with an error, and
// the store keeps nothing for its URI. A file: URI that does not parse is
// kept with Path "", like any other scheme.
func (d *Documents) DidOpen(uri protocol.DocumentURI, languageID string, version int32, text string) error {
	k, path := key(uri)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := checkText(uri, text); err != nil {
		delete(d.docs, k)
		return err
	}
	delete(d.lost, k)
	d.docs[k] = &stored{Document: Document{URI: uri, Path: path, LanguageID: languageID, Version: version, Text: text}, at: time.Now()}
	d.show(k, Seen{Text: text, Version: version, Open: true})
	d.touch()
	return nil
}

// DidChange applies a didChange: changes in order, each against the text
// the one before produced, positions read in enc. It is all or nothing:
// a document that is not open, a version not after the current one, or a
// range outside the text is an error that changes nothing. A batch that
// leaves the text over 32 MiB or with a NUL byte is an error and the
// document is dropped, as DidOpen would have refused it.
func (d *Documents) DidChange(uri protocol.DocumentURI, version int32, changes []Change, enc Encoding) error {
	k, _ := key(uri)
	d.mu.Lock()
	defer d.mu.Unlock()
	doc, ok := d.docs[k]
	if why, lost := d.lost[k]; !ok && lost {
		if len(changes) == 0 || changes[0].Range != nil {
			return fmt.Errorf("%w: %s (%s)", errStillLost, uri, why)
		}
		// The whole text: in step again.
		_, path := key(uri)
		doc, ok = &stored{Document: Document{URI: uri, Path: path, Version: version - 1}}, true
		d.docs[k] = doc
		delete(d.lost, k)
	}
	if !ok {
		return fmt.Errorf("change to %s, which is not open", uri)
	}
	if version <= doc.Version {
		return fmt.Errorf("stale change to %s: version %d after %d", uri, version, doc.Version)
	}
	if doc.lines == nil {
		doc.lines, doc.ascii = lineStarts(doc.Text), isASCII(doc.Text)
	}
	text, lines, ascii := doc.Text, doc.lines, doc.ascii
	// The texts between the changes, for the watches: only once all of
	// the batch applies.
	var between []string
	watched := len(d.watches[k]) > 0
	for i, c := range changes {
		if c.Range == nil {
			text, lines, ascii = c.Text, lineStarts(c.Text), isASCII(c.Text)
			if watched {
				between = append(between, text)
			}
			continue
		}
		start, end, err := newIndexedMapper(text, enc, lines, ascii).OffsetRange(*c.Range)
		if err != nil {
			// The changes before this one may have moved the line
			// starts in place: the next change counts them again.
			doc.lines = nil
			return fmt.Errorf("change %d of %d to %s (version %d): %w", i+1, len(changes), uri, version, err)
		}
		text = text[:start] + c.Text + text[end:]
		lines = spliceStarts(lines, text, start, end, len(c.Text))
		ascii = ascii && isASCII(c.Text)
		if watched {
			between = append(between, text)
		}
	}
	if err := checkText(uri, text); err != nil {
		delete(d.docs, k)
		d.show(k, Seen{})
		return err
	}
	doc.Version, doc.Text, doc.lines, doc.ascii, doc.at = version, text, lines, ascii, time.Now()
	for _, t := range between {
		d.show(k, Seen{Text: t, Version: version, Open: true})
	}
	d.touch()
	return nil
}

// DidClose forgets a document the editor closed. Closing a document that
// is not open does nothing.
func (d *Documents) DidClose(uri protocol.DocumentURI) {
	k, _ := key(uri)
	d.mu.Lock()
	if _, ok := d.docs[k]; ok {
		d.show(k, Seen{})
	}
	delete(d.docs, k)
	delete(d.lost, k)
	d.touch()
	d.mu.Unlock()
}

// errStillLost is a change to a document the store lost track of that
// does not bring its whole text.
var errStillLost = errors.New("change to a document Reika lost track of")

// Lose drops the document at uri, whose text the store no longer knows
// (a change it could not apply): the agent's tools read the disk, and no
// edit is placed on the file (Lost) until the editor sends the text whole
// again. It reports whether the document was open, so that the loss is
// told once.
func (d *Documents) Lose(uri protocol.DocumentURI, why string) bool {
	k, _ := key(uri)
	d.mu.Lock()
	defer d.mu.Unlock()
	_, open := d.docs[k]
	if !open {
		return false
	}
	d.show(k, Seen{})
	delete(d.docs, k)
	if d.lost == nil {
		d.lost = map[string]string{}
	}
	d.lost[k] = why
	d.touch()
	return true
}

// Lost reports whether the file at abs is open in the editor with a text
// the store lost track of, and why.
func (d *Documents) Lost(abs string) (why string, ok bool) {
	if abs == "" {
		return "", false
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	why, ok = d.lost["path:"+filepath.Clean(abs)]
	return why, ok
}

// Watch calls see with every text the file's document at abs passes
// through from now on, until stop: the text after each content change of
// each didChange (Neovim and eglot send the edit they applied and the
// user's undo in one didChange; the texts between tell an undo from an
// edit that never came), the text of a reopen (eglot's revert is a close
// and an open), and a close. see runs with the store locked: it must be
// quick and must not call the store.
func (d *Documents) Watch(abs string, see func(Seen)) (stop func()) {
	k := "path:" + filepath.Clean(abs)
	w := &docWatch{see: see}
	d.mu.Lock()
	if d.watches == nil {
		d.watches = map[string][]*docWatch{}
	}
	d.watches[k] = append(d.watches[k], w)
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		ws := d.watches[k]
		for i := range ws {
			if ws[i] == w {
				ws = append(ws[:i:i], ws[i+1:]...)
				break
			}
		}
		if len(ws) == 0 {
			delete(d.watches, k)
		} else {
			d.watches[k] = ws
		}
	}
}

// show hands a text to the watches of key k; d.mu is held.
func (d *Documents) show(k string, s Seen) {
	for _, w := range d.watches[k] {
		w.see(s)
	}
}

// Quiet is how long the file's document at abs has gone without a
// didOpen or didChange; false when it is not open.
func (d *Documents) Quiet(abs string) (time.Duration, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	doc, ok := d.docs["path:"+filepath.Clean(abs)]
	if !ok {
		return 0, false
	}
	return time.Since(doc.at), true
}

// Get returns the open document at uri.
func (d *Documents) Get(uri protocol.DocumentURI) (Document, bool) {
	k, _ := key(uri)
	return d.get(k)
}

// ByPath returns the open document of the file at the absolute path abs.
func (d *Documents) ByPath(abs string) (Document, bool) {
	if abs == "" {
		return Document{}, false
	}
	return d.get("path:" + filepath.Clean(abs))
}

// Open gives the agent's tools the text and version of the open document
// of the file at abs (tools.Buffers); false when it is not open.
func (d *Documents) Open(abs string) (text string, version int32, ok bool) {
	doc, ok := d.ByPath(abs)
	return doc.Text, doc.Version, ok
}

func (d *Documents) get(k string) (Document, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if doc, ok := d.docs[k]; ok {
		return doc.Document, true
	}
	return Document{}, false
}

// All returns the open documents, sorted by URI.
func (d *Documents) All() []Document {
	d.mu.RLock()
	all := make([]Document, 0, len(d.docs))
	for _, doc := range d.docs {
		all = append(all, doc.Document)
	}
	d.mu.RUnlock()
	sort.Slice(all, func(i, j int) bool { return all[i].URI < all[j].URI })
	return all
}
