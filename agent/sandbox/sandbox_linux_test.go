package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const canary = "CANARY-5f0c9e-PRIVATE-KEY"

// TestMain lets the test binary serve as a command inside the sandbox:
// with SANDBOX_DIAL=network,address it dials and says whether it could,
// and probeMain has the other probes.
func TestMain(m *testing.M) {
	probeMain()
	serveMain()
	if v := os.Getenv("SANDBOX_DIAL"); v != "" {
		network, addr, _ := strings.Cut(v, ",")
		c, err := net.DialTimeout(network, addr, 5*time.Second)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		if network == "udp" {
			if _, err := c.Write([]byte("x")); err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
		}
		c.Close()
		fmt.Println("connected")
		os.Exit(0)
	}
	if v := os.Getenv("SANDBOX_PTRACE"); v != "" {
		pid, _ := strconv.Atoi(v)
		if err := syscall.PtraceAttach(pid); err != nil {
			fmt.Println("ptrace:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func needLandlock(t testing.TB) {
	t.Helper()
	if s := Probe(); !s.Available {
		t.Skipf("landlock is not available here: %s", s.Why)
	}
}

// fixture is a fake home with a secret, a workspace that is a git
// repository, and a temporary directory.
type fixture struct {
	home, ws, temp string
	secret         string // home/.ssh/id_rsa
	policy         Policy
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	dir := t.TempDir()
	f := fixture{home: filepath.Join(dir, "home"), ws: filepath.Join(dir, "ws"), temp: filepath.Join(dir, "temp")}
	f.secret = filepath.Join(f.home, ".ssh", "id_rsa")
	for _, d := range []string{filepath.Dir(f.secret), filepath.Join(f.home, ".config"), filepath.Join(f.ws, "sub"), f.temp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		f.secret:                        canary + "\n",
		filepath.Join(f.ws, ".envrc"):   "export X=1\n",
		filepath.Join(f.ws, "README"):   "readme\n",
		filepath.Join(f.ws, "sub/a.go"): "package sub\n",
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, f.ws, nil, "init", "-q")
	for link, target := range map[string]string{"key": f.secret, "cfg": filepath.Join(f.home, ".config")} {
		if err := os.Symlink(target, filepath.Join(f.ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	f.policy = Policy{
		Workspace: []string{f.ws},
		Protected: func(name string) bool { return name == ".git" || name == ".envrc" || name == ".vscode" },
		Temp:      f.temp,
		Home:      f.home,
	}
	return f
}

// gitRun runs git in dir, outside the sandbox.
func gitRun(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// run runs script with bash -c in dir under p, with Env's environment
// made from extra and the test's own.
func run(t *testing.T, p Policy, dir, script string, extra ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	var names []string // the test's own plumbing passes, as a user's sandbox_env would
	for _, kv := range extra {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "SANDBOX_") {
			names = append(names, k)
		}
	}
	cmd.Env = Env(append(os.Environ(), extra...), "REIKA_API_KEY", names)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := p.Start(cmd); err != nil {
		t.Fatalf("Start: %v", err)
	}
	err := cmd.Wait()
	return out.String(), err
}

func TestContained(t *testing.T) {
	needLandlock(t)
	f := newFixture(t)
	tests := []struct {
		name   string
		script string
		ok     bool
		want   string // in the output, when set
	}{
		{"read the secret", "cat " + f.secret, false, ""},
		{"read the secret through a symlink", "cat key", false, ""},
		{"read the secret through .. after a symlinked dir", "cat cfg/../.ssh/id_rsa", false, ""},
		{"list home", "ls -a " + f.home, false, ""},
		{"write .git/config", "echo '[x]' >> .git/config", false, ""},
		{"create a hook", "echo 'touch /tmp/pwned' > .git/hooks/pre-commit", false, ""},
		{"write .envrc", "echo 'export Y=1' >> .envrc", false, ""},
		{"create a top-level file", "touch new.txt", false, ""},
		{"create a top-level dir", "mkdir newdir", false, ""},
		{"remove a top-level file", "rm README", false, ""},
		{"rename a top-level dir", "mv sub sub2", false, ""},
		{"write below a top-level dir", "echo 'package sub' > sub/x.go && mkdir -p sub/d/e && mv sub/x.go sub/d/e/y.go && rm -r sub/d", true, ""},
		{"move from the workspace to temp and back", "echo x > sub/m && mv sub/m " + f.temp + "/m && mv " + f.temp + "/m sub/m", true, ""},
		{"write an existing top-level file", "echo more >> README && : > README", true, ""},
		{"write temp", "echo x > " + f.temp + "/x && rm " + f.temp + "/x", true, ""},
		{"write /usr", "touch /usr/reika-sandbox-test", false, ""},
		{"write /etc", "touch /etc/reika-sandbox-test", false, ""},
		{"append to /etc/hostname", "echo x >> /etc/hostname", false, ""},
		{"read /etc/hostname", "cat /etc/hostname", true, ""},
		{"write /dev/null", "echo x > /dev/null && head -c 3 /dev/zero | wc -c", true, "3"},
		{"signal the test process", "kill -0 " + strconv.Itoa(os.Getpid()), false, ""},
		{"list /", "ls /", false, ""},
		{"scrubbed environment", "tr '\\0' '\\n' < /proc/$$/environ", true, "GIT_CONFIG_GLOBAL=/dev/null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, f.policy, f.ws, tt.script, "FOO_API_KEY=sk-should-not-pass")
			if ok := err == nil; ok != tt.ok {
				t.Errorf("%s: succeeded = %v, want %v; output:\n%s", tt.script, ok, tt.ok, out)
			}
			if strings.Contains(out, canary) {
				t.Errorf("%s: output holds the secret:\n%s", tt.script, out)
			}
			if strings.Contains(out, "sk-should-not-pass") {
				t.Errorf("%s: output holds FOO_API_KEY:\n%s", tt.script, out)
			}
			if tt.want != "" && !strings.Contains(out, tt.want) {
				t.Errorf("%s: output = %q, want it to hold %q", tt.script, out, tt.want)
			}
		})
	}
	for _, name := range []string{".git/hooks/pre-commit", "new.txt", "newdir", "/usr/reika-sandbox-test", "/etc/reika-sandbox-test"} {
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(f.ws, name)
		}
		if _, err := os.Lstat(path); err == nil {
			os.Remove(path)
			t.Errorf("%s was created", path)
		}
	}
}

func TestParentNotRestricted(t *testing.T) {
	needLandlock(t)
	f := newFixture(t)
	for range 8 {
		if out, err := run(t, f.policy, f.ws, "cat "+f.secret); err == nil {
			t.Fatalf("the sandboxed cat read the secret: %s", out)
		}
	}
	// Read from many goroutines, so from many threads of the process.
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			if _, err := os.ReadFile(f.secret); err != nil {
				errs <- err
			}
			if err := os.WriteFile(filepath.Join(f.ws, ".git", "reika-test"), nil, 0o644); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("the test process is restricted: %v", err)
	}
	out, err := exec.Command("cat", f.secret).Output()
	if err != nil || !strings.Contains(string(out), canary) {
		t.Errorf("cat %s outside the sandbox = %q, %v; want the secret", f.secret, out, err)
	}
}

func TestNetwork(t *testing.T) {
	needLandlock(t)
	if Probe().ABI < 4 {
		t.Skip("landlock ABI < 4 has no network rules")
	}
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	script := "exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo connected"
	for _, network := range []bool{false, true} {
		t.Run(fmt.Sprintf("network=%v", network), func(t *testing.T) {
			p := f.policy
			p.Network = network
			out, err := run(t, p, f.ws, script)
			if got := err == nil; got != network {
				t.Errorf("connect with Network %v: succeeded = %v, want %v; output:\n%s", network, got, network, out)
			}
			if !network && Explain(out, err != nil, p) == "" {
				t.Errorf("Explain(%q) = \"\", want a note", out)
			}
		})
	}
}

// TestSockets pins what the sandbox does with sockets that are not TCP:
// an abstract unix socket outside the domain is out of reach (ABI 6), a
// unix socket by path and UDP are not: Landlock does not govern them.
func TestSockets(t *testing.T) {
	needLandlock(t)
	if Probe().ABI < 6 {
		t.Skip("landlock ABI < 6 does not scope abstract sockets")
	}
	f := newFixture(t)
	pathSock := filepath.Join(f.home, "agent.sock") // in the hidden home
	abstract := fmt.Sprintf("@reika-sandbox-test-%d", os.Getpid())
	tests := []struct {
		network, addr string
		ok            bool
	}{
		{"unix", pathSock, false},
		{"unix", abstract, false},
		{"udp", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.network+" "+tt.addr, func(t *testing.T) {
			addr := tt.addr
			if tt.network == "udp" {
				pc, err := net.ListenPacket("udp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer pc.Close()
				addr = pc.LocalAddr().String()
			} else {
				ln, err := net.Listen("unix", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				go func() {
					for {
						c, err := ln.Accept()
						if err != nil {
							return
						}
						c.Close()
					}
				}()
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0])
			cmd.Env = append(Env(os.Environ(), "", nil), "SANDBOX_DIAL="+tt.network+","+addr)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := f.policy.Start(cmd); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if got := err == nil; got != tt.ok {
				t.Errorf("dial %s %s inside the sandbox: succeeded = %v, want %v; output: %s", tt.network, addr, got, tt.ok, out.String())
			}
		})
	}
}

func TestPolicyErrors(t *testing.T) {
	needLandlock(t)
	f := newFixture(t)
	tests := []struct {
		name string
		edit func(*Policy)
	}{
		{"workspace is home", func(p *Policy) { p.Workspace = []string{f.home} }},
		{"workspace holds home", func(p *Policy) { p.Workspace = []string{filepath.Dir(f.home)} }},
		{"temp holds home", func(p *Policy) { p.Temp = filepath.Dir(f.home) }},
		{"cache is home", func(p *Policy) { p.Caches = []Cache{{Path: f.home, Tool: "test"}} }},
		{"home is /", func(p *Policy) { p.Home = "/" }},
		{"relative home", func(p *Policy) { p.Home = "home" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := f.policy
			tt.edit(&p)
			err := p.Start(exec.Command("true"))
			if err == nil || errors.Is(err, ErrUnavailable) {
				t.Errorf("Start = %v, want an error about the policy", err)
			}
		})
	}
	t.Run("pdeathsig", func(t *testing.T) {
		cmd := exec.Command("true")
		cmd.SysProcAttr = pdeathsig()
		if err := f.policy.Start(cmd); err == nil {
			cmd.Wait()
			t.Errorf("Start with Pdeathsig = nil, want an error")
		}
	})
}

// TestHomeBehindSymlink checks that a Home reached through a symbolic link
// is hidden under its real name too.
func TestHomeBehindSymlink(t *testing.T) {
	needLandlock(t)
	f := newFixture(t)
	link := filepath.Join(filepath.Dir(f.home), "homelink")
	if err := os.Symlink(f.home, link); err != nil {
		t.Fatal(err)
	}
	p := f.policy
	p.Home = link
	for _, path := range []string{f.secret, filepath.Join(link, ".ssh", "id_rsa")} {
		if out, err := run(t, p, f.ws, "cat "+path); err == nil || strings.Contains(out, canary) {
			t.Errorf("cat %s with Home %s: %v, %q; want it denied", path, link, err, out)
		}
	}
}

// TestOtherProcesses pins what a command can see of a dumpable process
// outside its domain that runs as the same user: Landlock refuses ptrace
// and so the process's open files, its memory and its environment (a
// read that needs ptrace's right), as an ordinary user and as root. Its
// command line needs no such right: without namespaces a command reads
// it; in namespaces its /proc does not show the process at all.
func TestOtherProcesses(t *testing.T) {
	needLandlock(t)
	f := newFixture(t)
	other := exec.Command("sleep", "60")
	other.Env = append(os.Environ(), "OTHER_API_KEY="+canary)
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	pid := strconv.Itoa(other.Process.Pid)
	tests := []struct {
		name, script string
		ok           bool
	}{
		{"ptrace", "exec " + os.Args[0], false},
		{"open files", "ls -l /proc/" + pid + "/fd", false},
		{"memory", "exec 3</proc/" + pid + "/mem", false},
		{"signal", "kill -0 " + pid, false},
		{"environment", "tr '\\0' '\\n' < /proc/" + pid + "/environ | grep OTHER_API_KEY", false},
		{"command line", "tr '\\0' ' ' < /proc/" + pid + "/cmdline | grep 'sleep 60'", !inNamespaces()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, f.policy, f.ws, tt.script, "SANDBOX_PTRACE="+pid)
			if got := err == nil; got != tt.ok {
				t.Errorf("%s: succeeded = %v, want %v; output:\n%s", tt.script, got, tt.ok, out)
			}
		})
	}
}

// TestSocketsWithNetwork: with the network allowed UDP works, and a unix
// socket by path (a session bus, docker.sock, an agent) is still refused.
func TestSocketsWithNetwork(t *testing.T) {
	needLandlock(t)
	f := newFixture(t)
	p := f.policy
	p.Network = true
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	sock := filepath.Join(t.TempDir(), "bus")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, tt := range []struct {
		network, addr string
		ok            bool
	}{
		{"udp", pc.LocalAddr().String(), true},
		{"unix", sock, false},
	} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(Env(os.Environ(), "", nil), "SANDBOX_DIAL="+tt.network+","+tt.addr)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := p.Start(cmd); err != nil {
			t.Fatal(err)
		}
		if got := cmd.Wait() == nil; got != tt.ok {
			t.Errorf("dial %s %s with the network allowed: succeeded = %v, want %v; output: %s", tt.network, tt.addr, got, tt.ok, out.String())
		}
	}
}

func TestSocketFilterShape(t *testing.T) {
	for _, network := range []bool{false, true} {
		prog := socketFilter(network)
		for i, ins := range prog {
			if ins.Code&0x07 == 0x05 && ins.Code != 0x05 { // a conditional jump
				if i+1+int(ins.Jt) >= len(prog) || i+1+int(ins.Jf) >= len(prog) {
					t.Errorf("network %v: instruction %d jumps past the end", network, i)
				}
			}
		}
		if last := prog[len(prog)-1]; last.K != retDeny {
			t.Errorf("network %v: the program ends with %#x, want deny", network, last.K)
		}
	}
}

// needTool is the path of a toolchain's command that a long test runs in
// the sandbox, with the real home: the test is skipped under -short, where
// Landlock is missing, or where the command is (it fails instead with
// REIKA_EDITORS=require, as in CI).
func needTool(t *testing.T, name string) (path, home string) {
	t.Helper()
	needLandlock(t)
	if testing.Short() {
		t.Skipf("runs %s", name)
	}
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("REIKA_EDITORS") == "require" {
			t.Fatalf("no %s command, and REIKA_EDITORS=require", name)
		}
		t.Skipf("no %s command", name)
	}
	home, err = os.UserHomeDir()
	if err != nil {
		t.Skip(err)
	}
	return path, home
}
