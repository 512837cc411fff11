package transcript

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Writer appends records to one transcript file, as a journal: each record
// is one line, written whole by one write as it is appended (never split
// across a buffer's flushes), and Sync asks the disk to keep what was
// written. A crash loses at most the record being written; Open cuts it.
//
// A write the disk refuses (full, read-only, gone) never stops the
// session: the record waits in memory, up to maxQueue bytes, and every
// later Append tries again, oldest first; what no longer fits is dropped,
// and a record in its place says how many were lost. Notices says what
// the user should hear of it: once when writing stops, once when it
// resumes.
//
// The file is locked while a Writer holds it: a second Writer of the same
// transcript, in this process or another, is refused (ErrInUse).
type Writer struct {
	mu   sync.Mutex
	path string
	dir  string
	id   string

	f file // nil until the file is created, and after Close
	// create makes the file, while it could not be made yet.
	create func() (file, error)
	closed bool

	size int64 // the bytes of whole records in the file
	// torn is set when the file may end with part of a line (a failed
	// write that could not be cut back): the next record starts a line.
	torn bool

	queue  [][]byte // records not written yet, oldest first, each a line
	queued int      // their bytes
	lost   int      // records dropped from the queue, not said in the file yet
	// failing is why the last write failed; nil while the disk takes them.
	failing  error
	dropping bool     // the queue was full since writing stopped
	told     []string // what the user should hear, not taken yet
	skipped  []Skip   // what Open skipped
}

// maxQueue bounds the records held in memory while the disk refuses them.
const maxQueue = 16 << 20

// file is what a Writer needs of its file; tests give a failing one.
type file interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Close() error
}

// ErrInUse is the error of Open for a transcript another Writer holds.
var ErrInUse = errors.New("in use by another Reika server")

// errLocked is lock's error for a file another open file has locked.
var errLocked = errors.New("locked")

// Create starts a new transcript in dir. meta.ID is filled in when empty.
// It fails when the file cannot be made or written; Begin goes on without
// it.
func Create(dir string, meta Meta) (*Writer, error) {
	w := Begin(dir, meta)
	if err := w.Err(); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Begin starts a new transcript in dir, like Create, but never fails: when
// the directory or the file cannot be made, or written, the Writer says so
// (Err, Notices) and tries again at every record.
func Begin(dir string, meta Meta) *Writer {
	if meta.ID == "" {
		meta.ID = NewID(time.Now())
	}
	path := filepath.Join(dir, meta.ID+".jsonl")
	w := &Writer{path: path, dir: dir, id: meta.ID}
	w.create = func() (file, error) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("transcript directory: %w", err)
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("create transcript: %w", err)
		}
		if err := lock(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock transcript: %w", err)
		}
		return f, nil
	}
	w.Append(Record{Kind: KindMeta, Meta: &meta})
	w.Sync()
	return w
}

// Open reopens a transcript to append to it, and returns what it holds.
// A last line cut short by a crash is cut from the file; a damaged line
// elsewhere, or a record this version does not know, is skipped
// (Skipped says which). It fails with ErrInUse when another Writer holds
// the transcript.
func Open(path string) (*Writer, []Record, error) {
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open transcript: %w", err)
	}
	if err := lockWaiting(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, nil, fmt.Errorf("session %s is %w (its transcript %s is locked): continue it there, or start a new session", id, ErrInUse, path)
		}
		return nil, nil, fmt.Errorf("lock transcript: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("read transcript: %w", err)
	}
	recs, skipped, whole := scan(data)
	w := &Writer{f: f, path: path, dir: filepath.Dir(path), id: id, size: int64(whole), skipped: skipped}
	switch {
	case whole < len(data):
		if err := f.Truncate(int64(whole)); err != nil {
			w.torn = true
		}
	case whole > 0 && data[whole-1] != '\n':
		w.torn = true // the next record starts a line
	}
	if len(recs) > 0 && recs[0].Meta != nil && recs[0].Meta.ID != "" {
		w.id = recs[0].Meta.ID
	}
	return w, recs, nil
}

// lockWait is how long Open waits for a transcript another Writer holds:
// a server that is exiting (an editor restarting it) lets go in time.
var lockWait = 2 * time.Second

// lockWaiting locks f, waiting lockWait at most for another holder.
func lockWaiting(f *os.File) error {
	deadline := time.Now().Add(lockWait)
	for {
		err := lock(f)
		if !errors.Is(err, errLocked) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// NewID names a session: its start time and a random suffix, so that ids
// sort by time.
func NewID(t time.Time) string {
	var b [3]byte
	rand.Read(b[:])
	return t.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// Path is the file the transcript is written to.
func (w *Writer) Path() string { return w.path }

// ID is the session's id.
func (w *Writer) ID() string { return w.id }

// Skipped is what Open skipped of the transcript: damaged lines, records
// of kinds this version does not know, a last line cut short.
func (w *Writer) Skipped() []Skip { return w.skipped }

// Err is why the last write failed, nil while the disk takes the records.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failing
}

// Notices returns what the user should hear of the transcript since the
// last call: that writing stopped (once), that it resumed.
func (w *Writer) Notices() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.told
	w.told = nil
	return out
}

// Append writes a record, whole, in one write. It reports an error when
// the record is not in the file yet (it waits for the disk, see Writer).
func (w *Writer) Append(r Record) error {
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("transcript record: %w", err)
	}
	line = append(line, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("transcript is closed")
	}
	w.queue = append(w.queue, line)
	w.queued += len(line)
	w.flush()
	if len(w.queue) > 0 {
		w.bound()
		return w.failing
	}
	w.recovered()
	return nil
}

