package agent

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/tools"
)

// A run's task list: the steps a reply states as a Markdown task list of
// two items or more ("- [ ] step", "- [x] step"), kept for the run, each
// ticked only from what Reika saw, never from the model's [x]:
//
//   - a step that names files (paths that exist in the workspace, or that
//     the run proposed) is done when an edit was applied to each of them;
//   - a step that names commands (in backticks, a program on the PATH:
//     `go test ./...`) is done when each ran to exit status 0 after the
//     step was stated, and stays done until a later run of it fails;
//   - a step that names both needs both; one the model marks [x] without
//     them is Claimed, one it does not mark is Pending.
//
// A later reply's list replaces the list, each step keeping what was
// seen of the step with the same text (or whose text it extends). Every
// change of the list or of a status is a TasksChanged event.

// TaskStatus is what Reika saw of a step.
type TaskStatus string

// The statuses of a step.
const (
	// TaskPending: not done, as far as Reika saw, and not said to be.
	TaskPending TaskStatus = "pending"
	// TaskDone: Reika saw what the step names happen (Task.Seen).
	TaskDone TaskStatus = "done"
	// TaskClaimed: the model marked it done; Reika did not see it.
	TaskClaimed TaskStatus = "claimed"
)

// Task is one step of a run's task list.
type Task struct {
	// Text is the step as the model wrote it, without its checkbox.
	Text   string
	Status TaskStatus
	// Seen says what ticked a done step: "edit applied to main.go",
	// "`go test ./...` exited 0".
	Seen string
}

// TasksDone counts the done steps of tasks.
func TasksDone(tasks []Task) int {
	n := 0
	for _, t := range tasks {
		if t.Status == TaskDone {
			n++
		}
	}
	return n
}

// taskList is a run's task list and what the run did that ticks a step.
// It belongs to the run's goroutine; a nil one keeps nothing.
type taskList struct {
	root    string          // the workspace, for the paths a step names
	steps   []*step         // in the order of the last list stated
	applied map[string]bool // workspace paths an edit was applied to
	touched map[string]bool // workspace paths the run proposed a change to
	// isCommand reports whether a word is a program (exec.LookPath).
	isCommand func(word string) bool
}

// step is one step and what was seen of it.
type step struct {
	text     string
	claimed  bool
	paths    []string        // the words that may name files
	commands []string        // the commands it names, spaces collapsed
	passed   map[string]bool // each command's last run since it was stated
}

func newTaskList(root string) *taskList {
	return &taskList{root: root, applied: map[string]bool{}, touched: map[string]bool{},
		isCommand: func(w string) bool { _, err := exec.LookPath(w); return err == nil }}
}

// stated takes a reply's text: when it states a task list, the list
// becomes the run's. It reports whether the list changed.
func (l *taskList) stated(reply string) bool {
	items := taskItems(reply)
	if l == nil || items == nil {
		return false
	}
	before := l.list()
	old := l.steps
	l.steps = nil
	for _, it := range items {
		st := &step{text: it.text, claimed: it.done, passed: map[string]bool{}}
		st.paths, st.commands = l.names(it.text)
		if prev := matchStep(old, it.text); prev != nil {
			for c, ok := range prev.passed {
				st.passed[c] = ok
			}
		}
		l.steps = append(l.steps, st)
	}
	return !slices.Equal(before, l.list())
}

// saw takes a tool call and its result; it reports whether a status
// changed.
func (l *taskList) saw(call engine.ToolCall, res tools.Result) bool {
	if l == nil || len(l.steps) == 0 && res.Proposal == nil {
		return false
	}
	before := l.list()
	if p := res.Proposal; p != nil {
		l.touched[p.Path] = true
		if res.Outcome != nil && res.Outcome.Applied {
			l.applied[p.Path] = true
		}
	}
	if call.Name == tools.BashTool && !res.Error {
		var a struct{ Command string }
		json.Unmarshal([]byte(call.Arguments), &a)
		ran := commandParts(a.Command)
		for _, st := range l.steps {
			for _, c := range st.commands {
				if slices.Contains(ran, c) {
					st.passed[c] = res.Passed
				}
			}
		}
	}
	return !slices.Equal(before, l.list())
}

// list is the steps with their statuses.
func (l *taskList) list() []Task {
	if l == nil || len(l.steps) == 0 {
		return nil
	}
	out := make([]Task, 0, len(l.steps))
	for _, st := range l.steps {
		out = append(out, l.task(st))
	}
	return out
}

