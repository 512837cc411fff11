package sandbox

import (
	"fmt"
	"strconv"
	"strings"
)

// gitConfig is the configuration Env gives git through GIT_CONFIG_COUNT.
// It comes after the user's own entries, and git lets the last value of a
// key win, so these hold over the user's and the repository's.
//
// diff.external is not among them: git has no value that disables it (an
// empty one makes every git diff fail with "external diff died"), so an
// external diff a repository configures runs, inside the sandbox. The
// per-protocol keys are there because protocol.<name>.allow in a
// repository's config beats protocol.allow from anywhere.
var gitConfig = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
	{"core.pager", "cat"},
	{"protocol.allow", "never"},
	{"protocol.file.allow", "never"},
	{"protocol.git.allow", "never"},
	{"protocol.ssh.allow", "never"},
	{"protocol.http.allow", "never"},
	{"protocol.https.allow", "never"},
	{"protocol.ext.allow", "never"},
}

// gitEnv are set by Env, replacing the user's values.
var gitEnv = [][2]string{
	// The global config lives in the hidden home; without this git dies
	// on EACCES reading it.
	{"GIT_CONFIG_GLOBAL", "/dev/null"},
	{"GIT_PAGER", "cat"},
	{"PAGER", "cat"},
	{"GIT_TERMINAL_PROMPT", "0"},
}

// passed are the variables a contained command gets from the server's
// environment, by name: what a shell, the locale and the toolchains need
// to behave as they do for the user. Nothing else passes — not secrets by
// any name (DATABASE_URL, MYSQL_PWD, GITHUB_PAT, NPM_CONFIG__AUTH, a
// proxy with its password), not the sockets of the user's agents and
// sessions (SSH_AUTH_SOCK, XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS) —
// but for the names the user adds (sandbox_env).
var passed = map[string]bool{}

// passedPrefixes are families of variables passed whole: the locale.
var passedPrefixes = []string{"LC_"}