// Sync writes what waits and asks the disk to keep the file; it reports
// why it could not.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flush()
	if w.f == nil || len(w.queue) > 0 {
		return w.failing
	}
	if err := w.f.Sync(); err != nil {
		w.fail(fmt.Errorf("sync transcript: %w", err))
		return w.failing
	}
	w.recovered()
	return nil
}

// Close syncs and closes the file, which releases the transcript.
func (w *Writer) Close() error {
	err := w.Sync()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if n := len(w.queue); n > 0 {
		err = fmt.Errorf("%d transcript records were never written to %s: %w", n+w.lost, w.dir, err)
	}
	if w.f != nil {
		if cerr := w.f.Close(); err == nil {
			err = cerr
		}
		w.f = nil
	}
	return err
}

// flush writes the waiting records, oldest first, the lost ones said
// first, until the disk refuses one. The caller holds mu.
func (w *Writer) flush() {
	if w.f == nil && w.create != nil {
		f, err := w.create()
		if err != nil {
			w.fail(err)
			return
		}
		w.f, w.create = f, nil
	}
	if w.f == nil {
		return
	}
	if w.size == 0 && len(w.queue) > 0 && !w.torn {
		// A new file: its meta record first, whatever was lost after it.
		if w.write(w.queue[0]) != nil {
			return
		}
		w.pop()
	}
	if w.lost > 0 {
		gap, _ := json.Marshal(Record{Kind: KindEvent, At: time.Now().UTC(),
			Text: fmt.Sprintf("transcript gap: %d records were lost while the disk refused them", w.lost)})
		if w.write(append(gap, '\n')) != nil {
			return
		}
		w.lost = 0
	}
	for len(w.queue) > 0 {
		if w.write(w.queue[0]) != nil {
			return
		}
		w.pop()
	}
}

// pop forgets the oldest waiting record. The caller holds mu.
func (w *Writer) pop() {
	w.queued -= len(w.queue[0])
	w.queue[0] = nil
	w.queue = w.queue[1:]
}

// write writes one line in one write. A write cut short is cut from the
// file, so that the next one starts a line. The caller holds mu.
func (w *Writer) write(line []byte) error {
	if w.torn {
		line = append([]byte{'\n'}, line...)
	}
	n, err := w.f.Write(line)
	if err != nil {
		if n > 0 {
			if w.f.Truncate(w.size) != nil {
				w.torn = true
			}
		}
		w.fail(fmt.Errorf("write transcript: %w", err))
		return err
	}
	if w.torn {
		if fi, err := w.f.Stat(); err == nil {
			w.size = fi.Size()
		}
		w.torn = false
	} else {
		w.size += int64(n)
	}
	return nil
}

// bound drops the oldest waiting records past maxQueue. The caller holds
// mu.
func (w *Writer) bound() {
	keep := 0 // a file not made yet keeps its meta record
	if w.size == 0 {
		keep = 1
	}
	for w.queued > maxQueue && len(w.queue) > keep+1 {
		w.queued -= len(w.queue[keep])
		w.queue = slices.Delete(w.queue, keep, keep+1)
		w.lost++
		if !w.dropping {
			w.dropping = true
			w.told = append(w.told, fmt.Sprintf("the transcript in %s still cannot be written, and more than %d MiB of records wait: "+
				"the oldest are dropped, and a resume will lack them", w.dir, maxQueue>>20))
		}
	}
}

// fail notes that the disk refused a record; the user hears it once. The
// caller holds mu.
func (w *Writer) fail(err error) {
	if w.failing == nil {
		w.told = append(w.told, fmt.Sprintf("the transcript cannot be written in %s (%v): the session goes on, and its records "+
			"wait in memory (up to %d MiB) until the disk takes them; if the server stopped now, a resume would lack them", w.dir, err, maxQueue>>20))
	}
	w.failing = err
}

// recovered notes that the file took every record again. The caller
// holds mu.
func (w *Writer) recovered() {
	if w.failing == nil {
		return
	}
	text := fmt.Sprintf("the transcript in %s is written again: the records that waited are in it", w.dir)
	if w.dropping {
		text = fmt.Sprintf("the transcript in %s is written again; records were lost meanwhile (the transcript says how many where they are missing)", w.dir)
	}
	w.told = append(w.told, text)
	w.failing, w.dropping = nil, false
}