// task is a step's status from what was seen.
func (l *taskList) task(st *step) Task {
	t := Task{Text: st.text, Status: TaskPending}
	if st.claimed {
		t.Status = TaskClaimed
	}
	var seen []string
	for _, w := range st.paths {
		path, ok := l.file(w)
		if !ok {
			continue
		}
		if !l.applied[path] {
			return t
		}
		seen = append(seen, "edit applied to "+path)
	}
	for _, c := range st.commands {
		if !st.passed[c] {
			return t
		}
		seen = append(seen, "`"+c+"` exited 0")
	}
	if len(seen) > 0 {
		t.Status, t.Seen = TaskDone, strings.Join(seen, ", ")
	}
	return t
}

// file is the workspace path a word of a step names, when it names one:
// a path the run proposed a change to, a file in the workspace, or a
// proposed path the word ends (an applied one first, then in order).
func (l *taskList) file(word string) (string, bool) {
	if l.touched[word] {
		return word, true
	}
	if l.root != "" {
		if st, err := os.Stat(filepath.Join(l.root, filepath.FromSlash(word))); err == nil && st.Mode().IsRegular() {
			return word, true
		}
	}
	var ends []string
	for p := range l.touched {
		if strings.HasSuffix(p, "/"+word) {
			ends = append(ends, p)
		}
	}
	slices.Sort(ends)
	for _, p := range ends {
		if l.applied[p] {
			return p, true
		}
	}
	if len(ends) > 0 {
		return ends[0], true
	}
	return "", false
}

// names are the words of a step's text that may name files, and the
// commands it names in backticks.
func (l *taskList) names(text string) (paths, commands []string) {
	for i, span := range strings.Split(text, "`") {
		if i%2 == 1 {
			c := strings.Join(strings.Fields(span), " ")
			if first, _, _ := strings.Cut(c, " "); first != "" && !strings.ContainsAny(first, "/.") && l.isCommand(first) {
				commands = append(commands, c)
				continue
			}
		}
		for _, w := range strings.Fields(span) {
			if p, ok := pathWord(w); ok && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	return paths, commands
}

// pathWord is a word that may be a path: it holds a dot or a slash, is
// not a URL or an option, and loses the punctuation around it and a
// ":line" after it.
func pathWord(w string) (string, bool) {
	w = strings.Trim(w, "\"'()[]{}<>,;!?*")
	w = strings.TrimRight(w, ".:")
	w = strings.TrimPrefix(w, "./")
	if i := strings.IndexByte(w, ':'); i > 0 {
		w = w[:i]
	}
	if w == "" || strings.HasPrefix(w, "-") || strings.Contains(w, "://") || !strings.ContainsAny(w, "./") {
		return "", false
	}
	return w, true
}

// commandParts is a command line's commands that its exit status 0 says
// passed: the line, and each part of a plain a && b chain.
func commandParts(line string) []string {
	line = strings.Join(strings.Fields(line), " ")
	parts := []string{line}
	if strings.Contains(line, "&&") && !strings.ContainsAny(strings.ReplaceAll(line, "&&", ""), "|;&") {
		for _, p := range strings.Split(line, "&&") {
			parts = append(parts, strings.TrimSpace(p))
		}
	}
	return parts
}

// matchStep is the step of old with the same text as text, else the
// one whose text text extends ("run the tests" → "run the tests: ok").
func matchStep(old []*step, text string) *step {
	key := strings.ToLower(strings.Join(strings.Fields(text), " "))
	var prefix *step
	for _, st := range old {
		k := strings.ToLower(strings.Join(strings.Fields(st.text), " "))
		switch {
		case k == key:
			return st
		case prefix == nil && strings.HasPrefix(key, k):
			prefix = st
		}
	}
	return prefix
}

// taskItem is one item of a Markdown task list.
type taskItem struct {
	text string
	done bool
}

// taskItems reads the task list a reply gives: "- [ ] step" to do,
// "- [x] step" done (also with * or + or no bullet). A reply with fewer
// than two such items gives none (nil).
func taskItems(text string) []taskItem {
	var out []taskItem
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		for _, m := range []string{"- ", "* ", "+ "} {
			line = strings.TrimPrefix(line, m)
		}
		if len(line) < 4 || line[0] != '[' || line[2] != ']' || line[3] != ' ' {
			continue
		}
		content := strings.TrimSpace(line[4:])
		if content == "" {
			continue
		}
		switch line[1] {
		case 'x', 'X':
			out = append(out, taskItem{text: content, done: true})
		case ' ':
			out = append(out, taskItem{text: content})
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}
