package sandbox

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnvDrops(t *testing.T) {
	tests := []struct {
		name string
		drop bool
	}{
		{"REIKA_API_KEY", true},
		{"OPENAI_API_KEY", true},
		{"GITHUB_TOKEN", true},
		{"HF_TOKEN", true},
		{"MY_SECRET", true},
		{"DB_PASSWORD", true},
		{"PGPASSWORD", true},
		{"SMB_PASSWD_FILE", true},
		{"GIT_CREDENTIAL_HELPER", true},
		{"AWS_PROFILE", true},
		{"AZURE_CLIENT_ID", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", true},
		{"GOOGLE_CLOUD_PROJECT", true},
		{"CLOUDSDK_CONFIG", true},
		{"SSH_AUTH_SOCK", true},
		{"GPG_AGENT_INFO", true},
		{"KUBECONFIG", true},
		{"VAULT_ADDR", true},
		{"NETRC", true},
		{"DOCKER_CONFIG", true},
		{"GIT_EXTERNAL_DIFF", true},
		{"PATH", false},
		{"HOME", false},
		{"GOPATH", false},
		{"KEYBOARD", false},
		{"TOKENIZERS_PARALLELISM", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := Env([]string{tt.name + "=x"}, "REIKA_API_KEY")
			if got := !slices.Contains(env, tt.name+"=x"); got != tt.drop {
				t.Errorf("Env dropped %s = %v, want %v", tt.name, got, tt.drop)
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
	got := Env(in, "")
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
	tests := []struct {
		s    Status
		p    Policy
		want string
	}{
		{Status{Why: "Landlock is Linux only"}, p, "no sandbox: Landlock is Linux only"},
		{Status{ABI: 7, Available: true}, p, "landlock ABI 7: workspace writable below its top level, home hidden, no network; /home/u/.cache/go-build writable (go env GOCACHE)"},
		{Status{ABI: 7, Available: true}, Policy{Network: true}, "landlock ABI 7: workspace writable below its top level, network allowed"},
		{Status{ABI: 5, Available: true}, Policy{}, "landlock ABI 5: workspace writable below its top level, no network; signals and abstract sockets not scoped (Landlock ABI < 6)"},
		{Status{ABI: 3, Available: true}, Policy{}, "landlock ABI 3: workspace writable below its top level; no network not enforced (Landlock ABI < 4), device ioctls not controlled (Landlock ABI < 5), signals and abstract sockets not scoped (Landlock ABI < 6)"},
	}
	for _, tt := range tests {
		if got := tt.s.Line(tt.p); got != tt.want {
			t.Errorf("%+v.Line() = %q, want %q", tt.s, got, tt.want)
		}
	}
}
