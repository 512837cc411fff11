package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// message is a message record of text.
func message(text string) Record {
	return Record{Kind: KindMessage, Message: &Message{Role: "user", Content: text}}
}

// contents are the texts of a transcript's message records, and what
// reading it skipped.
func contents(t *testing.T, path string) ([]string, []Skip) {
	t.Helper()
	recs, skipped, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, r := range recs {
		if r.Kind == KindMessage {
			texts = append(texts, r.Message.Content)
		}
	}
	return texts, skipped
}

// A crash cuts the last line short: Open cuts it from the file, so that
// what is appended next starts a line, and the transcript opens again and
// again.
func TestOpenCutsAPartialLastLine(t *testing.T) {
	for _, tc := range []struct {
		name, tail string
		want       []string // messages after the reopen appended "c"
	}{
		{"cut mid-record", `{"kind":"message","at":"2026-01-01T00:00:00Z","mess`, []string{"a", "b", "c"}},
		{"whole but for its newline", `{"kind":"message","at":"2026-01-01T00:00:00Z","message":{"role":"user","content":"x"}}`, []string{"a", "b", "x", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Create(t.TempDir(), Meta{Workspace: "/ws"})
			if err != nil {
				t.Fatal(err)
			}
			w.Append(message("a"))
			w.Append(message("b"))
			w.Close()
			f, _ := os.OpenFile(w.Path(), os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString(tc.tail)
			f.Close()

			for round := 1; round <= 2; round++ {
				w2, _, err := Open(w.Path())
				if err != nil {
					t.Fatalf("open %d: %v", round, err)
				}
				if round == 1 {
					w2.Append(message("c"))
				}
				if err := w2.Close(); err != nil {
					t.Fatal(err)
				}
				got, skipped := contents(t, w.Path())
				if strings.Join(got, ",") != strings.Join(tc.want, ",") || len(skipped) != 0 {
					t.Errorf("after open %d: messages %q, skipped %v; want %q and nothing skipped", round, got, skipped, tc.want)
				}
			}
		})
	}
}

// A damaged line in the middle, a record of an unknown kind and one with
// an event this version does not know are skipped, each named; the
// records around them are read, and the transcript takes more.
func TestOpenSkipsWhatItCannotRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	at := `"at":"2026-01-01T00:00:00Z"`
	lines := []string{
		`{"kind":"meta",` + at + `,"meta":{"id":"s"}}`,
		`{"kind":"message",` + at + `,"message":{"role":"user","content":"a"}}`,
		`garbage {`,
		`{"kind":"hologram",` + at + `,"text":"new"}`,
		`{"kind":"plan",` + at + `,"plan":{"event":"warp"}}`,
		`{"kind":"message",` + at + `,"message":{"role":"user","content":"b"}}`,
	}
	os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	w, recs, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Errorf("Open read %d records, want 3 (meta, a, b)", len(recs))
	}
	var said []string
	for _, s := range w.Skipped() {
		said = append(said, s.String())
	}
	for i, want := range []string{"line 3: a damaged line", `line 4: a "hologram" record, a kind this version does not know`, "line 5: a record this version cannot read"} {
		if i >= len(said) || !strings.HasPrefix(said[i], want) {
			t.Errorf("Skipped = %q, want item %d to start %q", said, i, want)
		}
	}
	w.Append(message("c"))
	w.Close()
	if got, _ := contents(t, p); strings.Join(got, ",") != "a,b,c" {
		t.Errorf("messages after an append = %q, want a, b, c", got)
	}
	if _, err := Parse([]byte(strings.Join(lines, "\n"))); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("Parse (strict) error = %v, want one naming line 3", err)
	}
}

// full is a file whose disk may be full: a write then writes half of its
// bytes and fails, as a write that runs out of room does; cutting the
// file back may fail too.
type full struct {
	*os.File
	full, noTruncate bool
}

func (f *full) Write(p []byte) (int, error) {
	if f.full {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, syscall.ENOSPC
	}
	return f.File.Write(p)
}

func (f *full) Sync() error {
	if f.full {
		return syscall.ENOSPC
	}
	return f.File.Sync()
}

func (f *full) Truncate(n int64) error {
	if f.noTruncate {
		return syscall.EIO
	}
	return f.File.Truncate(n)
}

// A full disk: the session goes on, the user hears once that the
// transcript stopped (naming its folder) and once that it resumed, and
// the records that waited meanwhile are written, in order, whether or
// not the half-written line could be cut back.
func TestFullDisk(t *testing.T) {
	for _, noTruncate := range []bool{false, true} {
		dir := t.TempDir()
		w, err := Create(dir, Meta{Workspace: "/ws"})
		if err != nil {
			t.Fatal(err)
		}
		f := &full{File: w.f.(*os.File), noTruncate: noTruncate}
		w.f = f
		w.Append(message("a"))
		f.full = true
		if err := w.Append(message("b")); !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("Append on a full disk = %v, want ENOSPC", err)
		}
		w.Append(message("c"))
		if err := w.Sync(); err == nil {
			t.Errorf("Sync on a full disk = nil, want an error")
		}
		told := w.Notices()
		if len(told) != 1 || !strings.Contains(told[0], dir) || !strings.Contains(told[0], "cannot be written") {
			t.Errorf("Notices on a full disk = %q, want one warning naming %s", told, dir)
		}
		f.full = false
		if err := w.Append(message("d")); err != nil {
			t.Errorf("Append once the disk has room = %v", err)
		}
		if told := w.Notices(); len(told) != 1 || !strings.Contains(told[0], "written again") {
			t.Errorf("Notices once the disk has room = %q, want one saying it is written again", told)
		}
		w.Close()
		got, skipped := contents(t, w.Path())
		if strings.Join(got, ",") != "a,b,c,d" {
			t.Errorf("noTruncate %v: messages %q, want a, b, c, d", noTruncate, got)
		}
		// Each failed try left half a line when it could not be cut
		// back: they are skipped as damaged, never joined to a record.
		if noTruncate != (len(skipped) > 0) {
			t.Errorf("noTruncate %v: skipped %v", noTruncate, skipped)
		}
	}
}

