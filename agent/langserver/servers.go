package langserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// projects name the files that mark a project of a language: a server of
// a language listed here serves a file only below one of them (within its
// workspace folder), since outside a project it cannot tell a real error
// from a missing module (gopls without go.mod, rust-analyzer without
// Cargo.toml).
var projects = map[string][]string{
	"go":   {"go.mod", "go.work"},
	"rust": {"Cargo.toml"},
}

// inProject reports whether the file abs of language lang lies in a
// project of its language below folder (always, for a language without
// markers).
func inProject(folder, abs, lang string) bool {
	markers := projects[lang]
	if len(markers) == 0 {
		return true
	}
	for dir := filepath.Dir(abs); inside(folder, dir); dir = filepath.Dir(dir) {
		for _, m := range markers {
			if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
				return true
			}
		}
		if dir == folder || dir == filepath.Dir(dir) {
			break
		}
	}
	return false
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
// GOTOOLCHAIN is local: gopls runs the go command on files the model may
// have written, and a go.mod's toolchain line would otherwise have it
// fetch and run another Go, outside the sandbox.
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
		if strings.HasPrefix(strings.ToUpper(name), "REIKA_") || name == apiKeyEnv || (key != "" && value == key) || name == "GOTOOLCHAIN" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GOTOOLCHAIN=local")
}

// Configured returns the servers the language_servers setting gives:
// each entry "language=command args…" serves its language with that
// command (a program named without a directory is looked up on PATH when
// it starts), "language=" turns the language's server off, "off" turns
// every server off; the languages no entry names keep their default
// (Defaults). Entries it cannot read are skipped, each with a warning.
func Configured(entries []string, lookPath func(string) (string, error)) (servers []Server, warnings []string) {
	configured := map[string]bool{}
	for _, entry := range entries {
		entry = strings.TrimSpace(entry)
		if entry == "off" {
			return nil, warnings
		}
		lang, command, ok := strings.Cut(entry, "=")
		lang = strings.TrimSpace(lang)
		if !ok || !knownLanguage(lang) {
			warnings = append(warnings, fmt.Sprintf("language_servers: %q is not \"language=command\" with a language of %s; skipped", entry, strings.Join(knownLanguages(), ", ")))
			continue
		}
		configured[lang] = true
		if args := strings.Fields(command); len(args) > 0 {
			servers = append(servers, Server{Name: filepath.Base(args[0]), Command: args, Languages: []string{lang}})
		}
	}
	for _, s := range Defaults(lookPath) {
		var langs []string
		for _, l := range s.Languages {
			if !configured[l] {
				langs = append(langs, l)
			}
		}
		if len(langs) > 0 {
			s.Languages = langs
			servers = append(servers, s)
		}
	}
	return servers, warnings
}

// knownLanguages are the language identifiers LanguageOf gives, sorted.
func knownLanguages() []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range languages {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

func knownLanguage(lang string) bool { return slices.Contains(knownLanguages(), lang) }
