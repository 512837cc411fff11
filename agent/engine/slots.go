package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
)

// Slot is one of llama.cpp's parallel slots as GET /slots shows it.
type Slot struct {
	ID         int
	Processing bool
	// Used is set once a task ran on the slot: its cache holds a prompt
	// (PromptTokens long). A slot never used shows only its id and state.
	Used         bool
	PromptTokens int
	// Task is the id of the last task that ran on the slot (llama.cpp
	// numbers its tasks in order), 0 when none: the slot with the
	// smallest was used least recently, and a slot whose task changed
	// since a session's last request was taken over meanwhile.
	Task int
	// Prompt is the cached prompt's text on builds that show it (older
	// ones); "" on current builds.
	Prompt string
}

// Slots reads llama.cpp's GET /slots.
func Slots(ctx context.Context, opts Options) ([]Slot, error) {
	d := newDiscoverer(opts)
	var raw []struct {
		ID           int     `json:"id"`
		Processing   bool    `json:"is_processing"`
		IDTask       *int    `json:"id_task"`
		PromptTokens int     `json:"n_prompt_tokens"`
		Prompt       *string `json:"prompt"`
	}
	url := rootOf(opts.BaseURL) + "/slots"
	if opts.Router {
		url = routerURL(url, opts.Model)
	}
	if err := d.getJSON(ctx, url, "GET /slots", &raw); err != nil {
		return nil, err
	}
	out := make([]Slot, len(raw))
	for i, r := range raw {
		out[i] = Slot{ID: r.ID, Processing: r.Processing, Used: r.IDTask != nil || r.PromptTokens > 0, PromptTokens: r.PromptTokens}
		if r.IDTask != nil {
			out[i].Task = *r.IDTask
		}
		if r.Prompt != nil {
			out[i].Prompt = *r.Prompt
			out[i].Used = out[i].Used || *r.Prompt != ""
		}
	}
	return out, nil
}

// ChooseSlot picks the slot a session pins its requests to, and says why:
// the slot named by prefer (the one the session used before a restart)
// when it exists; else, when the engine shows cached prompts and one
// shares a prefix with prompt, the one sharing the longest; else a slot
// no task has used — among those the one key hashes to, so that a session
// keeps its choice and two sessions with different keys tend to part —;
// else, every slot holding another session's prompt, the least recently
// used one not processing (the smallest last task): sessions beyond the
// engine's slots share them, each evicting the one idle longest; else
// the one key hashes to.
func ChooseSlot(slots []Slot, key string, prefer int, prompt string) (id int, why string) {
	if len(slots) == 0 {
		return -1, "the engine shows no slots"
	}
	for _, s := range slots {
		if s.ID == prefer && prefer >= 0 {
			return s.ID, "the slot this session used before"
		}
	}
	if prompt != "" {
		best, bestN := -1, 0
		for _, s := range slots {
			if n := commonPrefixLen(s.Prompt, prompt); n > bestN {
				best, bestN = s.ID, n
			}
		}
		if best >= 0 {
			return best, "its cached prompt shares the longest prefix with ours"
		}
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	pick := func(ok func(Slot) bool) int {
		var ids []int
		for _, s := range slots {
			if ok(s) {
				ids = append(ids, s.ID)
			}
		}
		if len(ids) == 0 {
			return -1
		}
		return ids[int(h.Sum32()%uint32(len(ids)))]
	}
	if id := pick(func(s Slot) bool { return !s.Used && !s.Processing }); id >= 0 {
		return id, "no task has used it"
	}
	lru := -1
	for i, s := range slots {
		if !s.Processing && (lru < 0 || s.Task < slots[lru].Task) {
			lru = i
		}
	}
	if lru >= 0 {
		return slots[lru].ID, "every slot holds another session's prompt: the least recently used, shared"
	}
	return pick(func(Slot) bool { return true }), "every slot was busy: a stable choice"
}

func commonPrefixLen(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// SlotResult is llama.cpp's answer to a slot action.
type SlotResult struct {
	// Tokens are those saved, restored or erased; Bytes those written or
	// read; MS the time it took.
	Tokens, Bytes int
	MS            float64
}

// Slot actions of POST /slots/{id}?action=….
const (
	SlotSave    = "save"
	SlotRestore = "restore"
	SlotErase   = "erase"
)

// SlotAction asks llama.cpp to save slot id's cache to filename (in the
// directory of its --slot-save-path), restore it from there, or erase it
// (filename unused). It may take as long as a prefill (a large cache read
// or written), so it is bounded by Timeouts.Idle. A server started without
// --slot-save-path answers HTTP 501: the error is then of kind Server with
// Status 501.
func SlotAction(ctx context.Context, opts Options, id int, action, filename string) (SlotResult, error) {
	t := opts.Timeouts.withDefaults()
	t.Probe = t.Idle
	d := &discoverer{opts: opts, t: t, http: opts.httpClient()}
	var body *strings.Reader
	if action != SlotErase {
		b, _ := json.Marshal(map[string]string{"filename": filename})
		body = strings.NewReader(string(b))
	} else {
		body = strings.NewReader("{}")
	}
	var raw struct {
		NSaved    int `json:"n_saved"`
		NRestored int `json:"n_restored"`
		NErased   int `json:"n_erased"`
		NWritten  int `json:"n_written"`
		NRead     int `json:"n_read"`
		Timings   struct {
			SaveMS    float64 `json:"save_ms"`
			RestoreMS float64 `json:"restore_ms"`
		} `json:"timings"`
	}
	op := "POST /slots/" + strconv.Itoa(id) + "?action=" + action
	url := rootOf(opts.BaseURL) + "/slots/" + strconv.Itoa(id) + "?action=" + action
	if err := d.doJSON(ctx, http.MethodPost, url, op, body, &raw); err != nil {
		return SlotResult{}, err
	}
	return SlotResult{
		Tokens: raw.NSaved + raw.NRestored + raw.NErased,
		Bytes:  raw.NWritten + raw.NRead,
		MS:     raw.Timings.SaveMS + raw.Timings.RestoreMS,
	}, nil
}

// SlotSaving reports whether llama.cpp was started with --slot-save-path.
// It asks for an action no build knows: without the flag the server
// refuses every slot action first (HTTP 501); with it, it refuses the
// action (HTTP 400 "Invalid action"). Neither touches a slot.
func SlotSaving(ctx context.Context, opts Options) (bool, error) {
	d := newDiscoverer(opts)
	var v any
	err := d.doJSON(ctx, http.MethodPost, rootOf(opts.BaseURL)+"/slots/0?action=probe", "POST /slots/0?action=probe", strings.NewReader("{}"), &v)
	var ee *Error
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ee) && ee.Status == http.StatusNotImplemented:
		return false, nil
	case errors.As(err, &ee) && ee.Status == http.StatusBadRequest:
		return true, nil
	}
	return false, fmt.Errorf("could not tell whether slots can be saved: %w", err)
}