// Past maxQueue the oldest waiting records are dropped, said once; a
// record in their place says how many.
func TestFullDiskDropsTheOldest(t *testing.T) {
	w, err := Create(t.TempDir(), Meta{})
	if err != nil {
		t.Fatal(err)
	}
	f := &full{File: w.f.(*os.File), full: true}
	w.f = f
	big := strings.Repeat("x", 1<<20)
	for range 20 {
		w.Append(message(big))
	}
	if told := w.Notices(); len(told) != 2 || !strings.Contains(told[1], "dropped") {
		t.Errorf("Notices = %q, want the stop and the drop", told)
	}
	f.full = false
	w.Append(message("end"))
	w.Close()
	recs, _ := Load(w.Path())
	gap, kept := "", 0
	for _, r := range recs {
		switch {
		case r.Kind == KindEvent:
			gap = r.Text
		case r.Kind == KindMessage:
			kept++
		}
	}
	if !strings.Contains(gap, "records were lost") || kept < 2 || kept > 17 {
		t.Errorf("after the drop: gap record %q, %d messages kept; want the gap said and 2–17 kept", gap, kept)
	}
}

// A state folder where the transcript cannot be made (here a file stands
// where the folder should be; a read-only disk fails the same way) never
// stops the session: Begin says so, and the transcript is made, its meta
// record first, at the first record after the folder can be.
func TestCannotCreateThenCan(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	os.WriteFile(state, nil, 0o600)
	dir := filepath.Join(state, "sessions")
	w := Begin(dir, Meta{Workspace: "/ws"})
	if w.Err() == nil {
		t.Fatal("Begin in a folder that cannot be made: no error")
	}
	if told := w.Notices(); len(told) != 1 || !strings.Contains(told[0], dir) {
		t.Errorf("Notices = %q, want one naming %s", told, dir)
	}
	w.Append(message("a"))
	os.Remove(state)
	w.Append(message("b"))
	w.Close()
	recs, err := Load(w.Path())
	if err != nil || len(recs) != 3 || recs[0].Kind != KindMeta || recs[0].Meta.Workspace != "/ws" {
		t.Errorf("Load = %d records, %v; want meta, a, b", len(recs), err)
	}
}

// One writer per transcript: a second Open, in this process or another,
// is refused while the first holds it, and works after it closed.
func TestLock(t *testing.T) {
	defer func(d time.Duration) { lockWait = d }(lockWait)
	lockWait = 100 * time.Millisecond
	w, err := Create(t.TempDir(), Meta{})
	if err != nil {
		t.Fatal(err)
	}
	w.Append(message("a"))
	if _, _, err := Open(w.Path()); !errors.Is(err, ErrInUse) {
		t.Errorf("Open of a transcript a Writer holds = %v, want ErrInUse", err)
	}
	w.Close()
	w2, _, err := Open(w.Path())
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	if _, _, err := Open(w.Path()); !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), w.ID()) {
		t.Errorf("second Open = %v, want ErrInUse naming the session", err)
	}
	w2.Close()

	// A holder that lets go while Open waits: Open takes it.
	w3, _, _ := Open(w.Path())
	time.AfterFunc(20*time.Millisecond, func() { w3.Close() })
	w4, _, err := Open(w.Path())
	if err != nil {
		t.Errorf("Open while the holder closes within lockWait: %v", err)
	} else {
		w4.Close()
	}
}

// While the file cannot be made, the records dropped past maxQueue are
// never its meta record: the file, once made, starts with it, then says
// what was lost.
func TestCannotCreateKeepsTheMeta(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	os.WriteFile(state, nil, 0o600)
	w := Begin(filepath.Join(state, "sessions"), Meta{Workspace: "/ws"})
	big := strings.Repeat("x", 1<<20)
	for range 20 {
		w.Append(message(big))
	}
	os.Remove(state)
	w.Append(message("end"))
	w.Close()
	recs, err := Load(w.Path())
	if err != nil || len(recs) < 3 {
		t.Fatalf("Load = %d records, %v", len(recs), err)
	}
	if recs[0].Kind != KindMeta || recs[1].Kind != KindEvent || !strings.Contains(recs[1].Text, "records were lost") {
		t.Errorf("the file starts %s, %s %q; want the meta record, then the gap", recs[0].Kind, recs[1].Kind, recs[1].Text)
	}
	if last := recs[len(recs)-1]; last.Message == nil || last.Message.Content != "end" {
		t.Errorf("the last record is not the last appended")
	}
	if got := Latest(filepath.Join(state, "sessions"), "/ws"); got != w.Path() {
		t.Errorf("Latest = %q, want the transcript made late", got)
	}
}
