package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func needNamespaces(t *testing.T) {
	t.Helper()
	needLandlock(t)
	if s := Probe(); !s.Namespaces {
		t.Skipf("no namespaces here: %s", s.NamespacesWhy)
	}
}

// withoutNamespaces has Start contain commands as where namespaces cannot
// be made, until the test ends.
func withoutNamespaces(t *testing.T) {
	noNamespaces = true
	t.Cleanup(func() { noNamespaces = false })
}

// inNamespaces reports whether Start runs commands in namespaces now.
func inNamespaces() bool { return Probe().Namespaces && !noNamespaces }

// TestWithoutNamespaces runs the tests of what the sandbox holds the way
// Start contains commands where namespaces cannot be made.
func TestWithoutNamespaces(t *testing.T) {
	needNamespaces(t) // else the tests ran this way already
	if testing.Short() {
		t.Skip("the containment tests once more, each command a child process ten times slower under -race: it runs without -short (the README's second go test)")
	}
	withoutNamespaces(t)
	for name, test := range map[string]func(*testing.T){
		"TestContained":        TestContained,
		"TestNetwork":          TestNetwork,
		"TestSockets":          TestSockets,
		"TestSocketFamilies":   TestSocketFamilies,
		"TestOtherProcesses":   TestOtherProcesses,
		"TestRootCapabilities": TestRootCapabilities,
	} {
		t.Run(name, test)
	}
}

