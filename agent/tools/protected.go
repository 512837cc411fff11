package tools

import (
	"fmt"
	"path"
	"strings"
	"unicode"
)

// A protected path holds something that runs, or steers the agent, without
// the user deciding to run the project: git's hooks and config run on the
// next commit or status, editor and tool config on the next open, an
// environment loader on the next cd, CI on the next push, an agent
// instruction file in the next session's prompt. The agent reads untrusted
// text, so a change to such a path needs the user's explicit yes every
// time (the front end asks, or refuses when it cannot), and commands get
// the workspace's protected top-level entries read-only (the sandbox).
//
// Protection is judged on the workspace-relative, slash-separated path,
// case-insensitively (a case-insensitive file system opens .GIT/config as
// .git/config).

// protectedDirs are directories protected with everything below them, at
// any depth (a nested project, a submodule's .git).
var protectedDirs = map[string]string{
	".git":          "git runs its hooks and reads its config (fsmonitor, pagers, diff drivers) on your next git command",
	".vscode":       "VS Code reads it as editor config and can run its tasks on opening the folder",
	".idea":         "JetBrains IDEs read it as project config and run its run configurations",
	".helix":        "Helix reads it as editor config (language servers it starts)",
	".zed":          "Zed reads it as editor config (tasks and language servers)",
	".devcontainer": "dev containers build and run what it names",
	".husky":        "husky installs it as git hooks",
	".claude":       "it is agent config (hooks and settings) another tool runs",
	".cursor":       "it is agent config another tool reads",
	".codex":        "it is agent config another tool reads",
	".circleci":     "CI runs it on your next push",
	".buildkite":    "CI runs it on your next push",
	".cargo":        "cargo reads it as build config (it can name programs that run on cargo build)",
}

// protectedUnder are directories protected below a given parent.
var protectedUnder = map[string]string{
	".github/workflows": "CI runs it on your next push",
	".github/actions":   "CI runs it on your next push",
}

// protectedFiles are file names protected wherever they are.
var protectedFiles = map[string]string{
	".nvim.lua":               "Neovim runs it on start in this folder (exrc)",
	".nvimrc":                 "Neovim runs it on start in this folder (exrc)",
	".exrc":                   "Vim and Neovim run it on start in this folder (exrc)",
	".dir-locals.el":          "Emacs applies it to every file below it",
	".dir-locals-2.el":        "Emacs applies it to every file below it",
	".envrc":                  "direnv loads it into your shell on cd",
	".gitlab-ci.yml":          "CI runs it on your next push",
	".travis.yml":             "CI runs it on your next push",
	".drone.yml":              "CI runs it on your next push",
	"azure-pipelines.yml":     "CI runs it on your next push",
	"bitbucket-pipelines.yml": "CI runs it on your next push",
	"jenkinsfile":             "CI runs it on your next push",
	".pre-commit-config.yaml": "pre-commit runs it as git hooks",
	".gitmodules":             "git fetches and checks out what it names",
	".npmrc":                  "npm reads it on every npm command (node options, script shell)",
	".yarnrc":                 "yarn reads it on every yarn command",
	".yarnrc.yml":             "yarn runs the program it names (yarnPath) on every yarn command",
	".mise.toml":              "mise runs its hooks and loads its environment on cd",
	".tool-versions":          "version managers install and run what it names",
	"agents.md":               "agents read it as instructions, this one in its next session",
	"claude.md":               "agents read it as instructions",
	"gemini.md":               "agents read it as instructions",
	".cursorrules":            "agents read it as instructions",
	".windsurfrules":          "agents read it as instructions",
	".clinerules":             "agents read it as instructions",
	"copilot-instructions.md": "agents read it as instructions",
	".reika.json":             "it is Reika's own config",
}

// Protection says why a workspace-relative path is protected, or "" when
// it is not. The reason names the rule and what would run.
func Protection(rel string) string {
	rel = strings.ToLower(strings.Trim(path.Clean(strings.ReplaceAll(rel, "\\", "/")), "/"))
	if rel == "." || rel == "" {
		return ""
	}
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		if why, ok := protectedDirs[p]; ok {
			return fmt.Sprintf("%s/** is protected: %s", p, why)
		}
		if i+1 < len(parts) {
			if why, ok := protectedUnder[p+"/"+parts[i+1]]; ok {
				return fmt.Sprintf("%s/** is protected: %s", p+"/"+parts[i+1], why)
			}
		}
	}
	base := parts[len(parts)-1]
	if why, ok := protectedFiles[base]; ok {
		return fmt.Sprintf("%s is protected: %s", base, why)
	}
	if strings.HasPrefix(base, ".env") {
		return base + " is protected: .env* files are loaded into programs' environments"
	}
	return ""
}

// ProtectedTopLevel reports whether an entry directly in a workspace root
// is protected; the sandbox keeps those read-only for commands.
func ProtectedTopLevel(name string) bool {
	return Protection(name) != "" || strings.EqualFold(name, ".github")
}

// badName says why a workspace-relative path is not a name the agent may
// create, or "". A name that starts with "-" is read as an option by the
// commands that later take it from a glob (`rm *` takes a file named -rf);
// a control character (a newline) splits the lines of every listing and
// script that reads names.
func badName(rel string) string {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, "-") {
			return fmt.Sprintf("the name %q starts with '-', which commands read as an option (rm * would take it as one); choose a name that starts with a letter, digit, '.' or '_'", seg)
		}
		for _, r := range seg {
			if unicode.IsControl(r) {
				return fmt.Sprintf("the name %q holds a control character (%U), which splits the lines of listings and scripts; choose a plain name", seg, r)
			}
		}
	}
	return ""
}
