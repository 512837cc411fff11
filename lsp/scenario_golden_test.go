package lsp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/tools/txtar"

	"github.com/reika-lsp/reika/agent/sim"
)

// result is a command's answer as the golden shows it: normalized, with
// numbers (sizes and budgets, which move with any prompt change) as N.
func (r *runner) result(res json.RawMessage, err error) string {
	if err != nil {
		return "error: " + r.normalize(err.Error())
	}
	var v any
	if err := json.Unmarshal(res, &v); err != nil {
		return r.normalize(string(res))
	}
	var titled []struct {
		Title string `json:"title"`
	}
	if json.Unmarshal(res, &titled) == nil && len(titled) > 0 && titled[0].Title != "" {
		var ts []string
		for _, x := range titled {
			ts = append(ts, x.Title)
		}
		return fmt.Sprintf("%d actions: %s", len(ts), strings.Join(ts, " | "))
	}
	out, _ := json.Marshal(numbersOut(v))
	return r.normalize(string(out))
}

func numbersOut(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, y := range x {
			x[k] = numbersOut(y)
		}
	case []any:
		for i, y := range x {
			x[i] = numbersOut(y)
		}
	case float64:
		return "N"
	}
	return v
}

var (
	chipRx    = regexp.MustCompile(`ctx [0-9.]+[kM]?(/[0-9.]+[kM]? \(\d+% of [0-9.]+[kM]?\))?`)
	tokensRx  = regexp.MustCompile(`\d+ → \d+ tokens`)
	bytesRx   = regexp.MustCompile(`\b\d+(-byte| bytes)\b`)
	stampRx   = regexp.MustCompile(`\d{8}-\d{6}(-[0-9a-z]+)?`)
	figuresRx = regexp.MustCompile(`shed at \d+, down to \d+; reserve \d+`)
	// breakdownRx is reika.status's window by part, whose figures move
	// with the prompt's wording.
	breakdownRx = regexp.MustCompile(`prefix \S+ · map \S+ · recap \S+ · history \S+ · tools \S+( · reserve \S+ · free \S+)?`)
	// sandboxRx is the sandbox's line, which says what this machine's
	// kernel enforces.
	sandboxRx = regexp.MustCompile(`landlock ABI \d+: [^"\n]*|no sandbox[^"\n]*`)
)

// normalize takes out what changes from run to run: temp paths, the
// engine's address, the chip's figures, sizes, times of day.
func (r *runner) normalize(s string) string {
	e := r.e
	s = strings.ReplaceAll(s, e.StateDir, "$STATE")
	s = strings.ReplaceAll(s, e.Root, "$WS")
	s = strings.ReplaceAll(s, filepath.Dir(e.Root), "$TMP")
	s = strings.ReplaceAll(s, e.Engine.URL, "$ENGINE")
	s = chipRx.ReplaceAllString(s, "ctx <chip>")
	s = tokensRx.ReplaceAllString(s, "N → N tokens")
	s = bytesRx.ReplaceAllString(s, "N$1")
	s = stampRx.ReplaceAllString(s, "<time>")
	s = figuresRx.ReplaceAllString(s, "shed at N, down to N; reserve N")
	s = breakdownRx.ReplaceAllString(s, "<breakdown>")
	s = sandboxRx.ReplaceAllString(s, "<sandbox>")
	return s
}

// activityRx is a progress line that tells what a long wait waits for:
// it comes at times, not at steps, so the transcript leaves it out.
var activityRx = regexp.MustCompile(`^progress report: (engine reading about|engine writing, about|running .* \(\d+ s\)$)`)

// timed reports whether a transcript line is an activity line.
func timed(line string) bool {
	return activityRx.MatchString(line)
}

