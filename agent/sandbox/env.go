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

// dropExact are variables Env removes, beside those matching dropped.
var dropExact = map[string]bool{
	"GOOGLE_APPLICATION_CREDENTIALS": true,
	"SSH_AUTH_SOCK":                  true,
	"GPG_AGENT_INFO":                 true,
	"KUBECONFIG":                     true,
	"NETRC":                          true,
	"DOCKER_CONFIG":                  true,
	"GIT_EXTERNAL_DIFF":              true,
}

// dropPrefixes are the prefixes of cloud credentials' variables.
var dropPrefixes = []string{"AWS_", "AZURE_", "GOOGLE_CLOUD_", "GCLOUD_", "CLOUDSDK_", "DIGITALOCEAN_", "VAULT_"}

// dropped reports whether Env removes the variable name.
func dropped(name, apiKeyEnv string) bool {
	if name == apiKeyEnv || dropExact[name] {
		return true
	}
	up := strings.ToUpper(name)
	for _, s := range []string{"_KEY", "_TOKEN", "_SECRET", "_PASSWORD"} {
		if strings.HasSuffix(up, s) {
			return true
		}
	}
	for _, s := range []string{"PASSWORD", "PASSWD", "CREDENTIAL"} {
		if strings.Contains(up, s) {
			return true
		}
	}
	for _, p := range dropPrefixes {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	return false
}

// Env returns the environment for a contained command: environ without
// the variable named apiKeyEnv, secrets (names ending in _KEY, _TOKEN,
// _SECRET or _PASSWORD, or holding PASSWORD, PASSWD or CREDENTIAL), cloud
// credentials, agent sockets, KUBECONFIG, NETRC and DOCKER_CONFIG; plus
// GIT_CONFIG_GLOBAL=/dev/null, cat as pager, no terminal prompts, and git
// configuration that turns off fsmonitor, hooks and every transport. The
// user's own GIT_CONFIG_COUNT entries are kept, before these.
//
// Git cannot fetch or push under this environment, network or not.
func Env(environ []string, apiKeyEnv string) []string {
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
		if seen[k] || set[k] || dropped(k, apiKeyEnv) || isGitConfigVar(k) {
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
