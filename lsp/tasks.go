package lsp

import (
	"fmt"
	"strings"

	"github.com/reika-lsp/reika/agent"
)

// A run's task list, as the agent ticks it from what it saw (a step the
// model only says is done is "claimed, not seen"): its count in the
// progress as it changes, the list at the end of the answer.

// tasksLine is the list's count: "Tasks: 2/5 done".
func tasksLine(tasks []agent.Task) string {
	return fmt.Sprintf("Tasks: %d/%d done", agent.TasksDone(tasks), len(tasks))
}

// withTasks is the answer with the run's task list after it, when the
// run has one.
func withTasks(answer string, tasks []agent.Task) string {
	if len(tasks) == 0 {
		return answer
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(answer))
	b.WriteString("\n\n")
	b.WriteString(tasksLine(tasks))
	for _, t := range tasks {
		switch t.Status {
		case agent.TaskDone:
			fmt.Fprintf(&b, "\n- [x] %s (seen: %s)", t.Text, t.Seen)
		case agent.TaskClaimed:
			fmt.Fprintf(&b, "\n- [ ] %s (claimed, not seen)", t.Text)
		default:
			fmt.Fprintf(&b, "\n- [ ] %s", t.Text)
		}
	}
	return b.String()
}
