package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/transcript"
)

// slotState is the llama.cpp slot a session pins its requests to, and the
// saving of its cache across restarts. Its fields are set by Start before
// the first request and read-only after, but for lastSave, guarded by the
// session's mu.
type slotState struct {
	// id is the slot, -1 when the engine has none (not llama.cpp); pin
	// sends it with every request (more than one slot).
	id  int
	pin bool
	why string
	// fresh is set while the slot was chosen as one no task had used and
	// the session has sent nothing: another session may have taken it
	// since (confirmSlot).
	fresh bool
	key   string
	// engineSaves is set when the engine was started with
	// --slot-save-path; saving when the session keeps a transcript too:
	// the cache is then saved after each run.
	engineSaves, saving bool
	opts                engine.Options
	index               *slotIndex
	// saveErr is the last save's failure, for the status.
	saveErr string
	// pending is closed when the save in the background ends; nil when
	// none runs.
	pending chan struct{}
	// lastTask is the engine's last task on the pinned slot after the
	// session's last run (markSlot), 0 when not known.
	lastTask int
}

// SlotInfo says which engine slot the session uses and whether its cache
// outlives the engine.
type SlotInfo struct {
	// ID is the slot, -1 when the engine has none; Pinned is set when the
	// engine has several and every request names this one; Why says how
	// it was chosen.
	ID     int
	Pinned bool
	Why    string
	// EngineSaves is set when the engine saves slots (--slot-save-path);
	// Saving when the session saves its own after each run (it keeps a
	// transcript to resume); SaveError is the last save's failure, if any.
	EngineSaves, Saving bool
	SaveError           string
}

// Slot is the session's engine slot.
func (s *Session) Slot() SlotInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SlotInfo{ID: s.slot.id, Pinned: s.slot.pin, Why: s.slot.why, EngineSaves: s.slot.engineSaves, Saving: s.slot.saving, SaveError: s.slot.saveErr}
}

// slotRef is the id_slot for the next request, nil to let the engine
// choose.
func (s *Session) slotRef() *int {
	if !s.slot.pin {
		return nil
	}
	id := s.slot.id
	return &id
}

// SlotSaveHint tells how to keep llama.cpp's cache across restarts.
const SlotSaveHint = "start llama-server with --slot-save-path DIR (a directory it may write) to keep a session's cache across restarts"

// setupSlot pins the session to a slot of a llama.cpp engine and finds out
// whether the engine saves slots; a resumed session then restores its
// saved cache when the rebuilt prompt is the one saved. It adds what the
// user should know to notices.
func (s *Session) setupSlot(ctx context.Context, conn *engine.Connection, stateDir string, notices *[]Notice) {
	d := conn.Discovery
	s.slot = slotState{id: -1, opts: conn.Options}
	if d.Flavor != engine.LlamaCpp {
		return
	}
	note := func(warn bool, format string, args ...any) {
		*notices = append(*notices, Notice{Warning: warn, Text: fmt.Sprintf(format, args...)})
	}
	s.slot.id, s.slot.why = 0, "the engine's only slot"
	if d.Slots > 1 {
		slots, err := engine.Slots(ctx, conn.Options)
		if err != nil {
			note(false, "llama.cpp has %d slots but did not list them (%v): requests are not pinned to one, and another session may evict this one's cache", d.Slots, err)
			s.slot.id, s.slot.why = -1, "not pinned"
		} else {
			prefer := -1
			if s.resumedSlot != nil {
				prefer = s.resumedSlot.ID
			}
			key := s.ID()
			if key == "" {
				key = transcript.NewID(time.Now()) // no transcript: a key of its own
			}
			s.slot.id, s.slot.why = engine.ChooseSlot(slots, key, prefer, "")
			s.slot.pin = s.slot.id >= 0
			s.slot.key = key
			if i := slotIndexOf(slots, s.slot.id); i >= 0 {
				s.slot.fresh = !slots[i].Used
			}
		}
	}
	if s.slot.id >= 0 && s.tr != nil {
		s.tr.Append(transcript.Record{Kind: transcript.KindSlot, Slot: &transcript.Slot{ID: s.slot.id}})
	}
	if s.slot.pin {
		note(false, "llama.cpp slot %d of %d for this session (%s)", s.slot.id, d.Slots, s.slot.why)
	}
	if s.slot.id < 0 {
		return
	}
	on, err := engine.SlotSaving(ctx, conn.Options)
	switch {
	case err != nil:
		note(false, "%v: the cache is not saved", err)
		return
	case !on:
		// Said by check (and the README), not at every start.
		return
	}
	s.slot.engineSaves = true
	if stateDir == "" {
		return // nothing to resume from: nothing to save
	}
	s.slot.saving = true
	s.slot.index = &slotIndex{path: slotIndexPath(stateDir)}
	note(false, "llama.cpp saves slots (--slot-save-path): this session's cache is saved after each run and restored by reika.resume")
	if s.resumedSave != nil {
		s.restoreSlot(ctx, note)
	}
}

