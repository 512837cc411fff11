package editors

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
)

// reviewAnswer is the run's answer in Markdown: what the panel renders.
const reviewAnswer = "## Greeting capitalized\n\nGreet in `greet.go:5` now says:\n\n- **Hello** with a capital H\n- the name unchanged\n\n```go\nreturn \"Hello, \" + name // the new line\n```\n\n<script>alert(1)</script> stays text."

// reviewScript edits greet.go, then writes .env (protected: VS Code's
// refactor preview asks, and the driver discards it), then answers. The
// write comes late enough for the lens to be timed with nothing else
// going on (the preview's opening takes the browser for a while).
func reviewScript() string {
	return `[` + greetEdit + `,
  {"tool_calls": [{"name": "write", "arguments": {"path": ".env", "content": "TOKEN=secret\n"}}], "fault": {"latency": "` + testslow.Scale(3*time.Second).String() + `"}},
  {"content": ` + jsonString(reviewAnswer) + `}]`
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// lensWait is what the driver measured of a CodeLens: how long until it
// was as wanted, and the lines it sat above.
type lensWait struct {
	MS    int   `json:"ms"`
	OK    bool  `json:"ok"`
	Value []int `json:"value"`
}

// reviewRecord is the driver's record of the review scenario.
type reviewRecord struct {
	Error string `json:"error"`
	Final string `json:"final"`
	Lens  struct {
		Shown lensWait `json:"shown"`
		Moved lensWait `json:"moved"`
		Gone  struct {
			MS int  `json:"ms"`
			OK bool `json:"ok"`
		} `json:"gone"`
	} `json:"lens"`
	Waited struct {
		Panel *struct {
			Waiting string `json:"waiting"`
			Header  string `json:"header"`
		} `json:"panel"`
		PanelMS      int    `json:"panelMs"`
		Notification string `json:"notification"`
	} `json:"waited"`
	Conversation struct {
		Rendered *struct {
			Header string `json:"header"`
			Turns  []struct {
				Answered bool     `json:"answered"`
				Headings []string `json:"headings"`
				Items    []string `json:"items"`
				Code     []struct {
					Lang   string `json:"lang"`
					Tokens int    `json:"tokens"`
				} `json:"code"`
				Links    []string `json:"links"`
				Scripts  int      `json:"scripts"`
				Progress struct {
					Folded  bool   `json:"folded"`
					Summary string `json:"summary"`
					Lines   int    `json:"lines"`
				} `json:"progress"`
			} `json:"turns"`
		} `json:"rendered"`
	} `json:"conversation"`
	Text string `json:"text"`
}

// TestVSCodeReview: the review and the panel as a user meets them in VS
// Code. The Keep · Undo CodeLens shows above the change within a second
// of its landing, moves down with it when the user types lines above, and
// goes once the user rewrites the changed line; while the protected
// change to .env waits in the refactor preview, a notification says it is
// protected and why, and the panel's header says it waits for the user's
// answer; the answer is rendered as Markdown (a heading, a list, a
// highlighted code block, the file as a link, no HTML from the model),
// with the rounds folded under one progress line.
func TestVSCodeReview(t *testing.T) {
	longBoot(t, "TestVSCode")
	r := newRig(t, reviewScript(), map[string]string{"greet.go": greetGo})
	recs := runCodeServer(t, r, map[string]any{"reika.endpoint": r.Endpoint, "reika.serverPath": r.Bin},
		r.Env("REIKA_DRIVER_MODE=review"))
	var rec reviewRecord
	found := false
	for _, x := range recs {
		if x.Scenario == "review" {
			found = true
			if err := json.Unmarshal(x.Result, &rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !found {
		t.Fatal("the driver wrote no review record")
	}
	t.Logf("the lens shown %d ms after the edit landed (above line %v), moved in %d ms (%v), gone in %d ms; the panel waited after %d ms: %+v; notification %q; end line %q",
		rec.Lens.Shown.MS, rec.Lens.Shown.Value, rec.Lens.Moved.MS, rec.Lens.Moved.Value, rec.Lens.Gone.MS, rec.Waited.PanelMS, rec.Waited.Panel, rec.Waited.Notification, rec.Final)
	// VS Code asks for the lenses a debounce after it is told: its average
	// of the last asks' times, which the asks of the editor's start make
	// about a second on a loaded machine (0.96 to 1.08 s measured; told
	// again at 0.75 s as before, the ask was put off: 1.7 to 2.1 s). The
	// marks the user's own edits move or end follow within a second.
	shown, bound := int(testslow.Scale(1500*time.Millisecond).Milliseconds()), int(testslow.Scale(time.Second).Milliseconds())
	if !rec.Lens.Shown.OK || rec.Lens.Shown.MS > shown || len(rec.Lens.Shown.Value) != 1 || rec.Lens.Shown.Value[0] != 5 {
		t.Errorf("the Keep · Undo CodeLens: shown %v after %d ms above line %v; want it above line 5 within %d ms", rec.Lens.Shown.OK, rec.Lens.Shown.MS, rec.Lens.Shown.Value, shown)
	}
	if !rec.Lens.Moved.OK || rec.Lens.Moved.MS > bound {
		t.Errorf("after two lines typed above the change the CodeLens sat above line %v after %d ms, want line 7 within %d ms", rec.Lens.Moved.Value, rec.Lens.Moved.MS, bound)
	}
	if !rec.Lens.Gone.OK || rec.Lens.Gone.MS > bound {
		t.Errorf("after the user rewrote the changed line the CodeLens went: %v after %d ms, want gone within %d ms", rec.Lens.Gone.OK, rec.Lens.Gone.MS, bound)
	}
	if !strings.Contains(rec.Waited.Notification, "protected") || !strings.Contains(rec.Waited.Notification, "environment") {
		t.Errorf("while the preview waited the notification said %q, want .env named protected and why", rec.Waited.Notification)
	}
	if p := rec.Waited.Panel; p == nil || !strings.Contains(p.Waiting, ".env") || !strings.Contains(strings.ToLower(p.Header), "waiting for your answer") {
		t.Errorf("while the preview waited the panel showed %+v, want its header to say it waits for the answer about .env", p)
	}
	checkRendered(t, rec)
	if !strings.Contains(rec.Final, "declined") && !strings.Contains(rec.Final, ".env") {
		t.Logf("the end line %q does not name the declined .env", rec.Final)
	}
}

// checkRendered checks the panel's page as it rendered the run.
func checkRendered(t *testing.T, rec reviewRecord) {
	t.Helper()
	c := rec.Conversation
	if c.Rendered == nil || len(c.Rendered.Turns) != 1 {
		t.Fatalf("the panel rendered %+v, want the one run", c.Rendered)
	}
	turn := c.Rendered.Turns[0]
	if len(turn.Headings) != 1 || turn.Headings[0] != "Greeting capitalized" {
		t.Errorf("the answer's headings %q, want the one heading rendered", turn.Headings)
	}
	if len(turn.Items) != 2 || turn.Items[0] != "Hello with a capital H" {
		t.Errorf("the answer's list items %q, want two, the first in bold text", turn.Items)
	}
	if len(turn.Code) != 1 || turn.Code[0].Lang != "go" || turn.Code[0].Tokens < 3 {
		t.Errorf("the answer's code blocks %+v, want the Go block highlighted", turn.Code)
	}
	if len(turn.Links) == 0 || turn.Links[0] != "greet.go:5" {
		t.Errorf("the answer's links %q, want greet.go:5 a link to the changed line", turn.Links)
	}
	if turn.Scripts != 0 {
		t.Errorf("the answer made %d script elements: the model's HTML must stay text", turn.Scripts)
	}
	if !turn.Progress.Folded || turn.Progress.Lines < 2 || !strings.Contains(turn.Progress.Summary, "round") {
		t.Errorf("the run's progress: %+v, want its rounds and tool calls folded under one line that names the rounds", turn.Progress)
	}
	if !strings.Contains(c.Rendered.Header, "ctx") {
		t.Errorf("the panel's header %q, want the context chip in it", c.Rendered.Header)
	}
}

// TestVSCodeQuestion: the run asks to run a command outside the sandbox
// (window/showMessageRequest). While the notification waits, the panel's
// header says the run waits for the user's answer, and the question is in
// the run; once the user clicks Deny, the panel no longer waits. Under the
// build tag long: TestVSCodeReview stands for it by default (the protected
// change's wait).
func TestVSCodeQuestion(t *testing.T) {
	if !testslow.Long {
		t.Skip("under the build tag long (go test -tags long ./editors); TestVSCodeReview stands for it")
	}
	script := `[{"tool_calls": [{"name": "bash", "arguments": {"command": "echo deployed", "outside_sandbox": true}}]}, {"content": "Not deployed."}]`
	r := newRig(t, script, map[string]string{"greet.go": greetGo})
	rec := vscodeScenario(t, r, "question")
	var got struct {
		Waiting struct {
			Waiting string `json:"waiting"`
			Header  string `json:"header"`
		} `json:"waiting"`
		Clicked  bool `json:"clicked"`
		Answered struct {
			Header string `json:"header"`
		} `json:"answered"`
		Final string `json:"final"`
	}
	if err := json.Unmarshal(rec.Result, &got); err != nil {
		t.Fatal(err)
	}
	t.Logf("while asked: header %q, question %q; after Deny: header %q; end line %q", got.Waiting.Header, got.Waiting.Waiting, got.Answered.Header, got.Final)
	if !strings.Contains(got.Waiting.Waiting, "echo deployed") {
		t.Errorf("the panel's question %q, want the command it asks about", got.Waiting.Waiting)
	}
	if strings.Contains(strings.ToLower(got.Answered.Header), "waiting") {
		t.Errorf("after Deny the panel's header %q still waits", got.Answered.Header)
	}
}