func init() {
	for _, group := range [][]string{
		// The shell, the user and the terminal.
		{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "SHLVL", "HOSTNAME", "TMPDIR", "LANG", "LANGUAGE", "TERM", "COLORTERM",
			"TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CI", "SOURCE_DATE_EPOCH",
			"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
			"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"},
		// Go.
		{"GOPATH", "GOROOT", "GOBIN", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GONOPROXY",
			"GOPRIVATE", "GOINSECURE", "GOTOOLCHAIN", "GOOS", "GOARCH", "GOAMD64", "GOARM", "GOARM64", "GO386", "GOEXPERIMENT",
			"GODEBUG", "GOENV", "GOWORK", "GOTELEMETRY", "GOTMPDIR", "GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GOTRACEBACK",
			"GOCOVERDIR", "CGO_ENABLED", "CGO_CFLAGS", "CGO_CPPFLAGS", "CGO_CXXFLAGS", "CGO_LDFLAGS", "CGO_FFLAGS"},
		// Node.
		{"NODE_OPTIONS", "NODE_PATH", "NODE_ENV", "NODE_EXTRA_CA_CERTS", "NVM_DIR", "NVM_BIN", "npm_config_cache",
			"NPM_CONFIG_CACHE", "npm_config_prefix", "NPM_CONFIG_PREFIX", "COREPACK_HOME", "PNPM_HOME", "YARN_CACHE_FOLDER"},
		// Python.
		{"PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONHASHSEED", "PYTHONIOENCODING",
			"PYTHONUTF8", "PYTHONPYCACHEPREFIX", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PIPX_HOME", "UV_CACHE_DIR"},
		// Rust.
		{"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS", "RUSTDOCFLAGS", "RUST_BACKTRACE", "RUST_LOG",
			"CARGO_TARGET_DIR", "CARGO_TERM_COLOR", "CARGO_INCREMENTAL", "CARGO_BUILD_JOBS"},
		// Java, Ruby, .NET.
		{"JAVA_HOME", "JDK_HOME", "MAVEN_HOME", "M2_HOME", "GRADLE_USER_HOME", "GEM_HOME", "GEM_PATH", "BUNDLE_PATH",
			"BUNDLE_GEMFILE", "RBENV_ROOT", "DOTNET_ROOT", "DOTNET_CLI_TELEMETRY_OPTOUT", "DOTNET_NOLOGO", "NUGET_PACKAGES"},
		// C and C++.
		{"CC", "CXX", "CPP", "AR", "LD", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "PKG_CONFIG_PATH", "MAKEFLAGS",
			"CMAKE_GENERATOR", "CMAKE_BUILD_PARALLEL_LEVEL", "CCACHE_DIR", "LD_LIBRARY_PATH", "LIBRARY_PATH",
			"C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH"},
	} {
		for _, name := range group {
			passed[name] = true
		}
	}
}

// passes reports whether Env keeps the variable name: on the allow list,
// or one the user added, and never the API key's.
func passes(name, apiKeyEnv string, added map[string]bool) bool {
	if name == apiKeyEnv {
		return false
	}
	if passed[name] || added[name] {
		return true
	}
	for _, p := range passedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Env returns the environment for a contained command: of environ, only
// the variables the allow list names (passed: the shell's, the locale's,
// the toolchains') and those in added (the user's sandbox_env), never the
// one named apiKeyEnv; plus GIT_CONFIG_GLOBAL=/dev/null, cat as pager, no
// terminal prompts, and git configuration that turns off fsmonitor, hooks
// and every transport. The user's own GIT_CONFIG_COUNT entries are kept,
// before these.
//
// Git cannot fetch or push under this environment, network or not.
func Env(environ []string, apiKeyEnv string, added []string) []string {
	add := map[string]bool{}
	for _, name := range added {
		add[name] = true
	}
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	var user [][2]string
	if n, err := strconv.Atoi(vars["GIT_CONFIG_COUNT"]); err == nil {
		for i := range n {
			k, ok := vars[fmt.Sprintf("GIT_CONFIG_KEY_%d", i)]
			if ok {
				user = append(user, [2]string{k, vars[fmt.Sprintf("GIT_CONFIG_VALUE_%d", i)]})
			}
		}
	}
	set := map[string]bool{}
	for _, kv := range gitEnv {
		set[kv[0]] = true
	}
	out := make([]string, 0, len(environ)+len(gitEnv)+1+2*(len(user)+len(gitConfig)))
	seen := map[string]bool{}
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if seen[k] || set[k] || !passes(k, apiKeyEnv, add) || isGitConfigVar(k) {
			continue
		}
		seen[k] = true
		out = append(out, kv)
	}
	for _, kv := range gitEnv {
		out = append(out, kv[0]+"="+kv[1])
	}
	all := append(user, gitConfig...)
	out = append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(len(all)))
	for i, kv := range all {
		out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return out
}

// isGitConfigVar reports whether name is GIT_CONFIG_COUNT or one of the
// GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n it counts.
func isGitConfigVar(name string) bool {
	if name == "GIT_CONFIG_COUNT" {
		return true
	}
	for _, p := range []string{"GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"} {
		if n, ok := strings.CutPrefix(name, p); ok {
			if _, err := strconv.Atoi(n); err == nil {
				return true
			}
		}
	}
	return false
}

// Override returns env with vars ("NAME=value") set: every variable of env
// that has one of their names, in any case (npm reads NPM_CONFIG_CACHE as
// npm_config_cache), is dropped, and vars come last.
func Override(env, vars []string) []string {
	names := map[string]bool{}
	for _, kv := range vars {
		k, _, _ := strings.Cut(kv, "=")
		names[strings.ToLower(k)] = true
	}
	out := make([]string, 0, len(env)+len(vars))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !names[strings.ToLower(k)] {
			out = append(out, kv)
		}
	}
	return append(out, vars...)
}
