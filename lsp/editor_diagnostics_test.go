package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/agent/sim"
	"github.com/reika-lsp/reika/lsp/lsptest"
)

// chatMessages are the messages of a chat request's body, their text.
func chatMessages(t *testing.T, body []byte) []string {
	t.Helper()
	var req struct {
		Messages []struct {
			Content any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("the engine's request: %v", err)
	}
	var out []string
	for _, m := range req.Messages {
		b, _ := json.Marshal(m.Content)
		var s string
		if json.Unmarshal(b, &s) != nil {
			s = string(b)
		}
		out = append(out, s)
	}
	return out
}

// The editor's diagnostics sent with an ask reach the model in the ask,
// placed in bytes of the line (the editor counts UTF-16 units), those of
// files outside the workspace and hints left out; the diagnostics tool
// answers from them where no language server runs.
func TestEditorDiagnosticsInTheAsk(t *testing.T) {
	const page = "<p>\n  <b>café 😀</b> <blink>x</blink>\n</p>\n"
	e := lsptest.Start(t, lsptest.Config{
		Caps:  lsptest.Full(),
		Files: map[string]string{"page.html": page},
		Engine: sim.Config{Script: []sim.Turn{
			{ToolCalls: []sim.ScriptCall{{Name: "diagnostics", Arguments: json.RawMessage(`{"paths":["page.html"]}`)}}},
			{Content: "Done."},
		}},
	})
	e.Open("page.html")
	blink := e.Find("page.html", `<blink>`)
	diag := func(r lsptest.Range, sev int, msg, src string) map[string]any {
		return map[string]any{"range": r, "severity": sev, "message": msg, "source": src}
	}
	diags := []map[string]any{
		{"uri": e.URI("page.html"), "diagnostics": []any{
			diag(blink, 2, "The blink element is obsolete", "htmlhint"),
			diag(blink, 4, "a hint the model is not shown", "htmlhint"),
		}},
		{"uri": "file:///elsewhere/other.html", "diagnostics": []any{diag(blink, 1, "outside the workspace", "htmlhint")}},
	}
	mark := e.Mark()
	if _, err := e.Exec("reika.ask", map[string]any{"instruction": "fix the page", "diagnostics": diags}); err != nil {
		t.Fatal(err)
	}
	e.WaitRunEnd(mark)
	first, _ := e.Engine.WaitRecord("the first request", func(r sim.RequestRecord) bool { return r.Seq == 1 })
	msgs := chatMessages(t, first.Body)
	asked := msgs[len(msgs)-1]
	// <blink> is at UTF-16 unit 19 of its line, byte 20 (é takes two
	// bytes, 😀 four bytes and two units): column 21.
	if want := "page.html:2:21: warning: The blink element is obsolete (htmlhint)"; !strings.Contains(asked, want) || !strings.Contains(asked, "The editor shows 1 error or warning") {
		t.Errorf("the ask = %q, want the editor's warning %q", asked, want)
	}
	for _, left := range []string{"outside the workspace", "a hint"} {
		if strings.Contains(asked, left) {
			t.Errorf("the ask = %q, want %q left out", asked, left)
		}
	}
	second, _ := e.Engine.WaitRecord("the second request", func(r sim.RequestRecord) bool { return r.Seq == 2 })
	msgs = chatMessages(t, second.Body)
	result := msgs[len(msgs)-1]
	if !strings.Contains(result, "page.html:2:21: warning: The blink element is obsolete") || !strings.Contains(result, "the editor, as of the ask") || !strings.Contains(result, "<blink>x</blink>") {
		t.Errorf("diagnostics' result = %q, want the editor's warning with its line", result)
	}
}
