package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Saved caches are files in the engine's --slot-save-path directory, which
// Reika cannot list or delete: llama-server offers save, restore and erase
// (which empties a slot, not a file), nothing more. So the files are
// pruned by their names: each engine and workspace has at most
// slotFilesKept of them, reika-<key>-<n>.bin, and a new save past that —
// or past slotBytesCap for the ones kept — overwrites the oldest. A
// session overwrites its own file at each save. The index in the state
// directory says which session and prompt each file holds; the transcript
// says which file a session saved last.
const (
	slotFilesKept = 3
	slotBytesCap  = 8 << 30
)

// slotSave is one saved cache as the index records it.
type slotSave struct {
	File string `json:"file"`
	// Key names the engine and the workspace (slotKey).
	Key     string    `json:"key"`
	Session string    `json:"session"`
	Hash    string    `json:"hash"`
	Tokens  int       `json:"tokens"`
	Bytes   int       `json:"bytes"`
	At      time.Time `json:"at"`
}

// slotIndex is the record of saved caches, a JSON file in the state
// directory. Two processes that save at the same moment may lose one's
// entry; the file is then taken for another's and not restored, which
// costs a prefill and nothing else.
type slotIndex struct {
	path string
}

func slotIndexPath(stateDir string) string { return filepath.Join(stateDir, "slot-saves.json") }

// slotKey names an engine and a workspace in a file name.
func slotKey(endpoint, workspace string) string {
	h := sha256.Sum256([]byte(endpoint + "\n" + workspace))
	return hex.EncodeToString(h[:4])
}

func (x *slotIndex) load() []slotSave {
	data, err := os.ReadFile(x.path)
	if err != nil {
		return nil
	}
	var out []slotSave
	if json.Unmarshal(data, &out) != nil {
		return nil
	}
	return out
}

func (x *slotIndex) store(saves []slotSave) error {
	data, err := json.MarshalIndent(saves, "", "  ")
	if err != nil {
		return err
	}
	tmp := x.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("slot index: %w", err)
	}
	if err := os.Rename(tmp, x.path); err != nil {
		return fmt.Errorf("slot index: %w", err)
	}
	return nil
}

// lookup returns the index's entry for a file.
func (x *slotIndex) lookup(file string) (slotSave, bool) {
	for _, e := range x.load() {
		if e.File == file {
			return e, true
		}
	}
	return slotSave{}, false
}

// claim names the file a save of session under key goes to: the session's
// own, else a new one while fewer than slotFilesKept exist and they hold
// less than slotBytesCap, else the oldest.
func (x *slotIndex) claim(key, session string) string {
	var mine []slotSave
	total := 0
	for _, e := range x.load() {
		if e.Key != key {
			continue
		}
		if e.Session == session {
			return e.File
		}
		mine = append(mine, e)
		total += e.Bytes
	}
	if len(mine) < slotFilesKept && total < slotBytesCap {
		for n := 0; ; n++ {
			name := fmt.Sprintf("reika-%s-%d.bin", key, n)
			if !slices.ContainsFunc(mine, func(e slotSave) bool { return e.File == name }) {
				return name
			}
		}
	}
	oldest := slices.MinFunc(mine, func(a, b slotSave) int { return a.At.Compare(b.At) })
	return oldest.File
}

// record puts a save in the index, in place of what the file held before.
func (x *slotIndex) record(e slotSave) error {
	if e.At.IsZero() {
		e.At = time.Now().UTC()
	}
	saves := slices.DeleteFunc(x.load(), func(o slotSave) bool { return o.File == e.File })
	return x.store(append(saves, e))
}
