package tools

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/reika-lsp/reika/agent/engine"
)

// The tools' names, as the model calls them and the definitions declare
// them. They are part of the prompt and of every transcript: fixed.
const (
	ReadTool  = "read"
	GlobTool  = "glob"
	GrepTool  = "grep"
	EditTool  = "edit"
	WriteTool = "write"
	BashTool  = "bash"
	FetchTool = "fetch_url" // offered only when the session allows fetching

	// The navigation tools, offered when the session has a Navigator.
	DefinitionTool  = "definition"
	ReferencesTool  = "references"
	SymbolsTool     = "symbols"
	HoverTool       = "hover"
	DiagnosticsTool = "diagnostics"
)

// The definitions are written by hand, compact, so that their bytes are
// fixed: they sit in the prompt prefix the engine caches, and a change of
// one byte would make it process the whole prompt again.

const readDescription = "Read a text file of the workspace. Output is numbered like cat -n: line number, tab, the line; the numbers are not part of the file. " +
	"Shows up to 2000 lines from offset; when more follow, a last line gives the offset to read next. Lines over 2000 characters are clipped. " +
	"A file open in the editor is read as the editor has it. Directories and binary files are refused: list files with " + GlobTool + "."

const readParameters = `{"type":"object","properties":{` +
	`"path":{"type":"string","description":"File path, relative to the workspace root or absolute inside it"},` +
	`"offset":{"type":"integer","description":"First line to show, 1-based (default 1)"},` +
	`"limit":{"type":"integer","description":"Number of lines to show (default and maximum 2000)"}` +
	`},"required":["path"]}`

const globDescription = "List the workspace files whose paths match a glob pattern, sorted, leaving out files ignored by .gitignore. " +
	"* and ? match within one path segment, ** matches any number of directories, {a,b} gives alternatives, [abc] a character class. " +
	"Examples: **/*.go, cmd/*/main.go, src/**/*.{ts,tsx}."

const globParameters = `{"type":"object","properties":{` +
	`"pattern":{"type":"string","description":"Glob pattern, relative to the workspace root"}` +
	`},"required":["pattern"]}`

const grepDescription = "Search file contents with a Go (RE2) regular expression, line by line, leaving out files ignored by .gitignore, binary files and files over 2 MB. " +
	"Output lines are path:line: text, sorted by path then line number. Case-sensitive: start the pattern with (?i) to ignore case."

const grepParameters = `{"type":"object","properties":{` +
	`"pattern":{"type":"string","description":"Regular expression (RE2 syntax)"},` +
	`"path":{"type":"string","description":"Directory or file to search, relative to the workspace root (default: the whole workspace)"}` +
	`},"required":["pattern"]}`

const editDescription = "Change an existing file. Either give old_text and new_text: old_text must occur exactly once in the file " +
	"(copy it from read output without the line numbers, with enough surrounding lines to make it unique) and is replaced by new_text. " +
	"Or give diff: a unified diff of this one file; its hunks are placed by their context and removed lines, so line numbers may be approximate. " +
	"The change is proposed to the user, who applies or rejects it; the result says which and shows the diff. Create new files with " + WriteTool + "."

const editParameters = `{"type":"object","properties":{` +
	`"path":{"type":"string","description":"File to change, relative to the workspace root"},` +
	`"old_text":{"type":"string","description":"Exact text to replace, unique in the file"},` +
	`"new_text":{"type":"string","description":"Text that replaces old_text (empty to delete it)"},` +
	`"diff":{"type":"string","description":"Unified diff of the file, instead of old_text and new_text"}` +
	`},"required":["path"]}`

const writeDescription = "Create a new file with the given content. Fails if the file exists: change existing files with " + EditTool + ". " +
	"The new file is proposed to the user, who applies or rejects it; the result says which."

const writeParameters = `{"type":"object","properties":{` +
	`"path":{"type":"string","description":"New file path, relative to the workspace root"},` +
	`"content":{"type":"string","description":"The whole content of the file"}` +
	`},"required":["path","content"]}`

const bashDescription = "Run a shell command with bash -c in the workspace root, stdin closed, and return its combined stdout and stderr with the exit status. " +
	"The command is stopped, with its child processes, after %s. Commands off the user's allowlist run only if the user confirms them. " +
	"Where there is a sandbox, commands can write below the workspace's top-level folders and in TMPDIR, not in .git or editor config, and have no network and no access to the user's home; " +
	"set network or outside_sandbox only when the task needs it: the user is asked. " +
	"Long output is also saved to a file that you can page through with " + ReadTool + "."

