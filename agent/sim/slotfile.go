package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// slotFileFormat marks the files the simulator saves. A real llama-server
// writes the slot's KV cells; the simulator writes the tokens, which is
// all its cache is.
const slotFileFormat = "reika-sim-slot/1"

// slotFile is what action=save writes and action=restore reads. A slot
// of a model that cannot roll back (Config.Cache) keeps its checkpoints
// and its last prompt's end in the file too, as the real build keeps the
// checkpoints; a dense slot's file has only its tokens.
type slotFile struct {
	Format      string   `json:"format"`
	Model       string   `json:"model"`
	Tokens      []string `json:"tokens"`
	PromptEnd   int      `json:"prompt_end,omitempty"`
	Checkpoints []int    `json:"checkpoints,omitempty"`
}

// valid reports whether f's checkpoints and prompt end lie within its
// tokens, the checkpoints in order.
func (f slotFile) valid() bool {
	last := 0
	for _, p := range f.Checkpoints {
		if p <= last || p > len(f.Tokens) {
			return false
		}
		last = p
	}
	return f.PromptEnd >= 0 && f.PromptEnd <= len(f.Tokens)
}

// errRestore is llama.cpp's one answer to a file it cannot load: missing,
// unreadable, of another model, or larger than the slot.
const errRestore = "Unable to restore slot, no available space in KV cache or invalid slot save file"

// errBadSlotFile is a restore that failed: answered with errRestore.
var errBadSlotFile = errors.New("the slot file cannot be restored")

// slotAction is POST /slots/{id}?action=save|restore|erase, in llama.cpp's
// order of checks: the --slot-save-path (501 without it), the slot id as
// a number, the action, the body's filename, then the slot itself, which
// the action waits for while a request uses it.
func (s *Server) slotAction(w http.ResponseWriter, r *http.Request) {
	if s.cfg.SlotSavePath == "" {
		s.writeError(w, http.StatusNotImplemented, "This server does not support slots action. Start it with `--slot-save-path`")
		return
	}
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		s.writeError(w, http.StatusBadRequest, "Invalid slot ID")
		return
	}
	action := r.URL.Query().Get("action")
	if action != "save" && action != "restore" && action != "erase" {
		s.writeError(w, http.StatusBadRequest, "Invalid action")
		return
	}
	filename := ""
	if action != "erase" {
		var ok bool
		if filename, ok = s.slotFilename(w, r); !ok {
			return
		}
	}
	if id < 0 || id >= len(s.slots.slots) {
		s.writeError(w, http.StatusBadRequest, "Invalid slot ID")
		return
	}
	start := time.Now()
	path := filepath.Join(s.cfg.SlotSavePath, filename)
	var out obj
	err = s.slots.idle(r.Context(), id, func(sl *slot) error {
		var err error
		switch action {
		case "save":
			out, err = s.saveSlot(sl, path, filename, start)
		case "restore":
			out, err = s.restoreSlot(sl, path, filename, start)
		case "erase":
			out = eraseSlot(sl)
		}
		return err
	})
	switch {
	case r.Context().Err() != nil:
		return
	case errors.Is(err, errBadSlotFile):
		s.writeError(w, http.StatusBadRequest, errRestore)
	case err != nil:
		s.writeError(w, http.StatusInternalServerError, err.Error())
	default:
		s.writeJSON(w, http.StatusOK, out)
	}
}

// slotFilename reads the "filename" of a save or restore body, answering
// llama.cpp's error (its JSON library's wording included) and reporting
// false when there is none or it is not a plain file name.
func (s *Server) slotFilename(w http.ResponseWriter, r *http.Request) (string, bool) {
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, http.StatusInternalServerError, err.Error())
		return "", false
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		s.writeError(w, http.StatusInternalServerError, "[json.exception.parse_error.101] parse error: "+err.Error())
		return "", false
	}
	raw, ok := req["filename"]
	if !ok {
		s.writeError(w, http.StatusInternalServerError, "[json.exception.out_of_range.403] key 'filename' not found")
		return "", false
	}
	var filename string
	if err := json.Unmarshal(raw, &filename); err != nil {
		s.writeError(w, http.StatusInternalServerError, "[json.exception.type_error.302] type must be string")
		return "", false
	}
	if !validFilename(filename) {
		s.writeError(w, http.StatusBadRequest, "Invalid filename")
		return "", false
	}
	return filename, true
}

