package editors

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/internal/testslow"
)

// An acpLaunch is how an editor's configuration starts the agent: the
// command, its arguments and the environment it adds.
type acpLaunch struct {
	command string
	args    []string
	env     map[string]string
}

// acpLaunches reads each README snippet of an ACP editor as that editor
// does: Zed's JSON, CodeCompanion's commands.default and env, agent-shell's
// acp-make-client arguments.
func acpLaunches(t *testing.T) map[string]acpLaunch {
	var zed struct {
		AgentServers map[string]struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"agent_servers"`
	}
	if err := json.Unmarshal([]byte(snippet(t, "zed-acp")), &zed); err != nil {
		t.Fatalf("the Zed snippet is not JSON: %v", err)
	}
	z, ok := zed.AgentServers["Reika"]
	if !ok || z.Type != "custom" {
		t.Fatalf("the Zed snippet has no custom agent server Reika: %+v", zed)
	}
	out := map[string]acpLaunch{"zed": {z.Command, z.Args, z.Env}}

	cc := snippet(t, "codecompanion-acp")
	cmd := regexp.MustCompile(`commands = \{ default = \{ ((?:"[^"]*",? ?)+) \} \}`).FindStringSubmatch(cc)
	env := regexp.MustCompile(`env = \{ (\w+) = "([^"]*)" \}`).FindStringSubmatch(cc)
	if cmd == nil || env == nil {
		t.Fatalf("the CodeCompanion snippet has no commands.default or env:\n%s", cc)
	}
	words := regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(cmd[1], -1)
	var line []string
	for _, w := range words {
		line = append(line, w[1])
	}
	out["codecompanion"] = acpLaunch{line[0], line[1:], map[string]string{env[1]: env[2]}}

	as := snippet(t, "agent-shell-acp")
	command := regexp.MustCompile(`:command "([^"]+)"`).FindStringSubmatch(as)
	params := regexp.MustCompile(`:command-params '\(((?:"[^"]*" ?)*)\)`).FindStringSubmatch(as)
	vars := regexp.MustCompile(`:environment-variables '\("(\w+)=([^"]*)"\)`).FindStringSubmatch(as)
	if command == nil || params == nil || vars == nil {
		t.Fatalf("the agent-shell snippet has no :command, :command-params or :environment-variables:\n%s", as)
	}
	var args []string
	for _, w := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(params[1], -1) {
		args = append(args, w[1])
	}
	out["agent-shell"] = acpLaunch{command[1], args, map[string]string{vars[1]: vars[2]}}
	return out
}

// TestACPSnippets: each ACP editor's snippet starts the agent with a
// command line that holds a turn: initialize, session/new in the
// workspace, a prompt answered with end_turn. The snippet's endpoint is
// the usual local one; the test puts the simulated engine's in its place
// (the environment the editor adds wins over the inherited one, as here).
func TestACPSnippets(t *testing.T) {
	for name, l := range acpLaunches(t) {
		t.Run(name, func(t *testing.T) {
			if l.command != "reika-lsp" || strings.Join(l.args, " ") != "acp" {
				t.Fatalf("%s starts %s %v, want reika-lsp acp", name, l.command, l.args)
			}
			if l.env["REIKA_ENDPOINT"] != "http://127.0.0.1:8080/v1" {
				t.Errorf("%s's environment %v, want REIKA_ENDPOINT at llama-server's usual address", name, l.env)
			}
			r := newRig(t, `[{"content": "Hello from Reika."}]`, map[string]string{"greet.go": greetGo})
			ctx, cancel := context.WithTimeout(context.Background(), testslow.Scale(30*time.Second))
			defer cancel()
			// The editor finds the command on its PATH, whose first entry
			// is the directory of the binary under test.
			cmd := exec.CommandContext(ctx, r.Bin, l.args...)
			cmd.Dir = r.WS
			env := r.Env()
			for k, v := range l.env {
				env = append(env, k+"="+v)
			}
			cmd.Env = append(env, "REIKA_ENDPOINT="+r.Endpoint) // the simulated engine in the usual one's place
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			cmd.Stderr = r.Log
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			defer in.Close()
			lines := bufio.NewScanner(out)
			lines.Buffer(nil, 1<<20)
			call := func(id int, method string, params any) map[string]any {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
				io.WriteString(in, string(b)+"\n")
				for lines.Scan() {
					var m map[string]any
					if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
						t.Fatalf("not JSON from the agent: %q", lines.Text())
					}
					if m["id"] == float64(id) && m["method"] == nil {
						if m["error"] != nil {
							t.Fatalf("%s: %v", method, m["error"])
						}
						return m["result"].(map[string]any)
					}
				}
				t.Fatalf("%s: the agent closed its output (%v)", method, lines.Err())
				return nil
			}
			init := call(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
			if init["protocolVersion"] != float64(1) || fmt.Sprint(init["agentInfo"].(map[string]any)["name"]) != "reika" {
				t.Fatalf("initialize = %v", init)
			}
			s := call(2, "session/new", map[string]any{"cwd": r.WS, "mcpServers": []any{}})
			res := call(3, "session/prompt", map[string]any{"sessionId": s["sessionId"], "prompt": []any{map[string]any{"type": "text", "text": "Say hello."}}})
			if res["stopReason"] != "end_turn" {
				t.Fatalf("session/prompt = %v", res)
			}
		})
	}
}
