package sim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSlotSaveRestore saves a slot, erases it, restores it into another
// slot of another server of the same model, and checks that a request
// pinned there reuses the restored prompt to the token.
func TestSlotSaveRestore(t *testing.T) {
	dir := t.TempDir()
	conv := body(system("A system prompt that the whole session keeps, long enough to count."), user("explain the loader"))
	s1, url1 := start(t, Config{Slots: 2, SlotSavePath: dir})
	first := chatOK(t, url1, with(conv, "id_slot", 1))
	if rec := waitRecords(t, s1, 1)[0]; rec.Slot != 1 {
		t.Fatalf("id_slot 1 went to slot %d", rec.Slot)
	}

	status, data := do(t, "POST", url1+"/slots/1?action=save", map[string]any{"filename": "a.bin"})
	var saved struct {
		IDSlot   int    `json:"id_slot"`
		Filename string `json:"filename"`
		NSaved   int    `json:"n_saved"`
		NWritten int    `json:"n_written"`
		Timings  struct {
			SaveMS *float64 `json:"save_ms"`
		} `json:"timings"`
	}
	if err := json.Unmarshal(data, &saved); status != 200 || err != nil {
		t.Fatalf("save = %d %s", status, data)
	}
	// The slot holds the prompt and the tokens generated after it.
	if want := first.Usage.PromptTokens + first.Usage.CompletionTokens; saved.IDSlot != 1 || saved.Filename != "a.bin" || saved.NSaved != want || saved.Timings.SaveMS == nil {
		t.Errorf("save answered %s, want slot 1, a.bin, %d tokens, a save_ms", data, want)
	}
	if fi, err := os.Stat(filepath.Join(dir, "a.bin")); err != nil || fi.Size() != int64(saved.NWritten) {
		t.Errorf("the file: %v, size %v, want n_written %d", err, fi, saved.NWritten)
	}

	status, data = do(t, "POST", url1+"/slots/1?action=erase", nil)
	if status != 200 || string(data) != `{"id_slot":1,"n_erased":`+itoa(saved.NSaved)+`}` {
		t.Errorf("erase = %d %s, want the slot's %d tokens erased", status, data, saved.NSaved)
	}
	if again := chatOK(t, url1, with(conv, "id_slot", 1)); again.Timings.CacheN != 0 {
		t.Errorf("after erase: cache_n = %d, want 0", again.Timings.CacheN)
	}

	// A new server (the engine restarted), the file restored into slot 0.
	s2, url2 := start(t, Config{Slots: 2, SlotSavePath: dir})
	status, data = do(t, "POST", url2+"/slots/0?action=restore", map[string]any{"filename": "a.bin"})
	var restored struct {
		IDSlot    int    `json:"id_slot"`
		Filename  string `json:"filename"`
		NRestored int    `json:"n_restored"`
		NRead     int    `json:"n_read"`
	}
	if err := json.Unmarshal(data, &restored); status != 200 || err != nil {
		t.Fatalf("restore = %d %s", status, data)
	}
	if restored.IDSlot != 0 || restored.NRestored != saved.NSaved || restored.NRead != saved.NWritten {
		t.Errorf("restore answered %s, want slot 0, %d tokens, %d bytes", data, saved.NSaved, saved.NWritten)
	}
	next := with(body(system("A system prompt that the whole session keeps, long enough to count."), user("explain the loader"),
		assistant(first.content()), user("and the writer?")), "id_slot", 0)
	got := chatOK(t, url2, next)
	if got.Timings.CacheN < first.Usage.PromptTokens {
		t.Errorf("after restore: cache_n = %d, want at least the saved prompt's %d", got.Timings.CacheN, first.Usage.PromptTokens)
	}
	if rec := waitRecords(t, s2, 1)[0]; rec.Slot != 0 {
		t.Errorf("the request went to slot %d, want 0", rec.Slot)
	}
}

// TestSlotActionErrors holds the refusals to llama.cpp's messages and
// statuses.
func TestSlotActionErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "junk.bin"), []byte("not a slot"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, off := start(t, Config{Slots: 2})
	_, on := start(t, Config{Slots: 2, SlotSavePath: dir})
	_, other := start(t, Config{Slots: 2, SlotSavePath: dir, Model: "another-model.gguf"})
	_, url := start(t, Config{Slots: 2, SlotSavePath: dir})
	do(t, "POST", url+"/slots/0?action=save", map[string]any{"filename": "saved.bin"})
	restoreErr := `{"error":{"code":400,"message":"Unable to restore slot, no available space in KV cache or invalid slot save file","type":"invalid_request_error"}}`
	tests := []struct {
		name, url, path string
		body            any
		status          int
		want            string
	}{
		{"no slot-save-path", off, "/slots/0?action=save", map[string]any{"filename": "a.bin"}, 501,
			"{\"error\":{\"code\":501,\"message\":\"This server does not support slots action. Start it with `--slot-save-path`\",\"type\":\"not_supported_error\"}}"},
		{"no slot-save-path, bad action", off, "/slots/0?action=probe", nil, 501, ""},
		{"id not a number", on, "/slots/x?action=save", map[string]any{"filename": "a.bin"}, 400,
			`{"error":{"code":400,"message":"Invalid slot ID","type":"invalid_request_error"}}`},
		{"id out of range", on, "/slots/2?action=save", map[string]any{"filename": "a.bin"}, 400,
			`{"error":{"code":400,"message":"Invalid slot ID","type":"invalid_request_error"}}`},
		{"bad action", on, "/slots/0?action=probe", nil, 400,
			`{"error":{"code":400,"message":"Invalid action","type":"invalid_request_error"}}`},
		{"filename with a directory", on, "/slots/0?action=save", map[string]any{"filename": "../a.bin"}, 400,
			`{"error":{"code":400,"message":"Invalid filename","type":"invalid_request_error"}}`},
		{"missing file", on, "/slots/0?action=restore", map[string]any{"filename": "never.bin"}, 400, restoreErr},
		{"not a slot file", on, "/slots/0?action=restore", map[string]any{"filename": "junk.bin"}, 400, restoreErr},
		{"another model's file", other, "/slots/0?action=restore", map[string]any{"filename": "saved.bin"}, 400, restoreErr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, data := do(t, "POST", tt.url+tt.path, tt.body)
			if status != tt.status || (tt.want != "" && string(data) != tt.want) {
				t.Errorf("POST %s = %d %s, want %d %s", tt.path, status, data, tt.status, tt.want)
			}
		})
	}
}

// TestSlotsAfterShape compares a used slot in GET /slots with the
// capture taken after requests.
func TestSlotsAfterShape(t *testing.T) {
	_, url := start(t, Config{Ctx: 8192})
	chatOK(t, url, body(user("hello")))
	_, got := do(t, "GET", url+"/slots", nil)
	want := readCapture(t, "llama.cpp", "c8192-np1", "14-slots-after.json")
	if diff := cmp.Diff(flatKeys(t, want, "[].params"), flatKeys(t, got, "[].params")); diff != "" {
		t.Errorf("GET /slots keys differ from 14-slots-after.json (-capture +sim):\n%s", diff)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