// sinceMS is the time since start in milliseconds, to the microsecond.
func sinceMS(start time.Time) float64 { return float64(time.Since(start).Microseconds()) / 1000 }

// saveSlot writes sl's tokens (and checkpoints) to path and answers as
// action=save does.
func (s *Server) saveSlot(sl *slot, path, filename string, start time.Time) (obj, error) {
	f := slotFile{Format: slotFileFormat, Model: s.cfg.Model, Tokens: sl.tokens}
	if s.cfg.Cache.Kind != CacheDense {
		f.PromptEnd, f.Checkpoints = sl.promptEnd, sl.points
	}
	data := mustEncode(f)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return nil, fmt.Errorf("failed to save slot: %v", err)
	}
	return obj{{"id_slot", sl.id}, {"filename", filename}, {"n_saved", len(sl.tokens)}, {"n_written", len(data)},
		{"timings", obj{{"save_ms", sinceMS(start)}}}}, nil
}

// restoreSlot loads sl's tokens and checkpoints from path and answers as
// action=restore does. A file it cannot take (missing, not a slot file,
// another model's, larger than the window, checkpoints out of place)
// empties the slot and is errBadSlotFile. A file without a prompt end
// (a dense slot's) ends its prompt at its last token.
func (s *Server) restoreSlot(sl *slot, path, filename string, start time.Time) (obj, error) {
	data, err := os.ReadFile(path)
	var f slotFile
	if err == nil {
		err = json.Unmarshal(data, &f)
	}
	if err != nil || f.Format != slotFileFormat || f.Model != s.cfg.Model || len(f.Tokens) > s.cfg.Ctx || !f.valid() {
		sl.slotCache = slotCache{}
		return nil, errBadSlotFile
	}
	if f.PromptEnd == 0 {
		f.PromptEnd = len(f.Tokens)
	}
	sl.slotCache, sl.used = slotCache{tokens: f.Tokens, promptEnd: f.PromptEnd, points: f.Checkpoints}, true
	return obj{{"id_slot", sl.id}, {"filename", filename}, {"n_restored", len(f.Tokens)}, {"n_read", len(data)},
		{"timings", obj{{"restore_ms", sinceMS(start)}}}}, nil
}

// eraseSlot empties sl's cache and answers as action=erase does.
func eraseSlot(sl *slot) obj {
	n := len(sl.tokens)
	sl.slotCache = slotCache{}
	return obj{{"id_slot", sl.id}, {"n_erased", n}}
}

// validFilename is llama.cpp's fs_validate_filename in short: a plain
// name of at most 255 bytes of UTF-8, no directory, no character that some
// file system reserves, no leading or trailing space or dot-only name.
func validFilename(name string) bool {
	if name == "" || len(name) > 255 || !utf8.ValidString(name) || name == "." || name == ".." {
		return false
	}
	if strings.TrimSpace(name) != name || strings.HasSuffix(name, ".") {
		return false
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(`/\:*?"<>|`, c) {
			return false
		}
	}
	return true
}

// idle runs fn on slot id once no request uses it (llama.cpp defers a slot
// action on a busy slot), holding the pool's lock.
func (p *slotPool) idle(ctx context.Context, id int, fn func(*slot) error) error {
	for {
		p.mu.Lock()
		s := p.slots[id]
		if !s.busy {
			defer p.mu.Unlock()
			return fn(s)
		}
		freed := p.freed
		p.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
