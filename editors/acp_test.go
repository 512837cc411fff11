package editors

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodeACP returns node and the directory of the ACP client, whose
// node_modules `npm ci` installs (.ci/install-acp-client).
func nodeACP(t *testing.T) (node, dir string) {
	t.Helper()
	node = need(t, "node")
	dir, err := filepath.Abs("acp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk")); err != nil {
		need(t, "@agentclientprotocol/sdk (npm ci in editors/acp)")
	}
	return node, dir
}

// acpAnswer is the prompt scenario's answer: long enough to stream in
// several chunks.
const acpAnswer = "Greet returns hello and the name it is given, and nothing else."

// buildLogs are n build logs of about 9 KB each, for an overflow.
func buildLogs(n int) (map[string]string, string) {
	files := map[string]string{"greet.go": greetGo}
	var turns []string
	for i := 0; i < n; i++ {
		var b strings.Builder
		for l := 1; l <= 140; l++ {
			fmt.Fprintf(&b, "build a%d step %d: compiled package pkg%d in %dms without warnings\n", i, l, l, 100+l*7%90)
		}
		files[fmt.Sprintf("logs/a%d.log", i)] = b.String()
		turns = append(turns, fmt.Sprintf(`{"content": "Reading log a%d.", "tool_calls": [{"name": "read", "arguments": {"path": "logs/a%d.log"}}]}`, i, i))
	}
	return files, "[" + strings.Join(append(turns, `{"content": "They passed."}`), ", ") + "]"
}

// TestACPClient drives `reika-lsp acp` with the protocol's official
// TypeScript SDK (@agentclientprotocol/sdk), each scenario a node process
// against the simulated engine; see acp/scenarios.mjs.
func TestACPClient(t *testing.T) {
	logs, logScript := buildLogs(6)
	for _, sc := range []struct {
		name, script string
		files        map[string]string
		env          []string
	}{
		{name: "prompt", script: `[{"content": "` + acpAnswer + `"}, {"content": "unused"}]`, env: []string{"REIKA_TEST_ANSWER=" + acpAnswer}},
		{name: "diff", script: `[` + greetEdit + `, {"content": "Louder now."}]`},
		{name: "permission", script: `[` + greetEdit + `, {"content": "Done."}]`, env: []string{"REIKA_TEST_ANSWER=deny"}},
		{name: "permission", script: `[` + greetEdit + `, {"content": "Done."}]`, env: []string{"REIKA_TEST_ANSWER=once"}},
		{name: "cancel", script: `[{"content": "` + strings.Repeat("A long story streams slowly. ", 40) + `", "fault": {"chunk_latency": "50ms"}}, {"content": "Next."}]`},
		{name: "load", script: `[{"content": "It greets."}, {"content": "Then it returns."}]`},
		{name: "engine-down", script: `[]`, env: []string{"REIKA_ENDPOINT=http://127.0.0.1:1/v1"}},
		{name: "overflow", script: logScript, files: logs, env: []string{"REIKA_CONTEXT_WINDOW=32768"}},
		{name: "terminal", script: `[{"tool_calls": [{"name": "bash", "arguments": {"command": "echo from-the-terminal", "outside_sandbox": true}}]}, {"content": "It printed."}]`},
		{name: "malformed", script: `[{"tool_calls": [{"name": "read", "arguments": {"path": "greet.go"}}], "fault": {"malformed_tool_calls": true}}, {"content": "Recovered."}]`},
	} {
		label := sc.name
		if len(sc.env) > 0 && strings.HasPrefix(sc.env[0], "REIKA_TEST_ANSWER=") && sc.name == "permission" {
			label += "/" + strings.TrimPrefix(sc.env[0], "REIKA_TEST_ANSWER=")
		}
		t.Run(label, func(t *testing.T) {
			node, dir := nodeACP(t)
			files := sc.files
			if files == nil {
				files = map[string]string{"greet.go": greetGo}
			}
			r := newRig(t, sc.script, files)
			r.Extra = sc.env
			start := time.Now()
			out, err := r.run(t, 60*time.Second, node, filepath.Join(dir, "scenarios.mjs"), sc.name)
			if err != nil || !strings.Contains(out, "ok "+sc.name) {
				t.Fatalf("node scenarios.mjs %s: %v\n%s", sc.name, err, out)
			}
			t.Logf("%s in %v", label, time.Since(start).Round(time.Millisecond))
			if got := r.read(t, "greet.go"); got != greetGo {
				t.Errorf("greet.go on disk changed (the client offers fs/*: a change goes to its buffer):\n%s", got)
			}
		})
	}
}
