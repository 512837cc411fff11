package editors

import (
	"net/http"
	"strings"
	"testing"
)

// TestRig checks the harness itself: the simulated engine answers on
// loopback and the environment points the server at it.
func TestRig(t *testing.T) {
	r := newRig(t, `[{"content": "hi"}]`, map[string]string{"a.go": "package a\n"})
	resp, err := http.Get(r.Endpoint + "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /models: %s", resp.Status)
	}
	env := strings.Join(r.Env(), "\n")
	if !strings.Contains(env, "REIKA_ENDPOINT="+r.Endpoint) {
		t.Errorf("env lacks the endpoint:\n%s", env)
	}
	if got := r.read(t, "a.go"); got != "package a\n" {
		t.Errorf("a.go = %q", got)
	}
}
