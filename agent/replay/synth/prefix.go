package synth

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/reika-lsp/reika/agent/engine"
)

// The fixed prefix every session runs with.

const systemPrompt = `You are Reika, a coding agent working inside the user's editor through a language server.
You work in the repository described below. Use the tools to read files, search, run commands and edit;
never guess file contents you have not read. Prefer small, reviewable edits. After changing code, build and
run the relevant tests. When a command's output is long it may be cut or saved to a file: read that file in
pages rather than running the command again. Keep the user's constraints and exact values (paths, commands,
names) as they were given. When the task is done, say what you changed, how you verified it, and anything
left open.

Conventions of this repository:
- Go 1.26, module github.com/reika-lsp/reika; gofmt, go vet and staticcheck clean.
- Errors are lowercase, without trailing punctuation, wrapping with %w last.
- Tests are table-driven with t.Run; failures read "F(x) = got, want want"; no assertion libraries.
- contextwin and repomap are pure: no I/O, no clock, no goroutines.
- Only lsp/ imports go.lsp.dev/protocol; only agent/engine imports go-openai.`

// toolDefs are the tools every session offers the model.
var toolDefs = []engine.Tool{
	{Name: "read", Description: "Read a file. Returns its lines numbered from 1, or the range offset..offset+limit-1.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"file path relative to the repository root"},"offset":{"type":"integer","description":"first line, 1-based"},"limit":{"type":"integer","description":"number of lines"}},"required":["path"]}`)},
	{Name: "grep", Description: "Search file contents with a regular expression. Returns path:line:text for each match.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","description":"RE2 regular expression"},"path":{"type":"string","description":"directory or file to search, default the root"}},"required":["pattern"]}`)},
	{Name: "glob", Description: "List files matching a glob pattern, one path per line.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","description":"glob such as **/*_test.go"}},"required":["pattern"]}`)},
	{Name: "edit", Description: "Replace old_text, which must occur exactly once in the file, with new_text. Returns the diff.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"old_text":{"type":"string"},"new_text":{"type":"string"}},"required":["path","old_text","new_text"]}`)},
	{Name: "write", Description: "Create or overwrite a file with the given content.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)},
	{Name: "bash", Description: "Run a shell command in the repository root and return its combined output and exit status.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer","description":"seconds, default 120"}},"required":["command"]}`)},
}

// declRe matches a top-level func, method or type declaration.
var declRe = regexp.MustCompile(`(?m)^(?:func (?:\(\w+ \*?(\w+)\) )?(\w+)|type (\w+))`)

// repoMap lists the top-level declarations of the Go files, package by
// package: the whole map; a replay keeps its window's share.
func repoMap(src *Source) string {
	var b strings.Builder
	for _, p := range src.goFiles("", false) {
		var names []string
		for _, m := range declRe.FindAllStringSubmatch(src.files[p], -1) {
			switch {
			case m[3] != "":
				names = append(names, "type "+m[3])
			case m[1] != "":
				names = append(names, m[1]+"."+m[2])
			default:
				names = append(names, m[2])
			}
		}
		if len(names) == 0 {
			continue
		}
		if len(names) > 14 {
			names = append(names[:14], fmt.Sprintf("… %d more", len(names)-14))
		}
		fmt.Fprintf(&b, "%s: %s\n", p, strings.Join(names, ", "))
	}
	return b.String()
}
