package langserver

import (
	"os/exec"
	"path/filepath"
	"strings"
)

// Server is one language server the user has: the command that starts it
// (it speaks LSP on its stdin and stdout) and the languages it serves.
type Server struct {
	// Name names it in answers ("gopls").
	Name string
	// Command is the program and its arguments.
	Command []string
	// Languages are the LSP language identifiers it serves ("go",
	// "typescript"); a file's language is found by its extension
	// (LanguageOf).
	Languages []string
}

// known are the servers Defaults looks for on PATH, in order: for each
// language the first found serves it.
var known = []Server{
	{Name: "gopls", Command: []string{"gopls"}, Languages: []string{"go"}},
	{Name: "rust-analyzer", Command: []string{"rust-analyzer"}, Languages: []string{"rust"}},
	{Name: "basedpyright", Command: []string{"basedpyright-langserver", "--stdio"}, Languages: []string{"python"}},
	{Name: "pyright", Command: []string{"pyright-langserver", "--stdio"}, Languages: []string{"python"}},
	{Name: "typescript-language-server", Command: []string{"typescript-language-server", "--stdio"},
		Languages: []string{"typescript", "typescriptreact", "javascript", "javascriptreact"}},
	{Name: "clangd", Command: []string{"clangd"}, Languages: []string{"c", "cpp"}},
}

// Defaults returns the known servers whose program lookPath finds
// (exec.LookPath when nil), each with the program's full path.
func Defaults(lookPath func(string) (string, error)) []Server {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	var out []Server
	for _, s := range known {
		path, err := lookPath(s.Command[0])
		if err != nil {
			continue
		}
		s.Command = append([]string{path}, s.Command[1:]...)
		out = append(out, s)
	}
	return out
}

// languages maps a file's extension to its LSP language identifier.
var languages = map[string]string{
	".go": "go", ".rs": "rust", ".py": "python", ".pyi": "python",
	".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
	".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
	".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
}

// LanguageOf returns the LSP language identifier of a file by its
// extension, "" when no server Reika knows of serves it.
func LanguageOf(path string) string {
	return languages[strings.ToLower(filepath.Ext(path))]
}

// serverFor returns the first of servers that serves lang.
func serverFor(servers []Server, lang string) (Server, bool) {
	for _, s := range servers {
		for _, l := range s.Languages {
			if l == lang {
				return s, true
			}
		}
	}
	return Server{}, false
}

// serverEnv returns environ without what a language server must never
// see: Reika's own settings (REIKA_*), the variable apiKeyEnv names, and
// any variable holding that key's value under another name. The servers
// are the user's own tools and run outside the sandbox, with the user's
// environment otherwise: they need its toolchains, caches and proxies.
func serverEnv(environ []string, apiKeyEnv string) []string {
	key := ""
	if apiKeyEnv != "" {
		for _, kv := range environ {
			if name, value, ok := strings.Cut(kv, "="); ok && name == apiKeyEnv {
				key = value
			}
		}
	}
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.ToUpper(name), "REIKA_") || name == apiKeyEnv || (key != "" && value == key) {
			continue
		}
		out = append(out, kv)
	}
	return out
}
