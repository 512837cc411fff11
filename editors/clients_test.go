package editors

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
)

// The scenarios every client without a Reika plugin plays (the protocol
// library, eglot, Helix): the files, and the simulated engine's script.

// greetGo is the file the client scenarios edit.
const greetGo = "package greet\n\n// Greet says hello.\nfunc Greet(name string) string {\n\treturn \"hello, \" + name\n}\n"

// greetEdit is the agent's edit of greetGo.
const greetEdit = `{"tool_calls": [{"name": "edit", "arguments": {"path": "greet.go", "old_text": "return \"hello, \" + name", "new_text": "return \"Hello, \" + name + \"!\""}}]}`

type clientScenario struct {
	name   string
	script string
	files  map[string]string
}

// clientScenarios are: apply (a code action's run edits greet.go), typing
// and typing-line (the user types above the edit, or on its line, just
// before it arrives), cancel (reika.cancel while the engine takes 4 s to
// answer) and compact (three log files read, then reika.compact).
func clientScenarios() []clientScenario {
	greet := map[string]string{"greet.go": greetGo}
	logs := map[string]string{"greet.go": greetGo, "README.md": "# Builds\nThe logs of the last three builds are under logs/.\n"}
	for _, b := range []struct {
		name string
		ms   int
	}{{"a", 120}, {"b", 130}, {"c", 990}} {
		var s strings.Builder
		for i := 1; i <= 40; i++ {
			fmt.Fprintf(&s, "build %s step %d: compiled package pkg%d in %dms without warnings\n", b.name, i, i, b.ms)
		}
		logs["logs/"+b.name+".log"] = s.String()
	}
	return []clientScenario{
		{"apply", `[{"tool_calls": [{"name": "read", "arguments": {"path": "greet.go"}}]}, ` + greetEdit +
			`, {"content": "Greet now capitalizes and ends with an exclamation mark."}]`, greet},
		{"typing", `[` + greetEdit + `, {"content": "Done."}]`, greet},
		{"typing-line", `[` + greetEdit + `, {"content": "Done."}]`, greet},
		{"cancel", `[{"tool_calls": [{"name": "edit", "arguments": {"path": "greet.go", "old_text": "return \"hello, \" + name", "new_text": "return \"Hello, \" + name"}}], "fault": {"latency": "4s"}}, {"content": "Done."}]`,
			greet},
		{"compact", `[{"tool_calls": [{"name": "read", "arguments": {"path": "logs/a.log"}}]},
			{"tool_calls": [{"name": "read", "arguments": {"path": "logs/b.log"}}]},
			{"tool_calls": [{"name": "read", "arguments": {"path": "logs/c.log"}}]},
			{"content": "All three builds passed; c.log is the slowest."},
			{"content": "logs: logs/a.log, logs/b.log, logs/c.log\nresult: every build step passed\nslowest: c.log"}]`, logs},
	}
}

// readmeEndpoint is the endpoint the README's snippets show.
const readmeEndpoint = "http://127.0.0.1:8080/v1"

// withEndpoint returns a README snippet with its example endpoint
// replaced by the rig's: the only change the tests make to a snippet.
// Run with envNoEndpoint, the server then reaches the engine only if the
// snippet's settings reach the server.
func (r *rig) withEndpoint(t *testing.T, snippet string) string {
	t.Helper()
	if !strings.Contains(snippet, readmeEndpoint) {
		t.Fatalf("the snippet does not set the endpoint %s:\n%s", readmeEndpoint, snippet)
	}
	return strings.ReplaceAll(snippet, readmeEndpoint, r.Endpoint)
}

// envNoEndpoint is the rig's environment without REIKA_ENDPOINT, so that
// the endpoint must come from the editor's settings.
func (r *rig) envNoEndpoint(extra ...string) []string {
	var env []string
	for _, e := range r.Env(extra...) {
		if !strings.HasPrefix(e, "REIKA_ENDPOINT=") {
			env = append(env, e)
		}
	}
	return env
}

// runEnv is r.run with the environment env.
func (r *rig) runEnv(t *testing.T, limit time.Duration, env []string, name string, args ...string) (string, error) {
	t.Helper()
	limit = testslow.Scale(limit)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = r.WS
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("%s did not finish within %v: %w", filepath.Base(name), limit, ctx.Err())
	}
	return string(out), err
}