// markerPids lists the processes of the system whose argv[0] is marker
// (bash's exec -a), as the test (outside any namespace of a command) sees
// them. Not the shells whose scripts name it.
func markerPids(marker string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if arg0, _, _ := bytes.Cut(b, []byte{0}); err == nil && string(arg0) == marker {
			pid, _ := strconv.Atoi(filepath.Base(d))
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitMarker polls until the processes with marker are there (want true)
// or gone (want false), for at most limit; it reports how long that took
// and whether it happened.
func waitMarker(marker string, want bool, limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	for {
		if (len(markerPids(marker)) > 0) == want {
			return time.Since(start), true
		}
		if time.Since(start) > limit {
			return time.Since(start), false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// killMarker kills what a test left running, when it failed.
func killMarker(marker string) {
	for _, pid := range markerPids(marker) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// survivors are the ways a command leaves a process behind; each starts
// processes named by the marker %[1]s and waits until one runs, so that
// the command ends with its survivor alive.
var survivors = []struct{ name, script string }{
	{"setsid -f", `setsid -f bash -c 'exec -a %[1]s sleep 1000' </dev/null >/dev/null 2>&1`},
	{"nohup &", `nohup bash -c 'exec -a %[1]s sleep 1000' </dev/null >/dev/null 2>&1 &`},
	{"double fork", `( (exec -a %[1]s sleep 1000 </dev/null >/dev/null 2>&1 &) & )`},
	{"daemon with its own group and ignored signals", `setsid bash -c 'trap "" HUP TERM INT; (exec -a %[1]s sleep 1000) & disown' </dev/null >/dev/null 2>&1 &`},
}

// waitInScript polls inside the command until a process whose argv[0] is
// the marker runs.
const waitInScript = "\n" + `for i in $(seq 1000); do
	for p in /proc/[0-9]*; do IFS= read -r -d '' a < $p/cmdline 2>/dev/null; [ "$a" = %[1]s ] && exit 0; done
	sleep 0.005
done
echo no survivor started; exit 1`

// TestNothingOutlives starts survivors in a command and checks that none
// is left once the command has returned; without namespaces (where they
// cannot be made) the same survivors live on, which the test pins too.
func TestNothingOutlives(t *testing.T) {
	needNamespaces(t)
	f := newFixture(t)
	for i, s := range survivors {
		for _, ns := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/namespaces=%v", s.name, ns), func(t *testing.T) {
				if !ns {
					withoutNamespaces(t)
				}
				marker := fmt.Sprintf("reika-survivor-%d-%d-%v", os.Getpid(), i, ns)
				t.Cleanup(func() { killMarker(marker) })
				out, err := run(t, f.policy, f.ws, fmt.Sprintf(s.script+waitInScript, marker))
				if err != nil {
					t.Fatalf("%s: %v\n%s", s.script, err, out)
				}
				took, gone := waitMarker(marker, false, time.Second)
				switch {
				case ns && !gone:
					t.Errorf("%s: a process the command started is alive %v after it returned: %v", s.name, took, markerPids(marker))
				case !ns && gone:
					t.Errorf("%s without namespaces: the survivor is gone; the limit this pins does not hold any more", s.name)
				case ns:
					t.Logf("%s: gone %v after the command returned", s.name, took)
				}
			})
		}
	}
}

// TestCancelledLeavesNothing kills a running command, as a cancelled run
// does (exec.CommandContext kills its process), and checks that what it
// started in the background is gone too.
func TestCancelledLeavesNothing(t *testing.T) {
	needNamespaces(t)
	f := newFixture(t)
	marker := fmt.Sprintf("reika-cancelled-%d", os.Getpid())
	t.Cleanup(func() { killMarker(marker) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", fmt.Sprintf(`setsid -f bash -c 'exec -a %[1]s sleep 1000' </dev/null >/dev/null 2>&1; exec -a %[1]s-fg sleep 1000`, marker))
	cmd.Dir = f.ws
	cmd.Env = Env(os.Environ(), "", nil)
	if err := f.policy.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if _, ok := waitMarker(marker+"-fg", true, 10*time.Second); !ok {
		cancel()
		cmd.Wait()
		t.Fatal("the command did not start its processes")
	}
	if _, ok := waitMarker(marker, true, 10*time.Second); !ok {
		t.Fatal("the command's survivor did not start")
	}
	cancel()
	cmd.Wait()
	if took, gone := waitMarker(marker, false, time.Second); !gone {
		t.Errorf("a process of the cancelled command is alive %v after it was killed: %v", took, markerPids(marker))
	}
}

// TestServerKilled kills, with SIGKILL, a server (the test binary as one,
// serveMain) that started a command with a survivor, and checks that the
// command and its survivor die with it: the init reads the end of its
// lifeline. Nothing else stops them here: the server has no watchdog.
func TestServerKilled(t *testing.T) {
	needNamespaces(t)
	f := newFixture(t)
	marker := fmt.Sprintf("reika-orphan-%d", os.Getpid())
	t.Cleanup(func() { killMarker(marker) })
	server := exec.Command(os.Args[0])
	server.Dir = f.ws
	server.Env = append(os.Environ(), "SANDBOX_SERVE="+fmt.Sprintf(`setsid -f bash -c 'exec -a %[1]s sleep 1000' </dev/null >/dev/null 2>&1; exec -a %[1]s-fg sleep 1000`, marker), "TMPDIR="+f.temp)
	server.Stdout, server.Stderr = os.Stderr, os.Stderr
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer server.Wait()
	defer server.Process.Kill()
	for _, m := range []string{marker + "-fg", marker} {
		if _, ok := waitMarker(m, true, 10*time.Second); !ok {
			t.Fatalf("the server's command did not start %s", m)
		}
	}
	server.Process.Signal(syscall.SIGKILL)
	server.Wait()
	if took, gone := waitMarker(marker, false, 2*time.Second); !gone {
		t.Errorf("the command of a server killed with SIGKILL is alive %v later: %v", took, markerPids(marker))
	} else {
		t.Logf("gone %v after the server was killed", took)
	}
}

// serveMain lets the test binary play a server that starts the command
// SANDBOX_SERVE in the sandbox (the workspace its directory) and waits
// for it, to be killed meanwhile.
func serveMain() {
	script := os.Getenv("SANDBOX_SERVE")
	if script == "" {
		return
	}
	dir, _ := os.Getwd()
	p := Policy{Workspace: []string{dir}, Temp: os.TempDir()}
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = Env(os.Environ(), "", nil)
	if err := p.Start(cmd); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	cmd.Wait() // a wait in the kernel, which the runtime does not take for a deadlock as it would select {}
	os.Exit(0)
}

// TestProcShowsOnlyTheCommand checks that a command cannot read the
// command line, environment or open files of the processes outside it
// (the server, the editor): its /proc has only its own.
func TestProcShowsOnlyTheCommand(t *testing.T) {
	needNamespaces(t)
	f := newFixture(t)
	pid := strconv.Itoa(os.Getpid())
	for _, network := range []bool{false, true} {
		p := f.policy
		p.Network = network
		for _, script := range []string{
			"cat /proc/" + pid + "/cmdline",
			"cat /proc/" + pid + "/environ",
			"ls /proc/" + pid + "/fd",
			"test $(ls -d /proc/[0-9]* | wc -l) -gt 5 && ls -d /proc/[0-9]*",
		} {
			out, err := run(t, p, f.ws, script)
			if err == nil || strings.Contains(out, "SANDBOX") {
				t.Errorf("%s with Network %v succeeded:\n%s", script, network, out)
			}
		}
	}
}

// TestOwnNetwork checks that without the network a command is in a
// network of its own, with only a loopback, up, and with it in the
// system's.
func TestOwnNetwork(t *testing.T) {
	needNamespaces(t)
	f := newFixture(t)
	host, err := os.ReadFile("/proc/self/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	for _, network := range []bool{false, true} {
		p := f.policy
		p.Network = network
		out, err := run(t, p, f.ws, "cat /proc/net/dev")
		if err != nil {
			t.Fatalf("cat /proc/net/dev: %v\n%s", err, out)
		}
		got, want := interfaces(out), []string{"lo"}
		if network {
			want = interfaces(string(host))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("interfaces with Network %v = %v, want %v", network, got, want)
		}
	}
	out, ok := runProbe(t, f.policy, "SANDBOX_INTERFACES=1")
	if !ok || !strings.HasPrefix(out, "lo up|loopback") {
		t.Errorf("the command's own network: %s (ok %v), want its loopback up", out, ok)
	}
}

// interfaces lists the names in a /proc/net/dev.
func interfaces(dev string) []string {
	var names []string
	for _, line := range strings.Split(dev, "\n") {
		if name, _, ok := strings.Cut(line, ":"); ok && !strings.Contains(name, "|") {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return names
}

// TestInitEnvironment checks that the command gets its environment whole
// and that the init, which runs before the restrictions, does not: a
// library LD_PRELOAD names would run in it unrestricted. The loader
// complains once for each program it cannot preload into, so one
// complaint is the command's, two would be the init's too.
func TestInitEnvironment(t *testing.T) {
	needNamespaces(t)
	f := newFixture(t)
	const lib = "/nonexistent/reika-preload.so"
	cmd := exec.Command("bash", "-c", `echo "preload=$LD_PRELOAD"`)
	cmd.Dir = f.ws
	cmd.Env = append(Env(os.Environ(), "", nil), "LD_PRELOAD="+lib)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := f.policy.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "preload="+lib) {
		t.Errorf("the command's LD_PRELOAD is lost: %s", out.String())
	}
	if n := strings.Count(out.String(), lib+"' from LD_PRELOAD"); n != 1 {
		t.Errorf("the loader tried LD_PRELOAD in %d programs, want 1 (the command's bash):\n%s", n, out.String())
	}
}

// TestInitPassesOn checks what the init hands between the caller and the
// command: the exit status, and SIGTERM sent to the process Start gave.
func TestInitPassesOn(t *testing.T) {
	needNamespaces(t)
	f := newFixture(t)
	if out, err := run(t, f.policy, f.ws, "exit 7"); exitCode(err) != 7 {
		t.Errorf("exit 7: %v, %s; want exit status 7", err, out)
	}
	cmd := exec.Command("bash", "-c", `trap 'echo got TERM; exit 3' TERM; echo ready; sleep 100 & wait`)
	cmd.Dir = f.ws
	cmd.Env = Env(os.Environ(), "", nil)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	if err := f.policy.Start(cmd); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer r.Close()
	var buf [64]byte
	r.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, _ := r.Read(buf[:]) // "ready"
	if !strings.Contains(string(buf[:n]), "ready") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the command said %q, want ready", buf[:n])
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		rest, _ := io.ReadAll(r)
		if exitCode(err) != 3 || !strings.Contains(string(rest), "got TERM") {
			t.Errorf("after SIGTERM: %v, output %q; want the trap's exit status 3", err, rest)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Errorf("the command did not end after SIGTERM to its init")
	}
}

// exitCode is err's exit status, 0 for nil, -1 for another error.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// TestProbeLine logs what Probe found here and the line check prints.
func TestProbeLine(t *testing.T) {
	s := Probe()
	t.Logf("%+v", s)
	t.Log(s.Line(Policy{Home: "/nonexistent"}))
	if s.Available && !s.Namespaces && s.NamespacesWhy == "" {
		t.Errorf("Probe: no namespaces and no reason")
	}
}
