package sandbox

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A contained command gets the variables on the allow list and those the
// user added, nothing else: the secrets the pattern scrub missed (the
// issue's canaries) included.
func TestEnvAllowList(t *testing.T) {
	tests := []struct {
		name string
		pass bool
	}{
		// Withheld: secrets by any name, credentials, agents' sockets.
		{"REIKA_API_KEY", false},
		{"OPENAI_API_KEY", false},
		{"GITHUB_TOKEN", false},
		{"GITHUB_PAT", false},
		{"DATABASE_URL", false},
		{"MYSQL_PWD", false},
		{"PGPASSWORD", false},
		{"REDIS_URL", false},
		{"SENTRY_DSN", false},
		{"NPM_CONFIG__AUTH", false},
		{"NODE_AUTH_TOKEN", false},
		{"PIP_INDEX_URL", false},
		{"CARGO_REGISTRIES_MY_TOKEN", false},
		{"HTTPS_PROXY", false},
		{"http_proxy", false},
		{"GOAUTH", false},
		{"AWS_PROFILE", false},
		{"GOOGLE_APPLICATION_CREDENTIALS", false},
		{"SSH_AUTH_SOCK", false},
		{"XDG_RUNTIME_DIR", false},
		{"DBUS_SESSION_BUS_ADDRESS", false},
		{"KUBECONFIG", false},
		{"GIT_SSH_COMMAND", false},
		{"GIT_ASKPASS", false},
		{"GIT_EXTERNAL_DIFF", false},
		{"MY_OWN_VAR", false},
		// Passed: the shell, the locale, the toolchains.
		{"PATH", true},
		{"HOME", true},
		{"LANG", true},
		{"LC_ALL", true},
		{"TERM", true},
		{"GOPATH", true},
		{"GOFLAGS", true},
		{"CGO_ENABLED", true},
		{"NODE_OPTIONS", true},
		{"VIRTUAL_ENV", true},
		{"CARGO_HOME", true},
		{"JAVA_HOME", true},
		{"CC", true},
		// Added by the user.
		{"MY_TOOL_HOME", true},
	}
	added := []string{"MY_TOOL_HOME", "REIKA_API_KEY"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := Env([]string{tt.name + "=x"}, "REIKA_API_KEY", added)
			if got := slices.Contains(env, tt.name+"=x"); got != tt.pass {
				t.Errorf("Env passed %s = %v, want %v", tt.name, got, tt.pass)
			}
		})
	}
}

func TestEnvGit(t *testing.T) {
	in := []string{
		"PATH=/bin", "PAGER=less", "GIT_PAGER=less",
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me",
		"GIT_CONFIG_KEY_1=core.fsmonitor", "GIT_CONFIG_VALUE_1=/bin/evil",
		"GIT_CONFIG_KEY_7=stray", "GIT_CONFIG_VALUE_7=dropped",
	}
	got := Env(in, "", nil)
	want := []string{
		"PATH=/bin",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_PAGER=cat", "PAGER=cat", "GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_COUNT=12",
		"GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me",
		"GIT_CONFIG_KEY_1=core.fsmonitor", "GIT_CONFIG_VALUE_1=/bin/evil",
		"GIT_CONFIG_KEY_2=core.fsmonitor", "GIT_CONFIG_VALUE_2=false",
	}
	if diff := cmp.Diff(want, got[:len(want)]); diff != "" {
		t.Errorf("Env(%q) (-want +got):\n%s", in, diff)
	}
	if last := got[len(got)-1]; last != "GIT_CONFIG_VALUE_11=never" {
		t.Errorf("Env(…) ends with %q, want GIT_CONFIG_VALUE_11=never", last)
	}
	if slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "stray") }) {
		t.Errorf("Env(…) kept a GIT_CONFIG_KEY beyond GIT_CONFIG_COUNT: %q", got)
	}
}

func TestExplain(t *testing.T) {
	dir := t.TempDir()
	p := Policy{Workspace: []string{dir}, Temp: "/tmp", Home: "/home/u"}
	tests := []struct {
		name   string
		output string
		failed bool
		p      Policy
		want   string // in the note; "" for no note
	}{
		{"denied", "touch: cannot touch 'x': Permission denied", true, p, "not create or remove entries at the top level"},
		{"not permitted", "kill: (1) - Operation not permitted", true, p, "your home is hidden"},
		{"connect", "curl: (7) Failed to connect to example.com port 443", true, p, "there is no network"},
		{"connect with network", "curl: (7) Failed to connect to example.com port 443", true, Policy{Network: true}, ""},
		{"succeeded", "Permission denied", false, p, ""},
		{"other failure", "FAIL example.com/a", true, p, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Explain(tt.output, tt.failed, tt.p)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("Explain(%q, %v) = %q, want a note with %q", tt.output, tt.failed, got, tt.want)
			}
		})
	}
}

func TestLine(t *testing.T) {
	p := Policy{Home: "/home/u", Caches: []Cache{{Path: "/home/u/.cache/go-build", Write: true, Tool: "go env GOCACHE"}}}
	const (
		ns   = "own pid, mount and network namespaces"
		held = " (nothing a command starts outlives it, /proc shows only its processes)"
	)
	tests := []struct {
		s    Status
		p    Policy
		want string
	}{
		{Status{Why: "Landlock is Linux only"}, p, "no sandbox: Landlock is Linux only"},
		{Status{ABI: 7, Available: true, Namespaces: true, UserNamespace: true, Seccomp: true}, p, "landlock ABI 7: workspace writable below its top level, home hidden, no network; " + ns + " in a user namespace" + held + "; seccomp socket filter; no capabilities; /home/u/.cache/go-build writable (go env GOCACHE)"},
		{Status{ABI: 7, Available: true, Namespaces: true, Seccomp: true}, Policy{Network: true}, "landlock ABI 7: workspace writable below its top level, network allowed; own pid and mount namespaces" + held + "; seccomp socket filter; no capabilities"},
		{Status{ABI: 7, Available: true, NamespacesWhy: "clone: operation not permitted", Seccomp: true}, Policy{}, "landlock ABI 7: workspace writable below its top level, no network; no namespaces (clone: operation not permitted): what a command leaves running is stopped through its process group only, /proc shows the user's other processes; seccomp socket filter; no capabilities"},
		{Status{ABI: 5, Available: true, Namespaces: true, Seccomp: true}, Policy{}, "landlock ABI 5: workspace writable below its top level, no network; signals and abstract sockets not scoped (Landlock ABI < 6); " + ns + held + "; seccomp socket filter; no capabilities"},
		{Status{ABI: 3, Available: true, Namespaces: true}, Policy{}, "landlock ABI 3: workspace writable below its top level; no network not enforced (Landlock ABI < 4), device ioctls not controlled (Landlock ABI < 5), signals and abstract sockets not scoped (Landlock ABI < 6); " + ns + held + "; no seccomp filter on this architecture (unix, UDP and other sockets not refused); no capabilities"},
	}
	for _, tt := range tests {
		if got := tt.s.Line(tt.p); got != tt.want {
			t.Errorf("%+v.Line() = %q, want %q", tt.s, got, tt.want)
		}
	}
}