func slotIndexOf(slots []engine.Slot, id int) int {
	for i, sl := range slots {
		if sl.ID == id {
			return i
		}
	}
	return -1
}

// confirmSlot is called before the session's first request: a slot that
// was chosen because no task had used it, and that a task has used since
// (another session that started at the same time), is chosen again.
func (s *Session) confirmSlot(ctx context.Context) {
	s.mu.Lock()
	fresh := s.slot.fresh && s.stats.Requests == 0
	s.slot.fresh = false
	s.mu.Unlock()
	if !fresh {
		return
	}
	slots, err := engine.Slots(ctx, s.slot.opts)
	if err != nil {
		return
	}
	if i := slotIndexOf(slots, s.slot.id); i < 0 || !slots[i].Used {
		return
	}
	id, why := engine.ChooseSlot(slots, s.slot.key, -1, "")
	s.mu.Lock()
	defer s.mu.Unlock()
	if id >= 0 && id != s.slot.id {
		s.slot.id, s.slot.why = id, why+" (the first choice was taken meanwhile)"
		if s.tr != nil {
			s.tr.Append(transcript.Record{Kind: transcript.KindSlot, Slot: &transcript.Slot{ID: id}})
		}
	}
}

// restoreSlot loads the cache a resumed session saved into its slot, when
// the request rebuilt from the transcript is the one whose cache was saved
// and no later session took the file.
func (s *Session) restoreSlot(ctx context.Context, note func(bool, string, ...any)) {
	saved := s.resumedSave
	fallback := "the first request prefills the whole prompt"
	if got := promptHash(s.prev); got != saved.Hash {
		note(false, "the saved cache %s holds another prompt than the one rebuilt from the transcript: %s", saved.File, fallback)
		return
	}
	if e, ok := s.slot.index.lookup(saved.File); !ok || e.Session != s.ID() || e.Hash != saved.Hash {
		note(false, "the saved cache %s was replaced by a later session's: %s", saved.File, fallback)
		return
	}
	res, err := engine.SlotAction(ctx, s.slot.opts, s.slot.id, engine.SlotRestore, saved.File)
	if err != nil {
		note(false, "the saved cache %s could not be restored (%v): %s", saved.File, err, fallback)
		return
	}
	note(false, "restored %d tokens of the engine's cache from %s into slot %d in %.0f ms: the next request continues it", res.Tokens, saved.File, s.slot.id, res.MS)
}

// startSave saves the slot's cache in the background after a run: the
// prompt the run sent last, and what the engine generated after it. The
// next run, and Close, wait for it (awaitSave), so that the save is the
// engine's next task on the slot.
func (s *Session) startSave() {
	s.mu.Lock()
	prev := s.prev
	if !s.slot.saving || prev == nil || s.slot.pending != nil {
		s.mu.Unlock()
		return
	}
	done := make(chan struct{})
	s.slot.pending = done
	s.mu.Unlock()
	hash := promptHash(prev)
	go func() {
		defer func() {
			s.mu.Lock()
			s.slot.pending = nil
			s.mu.Unlock()
			close(done)
		}()
		ws := s.cfg.Workspace
		key := slotKey(s.slot.opts.BaseURL, ws)
		file := s.slot.index.claim(key, s.ID())
		ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
		defer cancel()
		res, err := engine.SlotAction(ctx, s.slot.opts, s.slot.id, engine.SlotSave, file)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.slot.saveErr = err.Error()
			s.note(transcript.KindEvent, "slot save failed: "+err.Error())
			return
		}
		s.slot.saveErr = ""
		if err := s.slot.index.record(slotSave{File: file, Key: key, Session: s.ID(), Hash: hash, Tokens: res.Tokens, Bytes: res.Bytes}); err != nil {
			s.slot.saveErr = err.Error()
		}
		if s.tr != nil {
			s.tr.Append(transcript.Record{Kind: transcript.KindSlot, Slot: &transcript.Slot{ID: s.slot.id, File: file, Hash: hash, Tokens: res.Tokens}})
			s.tr.Sync()
		}
	}()
}

// saveTimeout bounds a save: a large cache written to a slow disk.
const saveTimeout = 10 * time.Minute

// awaitSave waits for a save in the background, if any.
func (s *Session) awaitSave(ctx context.Context) error {
	s.mu.Lock()
	p := s.slot.pending
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p:
		return nil
	case <-ctx.Done():
		return errors.New("waiting for the slot's save: " + ctx.Err().Error())
	}
}

// promptHash names a prompt: the first 16 hex digits of the SHA-256 of
// its bytes as promptBytes serializes them.
func promptHash(prompt []byte) string {
	h := sha256.Sum256(prompt)
	return hex.EncodeToString(h[:8])
}

// ID is the session's id: its transcript's, or "" without one.
func (s *Session) ID() string {
	if s.tr == nil {
		return ""
	}
	return s.tr.ID()
}

// sessionKey names the session to the engine's routers: its transcript's
// id where it keeps one (the same across a resume), else its own.
func (s *Session) sessionKey() string {
	if id := s.ID(); id != "" && s.parentKey == "" {
		return id
	}
	return s.key
}
