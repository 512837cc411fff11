package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runProbe runs the test binary under p as a probe (probeMain) with env
// added, and returns what it printed and whether it succeeded.
func runProbe(t *testing.T, p Policy, env ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Dir = p.Workspace[0]
	cmd.Env = append(Env(os.Environ(), "", nil), env...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := p.Start(cmd); err != nil {
		t.Fatalf("Start: %v", err)
	}
	err := cmd.Wait()
	return out.String(), err == nil
}

// TestSocketFamilies opens sockets of each kind inside the sandbox, with
// and without the network: only TCP (and netlink's route family) opens
// without it, MPTCP among the refused (landlock-lsm/linux#54: Landlock's
// TCP rules do not see it); with it, inet sockets open, unix ones by path
// and the families no build needs still do not.
func TestSocketFamilies(t *testing.T) {
	needLandlock(t)
	if seccompArch == 0 {
		t.Skip("no seccomp filter on " + runtimeArch())
	}
	f := newFixture(t)
	type sock struct {
		name           string
		family, typ, p int
	}
	tcp := sock{"tcp", unix.AF_INET, unix.SOCK_STREAM, 0}
	tcp6 := sock{"tcp6 IPPROTO_TCP", unix.AF_INET6, unix.SOCK_STREAM | unix.SOCK_CLOEXEC, unix.IPPROTO_TCP}
	route := sock{"netlink route", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE}
	udp := sock{"udp", unix.AF_INET, unix.SOCK_DGRAM, 0}
	mptcp := sock{"mptcp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP}
	mptcp6 := sock{"mptcp6", unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_MPTCP}
	sctp := sock{"sctp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP}
	never := []sock{
		{"unix", unix.AF_UNIX, unix.SOCK_STREAM, 0},
		{"packet", unix.AF_PACKET, unix.SOCK_DGRAM, 0},
		{"netlink sock_diag", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_SOCK_DIAG},
		{"netlink audit", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT},
		{"vsock", unix.AF_VSOCK, unix.SOCK_STREAM, 0},
		{"alg", unix.AF_ALG, unix.SOCK_SEQPACKET, 0},
		{"xdp", unix.AF_XDP, unix.SOCK_RAW, 0},
	}
	for _, network := range []bool{false, true} {
		opens := []sock{tcp, tcp6, route}
		refused := append([]sock{udp, mptcp, mptcp6, sctp}, never...)
		if network {
			opens = append(opens, udp)
			refused = never
		}
		p := f.policy
		p.Network = network
		for i, s := range append(opens, refused...) {
			want := i < len(opens)
			t.Run(fmt.Sprintf("network=%v/%s", network, s.name), func(t *testing.T) {
				out, ok := runProbe(t, p, fmt.Sprintf("SANDBOX_SOCKET=%d,%d,%d", s.family, s.typ, s.p))
				if ok != want {
					t.Errorf("socket %s with Network %v: opened = %v, want %v; output: %s", s.name, network, ok, want, out)
				}
				if !want && !strings.Contains(out, "permission denied") {
					t.Errorf("socket %s with Network %v failed with %q, want the filter's permission denied", s.name, network, out)
				}
			})
		}
	}
}

// runtimeArch names the architecture, for a skip message.
func runtimeArch() string { return runtime.GOARCH }

// TestRootCapabilities runs the attacks of a root command that only
// capabilities allow: reading another user's 0600 file where the
// workspace sees it, setting the clock, becoming another user. Each is
// refused; the same probes succeed outside the sandbox (but the clock,
// which is not set there), so the test can fail.
func TestRootCapabilities(t *testing.T) {
	needLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: an ordinary user has none of these capabilities")
	}
	f := newFixture(t)
	private := filepath.Join(f.ws, "sub", "private")
	if err := os.WriteFile(private, []byte(canary), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(private, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	probes := []string{"SANDBOX_READ=" + private, "SANDBOX_SYSCALL=setuid", "SANDBOX_SYSCALL=settimeofday"}
	for _, probe := range probes {
		t.Run(probe, func(t *testing.T) {
			if !strings.HasSuffix(probe, "settimeofday") {
				cmd := exec.Command(os.Args[0])
				cmd.Env = append(os.Environ(), probe)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s outside the sandbox: %v, %s; want it to succeed", probe, err, out)
				}
			}
			out, ok := runProbe(t, f.policy, probe)
			if ok || strings.Contains(out, canary) {
				t.Errorf("%s inside the sandbox as root succeeded: %s", probe, out)
			}
		})
	}
	out, err := run(t, f.policy, f.ws, "grep ^Cap /proc/self/status")
	if err != nil {
		t.Fatalf("grep ^Cap /proc/self/status: %v, %s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if _, set, _ := strings.Cut(line, "\t"); strings.Trim(set, "0") != "" {
			t.Errorf("a root command keeps capabilities: %s", line)
		}
	}
}

// TestRootChmod pins a limit: a root command without capabilities still
// owns root's files, and Landlock does not govern chmod, so it can change
// the mode of a root-owned file outside the places it may write.
func TestRootChmod(t *testing.T) {
	needLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	f := newFixture(t)
	outside := filepath.Join(t.TempDir(), "root-owned")
	if err := os.WriteFile(outside, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, f.policy, f.ws, "echo x >> "+outside); err == nil {
		t.Fatalf("the command wrote %s, outside the writable places: %s", outside, out)
	}
	out, err := run(t, f.policy, f.ws, "chmod 0666 "+outside)
	st, _ := os.Stat(outside)
	if err != nil || st.Mode().Perm() != 0o666 {
		t.Errorf("chmod 0666 %s as root = %v (%s), mode %v; the limit this pins does not hold any more", outside, err, out, st.Mode().Perm())
	}
}