// goldens renders the scenario's outcome.
func (r *runner) goldens(sc scenario) []txtar.File {
	e := r.e
	var out []txtar.File
	var tr strings.Builder
	closing := false
	for _, ev := range e.Events() {
		switch {
		case ev.Line == "", timed(ev.Line):
		case ev.Method == "" && ev.Line == "> shutdown":
			// What the server sends once the editor is closing races
			// with the connection's end: it is not part of the golden.
			closing = true
			tr.WriteString(ev.Line + "\n")
		case closing && ev.Method != "":
		default:
			tr.WriteString(r.normalize(ev.Line) + "\n")
		}
	}
	out = append(out, txtar.File{Name: "want/transcript", Data: []byte(tr.String())})
	out = append(out, txtar.File{Name: "want/results", Data: []byte(lines(r.results))})

	var eng strings.Builder
	for _, q := range renderRequests(e.Engine.Requests()) {
		eng.WriteString(r.normalize(q.header) + "\n")
		for _, m := range q.messages {
			eng.WriteString("  " + clip(r.normalize(m), 220) + "\n")
		}
	}
	out = append(out, txtar.File{Name: "want/engine", Data: []byte(eng.String())})

	names := map[string]bool{}
	for n := range sc.files {
		names[n] = true
	}
	for _, n := range e.Files() {
		names[n] = true
	}
	for _, d := range e.Docs() {
		if rel := e.Rel(d.Path); !filepath.IsAbs(rel) {
			names[rel] = true
		}
	}
	var sorted []string
	for n := range names {
		if !r.generated[n] {
			sorted = append(sorted, n)
		}
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		text, ok := e.Current(n)
		switch {
		case !ok:
			text = "(no such file)\n"
		case text != "" && !strings.HasSuffix(text, "\n"):
			text += "\n\\ No newline at end of file\n"
		}
		out = append(out, txtar.File{Name: "want/docs/" + n, Data: []byte(text)})
	}
	return out
}

func lines(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// clip writes s on one line of at most n characters.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return string(rs[:n]) + fmt.Sprintf("…(+%d)", len(rs)-n)
}

// request is one chat request as the golden shows it: a header, and the
// messages that were new since the request before (all but the system
// prompt for the first, and after a rewrite such as a fold).
type request struct {
	header   string
	messages []string
}

func renderRequests(recs []sim.RequestRecord) []request {
	var out []request
	var prev []json.RawMessage
	names := map[string]string{} // tool call id → tool name
	for _, rec := range recs {
		var body struct {
			Messages   []json.RawMessage `json:"messages"`
			ToolChoice json.RawMessage   `json:"tool_choice"`
		}
		json.Unmarshal(rec.Body, &body)
		h := fmt.Sprintf("#%d %s", rec.Seq, rec.Source)
		if rec.ToolChoice != "" && rec.ToolChoice != "auto" {
			h += " tool_choice=" + rec.ToolChoice
		}
		if len(rec.ToolCalls) > 0 {
			h += fmt.Sprintf(" → %s", strings.Join(rec.ToolCalls, ", "))
		}
		if rec.Error != "" {
			h += fmt.Sprintf(" error %d: %s", rec.Status, rec.Error)
		}
		if rec.Cancelled {
			h += " (cancelled)"
		}
		same := 0
		for same < len(prev) && same < len(body.Messages) && bytes.Equal(prev[same], body.Messages[same]) {
			same++
		}
		start := same
		if same < len(prev) {
			h += fmt.Sprintf(" [rewritten from message %d]", same+1)
		}
		if len(prev) == 0 || same < len(prev) {
			start = max(start, 1) // the system prompt is not shown
		}
		q := request{header: h}
		for _, raw := range body.Messages {
			var m struct {
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				} `json:"tool_calls"`
			}
			json.Unmarshal(raw, &m)
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Function.Name
			}
		}
		for _, raw := range body.Messages[min(start, len(body.Messages)):] {
			q.messages = append(q.messages, renderMessage(raw, names))
		}
		out = append(out, q)
		prev = body.Messages
	}
	return out
}

func renderMessage(raw json.RawMessage, names map[string]string) string {
	var m struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	json.Unmarshal(raw, &m)
	var content string
	if err := json.Unmarshal(m.Content, &content); err != nil {
		var parts []struct {
			Text string `json:"text"`
		}
		json.Unmarshal(m.Content, &parts)
		for _, p := range parts {
			content += p.Text
		}
	}
	role := m.Role
	if m.ToolCallID != "" {
		role = "tool " + names[m.ToolCallID]
	}
	s := role + ": " + content
	for _, c := range m.ToolCalls {
		s += fmt.Sprintf(" → %s %s", c.Function.Name, c.Function.Arguments)
	}
	return s
}
