package editors

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
)

// The race and the undo in Helix 25.01 under tmux. Helix sends each
// change at once (no debounce) and refuses an edit for a version it has
// passed with applied:false; the test reads its answers and the server's
// messages from its log (hx -v logs the LSP traffic), the buffer from
// the file after :w.

// withLatency adds an engine latency to every turn of script that calls
// a tool: the edit arrives that long after the request, time for the
// user to type.
func withLatency(t *testing.T, script string, d time.Duration) string {
	t.Helper()
	var turns []map[string]any
	if err := json.Unmarshal([]byte(script), &turns); err != nil {
		t.Fatal(err)
	}
	for _, turn := range turns {
		if turn["tool_calls"] != nil {
			turn["fault"] = map[string]string{"latency": d.String()}
		}
	}
	b, err := json.Marshal(turns)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// helixLog is Helix's log of its traffic with reika (hx -v): the answers
// it gave to workspace/applyEdit, and the messages the server showed.
type helixLog struct {
	answers  []string
	messages []string
	// edits are when each workspace/applyEdit reached Helix, typed when
	// it sent each didChange with a line "// typed before Fi" (by i).
	edits []time.Time
	typed map[int]time.Time
}

// helixTraffic matches a logged message: `reika -> {…}` (Helix to the
// server) or `reika <- {…}`.
var helixTraffic = regexp.MustCompile(`\breika (->|<-) (\{.*\})\s*$`)

var typedLine = regexp.MustCompile(`// typed before F(\d+)\\n`)

func readHelixLog(t *testing.T, r *rig) helixLog {
	t.Helper()
	f, err := os.Open(filepath.Join(r.Tmp, "xdg-cache", "helix", "helix.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hl := helixLog{typed: map[int]time.Time{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		m := helixTraffic.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, _ := time.ParseInLocation("2006-01-02T15:04:05.000", strings.SplitN(sc.Text(), " ", 2)[0], time.Local)
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Message string `json:"message"`
			} `json:"params"`
			Result *struct {
				Applied       *bool  `json:"applied"`
				FailureReason string `json:"failureReason"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(m[2]), &msg) != nil {
			continue
		}
		switch {
		case m[1] == "<-" && msg.Method == "workspace/applyEdit":
			hl.edits = append(hl.edits, at)
		case m[1] == "->" && msg.Method == "textDocument/didChange":
			if t := typedLine.FindStringSubmatch(m[2]); t != nil {
				i, _ := strconv.Atoi(t[1])
				if _, ok := hl.typed[i]; !ok {
					hl.typed[i] = at
				}
			}
		case m[1] == "<-" && msg.Method == "window/showMessage":
			hl.messages = append(hl.messages, msg.Params.Message)
		case m[1] == "->" && msg.Result != nil && msg.Result.Applied != nil:
			if *msg.Result.Applied {
				hl.answers = append(hl.answers, "applied")
			} else {
				hl.answers = append(hl.answers, "refused: "+msg.Result.FailureReason)
			}
		}
	}
	return hl
}

// waitHelixLog polls Helix's log until ok accepts it, or fails after
// limit (times REIKA_TEST_SLOW).
func waitHelixLog(t *testing.T, r *rig, ok func(helixLog) bool, limit time.Duration) helixLog {
	t.Helper()
	limit = testslow.Scale(limit)
	deadline := time.Now().Add(limit)
	for {
		hl := readHelixLog(t, r)
		if ok(hl) {
			return hl
		}
		if time.Now().After(deadline) {
			t.Fatalf("not in helix.log within %v; messages %q", limit, hl.messages)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// endLine is the end-of-run message among msgs: the one with the model's
// last words.
func endLine(msgs []string, words string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if strings.Contains(msgs[i], words) {
			return msgs[i]
		}
	}
	return ""
}

// save writes Helix's buffer with :w and returns the file's lines.
func (m *tmux) save(r *rig, name string) []string {
	m.t.Helper()
	m.text(":w")
	m.keys("Enter")
	m.waitFor(":w", "written", 5*time.Second)
	b, err := os.ReadFile(filepath.Join(r.WS, name))
	if err != nil {
		m.t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// paste types text as a bracketed paste: Helix inserts it as it is (no
// comment continuation, no auto-pairs), before the selection.
func (m *tmux) paste(text string) {
	m.cmd("set-buffer", "-b", "typed", text)
	m.cmd("paste-buffer", "-p", "-r", "-d", "-b", "typed", "-t", "hx")
}

// search selects the next match of a regular expression.
func (m *tmux) search(re string) {
	m.text("/" + re)
	m.keys("Enter")
}

// helixLatency is how long the engine takes to send each edit; the user
// types a line at helixTypeAt(i) after picking the code action, around
// the time the edit arrives.
const helixLatency = 400 * time.Millisecond

func helixTypeAt(i int) time.Duration {
	return helixLatency - 60*time.Millisecond + time.Duration(i-1)*8*time.Millisecond
}

// TestHelixRace: ten asks in one Helix session, "Reika: fix this code" on
// each Fi's return line; while the engine takes its time, the user types
// a line above Fi (at the top of the file for odd i, right above Fi for
// even i). Helix sends the typing at once: the edit is planned on it, or
// it arrives for a version Helix has passed, is refused and placed again.
// No trial may put it on a wrong line, and each end line says what
// happened.
func TestHelixRace(t *testing.T) {
	longTrial(t)
	r := newRig(t, withLatency(t, raceScript(raceTrials), helixLatency), map[string]string{"greet.go": raceFile(raceTrials)})
	start := time.Now()
	m := startHelixArgs(t, r, "-v", "greet.go:1")
	var trials []trial
	seen := 0
	for i := 1; i <= raceTrials; i++ {
		m.search(fmt.Sprintf(`return "hello %d, "`, i))
		m.codeAction("Reika: fix this code")
		picked := time.Now()
		time.Sleep(time.Until(picked.Add(helixTypeAt(i))))
		if i%2 == 1 {
			m.keys("g", "g")
		} else {
			m.search(fmt.Sprintf(`// F%d says hello\.`, i))
		}
		m.paste(fmt.Sprintf("// typed before F%d\n", i))
		typed := time.Since(picked)
		// The end line, from the log: the user's typing clears Helix's
		// status line when it comes after the end of the run.
		done := fmt.Sprintf("Reika: Done %d.", i)
		hl := waitHelixLog(t, r, func(hl helixLog) bool { return endLine(hl.messages, done) != "" }, 15*time.Second)
		lines := m.save(r, "greet.go")
		hl = readHelixLog(t, r)
		if seen > len(hl.answers) {
			t.Fatalf("trial %d: helix.log holds %d applyEdit answers, fewer than the %d read before it", i, len(hl.answers), seen)
		}
		tr := trial{Lines: lines, Answers: hl.answers[seen:], Final: endLine(hl.messages, done)}
		trials = append(trials, tr)
		seen = len(hl.answers)
		when := "not seen"
		// A trial whose edit did not come (under load) has no answers:
		// judgeRace fails it; its log line only says so.
		if at, ok := hl.typed[i]; ok {
			if k := len(hl.edits) - len(tr.Answers); len(tr.Answers) > 0 && k >= 0 && k < len(hl.edits) {
				when = fmt.Sprintf("%+dms from the first edit", at.Sub(hl.edits[k]).Milliseconds())
			}
		}
		t.Logf("trial %d: typed %v after the pick; its didChange %s", i, typed.Round(time.Millisecond), when)
	}
	if d, limit := time.Since(start), testslow.Scale(45*time.Second); d > limit {
		t.Errorf("%d trials took %v, want under %v", raceTrials, d, limit)
	}
	t.Logf("%d trials in %v", raceTrials, time.Since(start).Round(time.Millisecond))
	judgeRace(t, raceFile(raceTrials), trials)
}

// TestHelixUndo: the edit lands and the user presses u 50 ms later,
// while the run still waits for the engine's last words. Helix sends the
// edit's change at once and the undo in a didChange of its own. The
// server must not apply it again, and the end line says it was undone by
// the user; the file ends without it.
func TestHelixUndo(t *testing.T) {
	longTrial(t)
	r := newRig(t, `[`+greetEdit+`, {"content": "Done.", "fault": {"latency": "500ms"}}]`, map[string]string{"greet.go": greetGo})
	start := time.Now()
	m := startHelixArgs(t, r, "-v", "greet.go:5")
	m.codeAction("Reika: fix this code")
	deadline := time.Now().Add(testslow.Scale(10 * time.Second))
	for !strings.Contains(m.screen(), `"Hello, " + name + "!"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the edit did not land within %v:\n%s", testslow.Scale(10*time.Second), m.screen())
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	m.keys("u")
	m.waitFor("the user's undo", `"hello, " + name`, 5*time.Second)
	undone := m.save(r, "greet.go")
	m.waitFor("the end of the run", "Reika: Done.", 10*time.Second)
	// Time for the server to send the edit again, if it does.
	time.Sleep(time.Second)
	lines := m.save(r, "greet.go")
	hl := readHelixLog(t, r)
	res := trial{Lines: lines, Undone: undone, Answers: hl.answers, Final: endLine(hl.messages, "Done.")}
	t.Logf("undo in %v: answers %q; messages %q", time.Since(start).Round(time.Millisecond), hl.answers, hl.messages)
	judgeUndo(t, greetGo, res)
	if !strings.Contains(res.Final, "undone by you") {
		t.Errorf("server: the end line does not say the change was undone by you: %q", res.Final)
	}
}
