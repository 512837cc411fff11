//go:build cgo

package sandbox

import (
	"strings"
	"testing"
)

// TestInitInC checks that where the binary is built with cgo the init is
// the one in C, which starts no Go runtime: the namespace's pid 1 has one
// thread, where the Go init has several.
func TestInitInC(t *testing.T) {
	needNamespaces(t)
	f := newFixture(t)
	out, err := run(t, f.policy, f.ws, "grep ^Threads: /proc/1/status")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := strings.Join(strings.Fields(out), " "); got != "Threads: 1" {
		t.Errorf("pid 1 of the command's namespace: %q, want one thread (the init in C)", got)
	}
}