const bashParameters = `{"type":"object","properties":{` +
	`"command":{"type":"string","description":"Command line, run by bash -c"},` +
	`"network":{"type":"boolean","description":"The command needs the network (asks the user)"},` +
	`"outside_sandbox":{"type":"boolean","description":"The command must run outside the sandbox, e.g. to write .git (asks the user)"}` +
	`},"required":["command"]}`

const fetchDescription = "Fetch a public http or https URL and return its text; HTML is turned into plain text with link targets in brackets. " +
	"Hosts on this machine or a private network are refused. Pages are cut at 2 MB; long ones are also saved to a file that you can page through with " + ReadTool + "."

const fetchParameters = `{"type":"object","properties":{` +
	`"url":{"type":"string","description":"Absolute http or https URL"}` +
	`},"required":["url"]}`

// The navigation tools' definitions are the same whatever answers them (a
// language server, the repo map, or a server that starts later): the
// answer says what it is, the definitions never change mid-session.

// They are short: they ride in every request's fixed prefix, 1,450 bytes
// for the five (3,150 before they shared their words).

const definitionDescription = "Where a symbol is defined: path:line:col with its declaration's lines. " +
	"Give symbol (a name, or Type.method), or path and line (and column) where it is written. " +
	"An answer found by name, not by a language server, says so first."

const referencesDescription = "Where a symbol is used: up to 20 places, then how many more. Arguments as for " + DefinitionTool + "."

const navPlaceParameters = `{"type":"object","properties":{` +
	`"symbol":{"type":"string"},"path":{"type":"string"},"line":{"type":"integer"},"column":{"type":"integer"}}}`

const symbolsDescription = "A file's declarations (path), or the workspace's whose names contain query."

const symbolsParameters = `{"type":"object","properties":{"path":{"type":"string"},"query":{"type":"string"}}}`

const hoverDescription = "A symbol's type, signature and documentation, from the language server. Arguments as for " + DefinitionTool + "."

const diagnosticsDescription = "The errors and warnings the language server reports for files as they are now, without running the build."

const diagnosticsParameters = `{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"}}},"required":["paths"]}`

// navDefinitions are the navigation tools, in their fixed order.
func navDefinitions() []engine.Tool {
	return []engine.Tool{
		{Name: DefinitionTool, Description: definitionDescription, Parameters: json.RawMessage(navPlaceParameters)},
		{Name: ReferencesTool, Description: referencesDescription, Parameters: json.RawMessage(navPlaceParameters)},
		{Name: SymbolsTool, Description: symbolsDescription, Parameters: json.RawMessage(symbolsParameters)},
		{Name: HoverTool, Description: hoverDescription, Parameters: json.RawMessage(navPlaceParameters)},
		{Name: DiagnosticsTool, Description: diagnosticsDescription, Parameters: json.RawMessage(diagnosticsParameters)},
	}
}

// definitions builds the tool list; the same arguments give the same
// bytes. The navigation tools come last, after fetch_url, when nav is set.
func definitions(bashTimeout time.Duration, fetch, nav bool) []engine.Tool {
	defs := []engine.Tool{
		{Name: ReadTool, Description: readDescription, Parameters: json.RawMessage(readParameters)},
		{Name: GlobTool, Description: globDescription, Parameters: json.RawMessage(globParameters)},
		{Name: GrepTool, Description: grepDescription, Parameters: json.RawMessage(grepParameters)},
		{Name: EditTool, Description: editDescription, Parameters: json.RawMessage(editParameters)},
		{Name: WriteTool, Description: writeDescription, Parameters: json.RawMessage(writeParameters)},
		{Name: BashTool, Description: fmt.Sprintf(bashDescription, humanDuration(bashTimeout)), Parameters: json.RawMessage(bashParameters)},
	}
	if fetch {
		defs = append(defs, engine.Tool{Name: FetchTool, Description: fetchDescription, Parameters: json.RawMessage(fetchParameters)})
	}
	if nav {
		defs = append(defs, navDefinitions()...)
	}
	return defs
}

// humanDuration writes a timeout the way a person would: "2 minutes",
// "90 seconds".
func humanDuration(d time.Duration) string {
	switch {
	case d >= time.Minute && d%time.Minute == 0:
		return plural(int(d/time.Minute), "minute")
	case d >= time.Second && d%time.Second == 0:
		return plural(int(d/time.Second), "second")
	}
	return d.String()
}
