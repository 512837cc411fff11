// Package sandbox starts the agent's shell commands inside a Landlock
// domain, so that a command the model writes can read the system, write
// below the workspace and the temporary directory, and nothing else: the
// user's home is hidden, the workspace's .git (and the other protected
// top-level entries) is read-only, and TCP is denied unless the user
// allowed it for this command.
//
//	self, _ := os.Executable() // reika-lsp, which answers sandbox.GoCacheCommand
//	caches, vars := sandbox.Private(ownDir, sandbox.DiscoverCaches(ctx, home, os.Getenv, exec.LookPath), self)
//	p := sandbox.Policy{
//		Workspace: []string{root},
//		Protected: func(name string) bool { return name == ".git" || name == ".envrc" },
//		Temp:      os.TempDir(),
//		Home:      home,
//		Caches:    caches,
//	}
//	cmd := exec.Command("bash", "-c", command)
//	cmd.Env = sandbox.Override(sandbox.Env(os.Environ(), "REIKA_API_KEY", nil), vars)
//	if err := p.Start(cmd); err != nil { … } // errors.Is(err, sandbox.ErrUnavailable): no Landlock here
//	out := cmd.Wait()
//	note := sandbox.Explain(output, failed, p) // "" or a line for the model
//
// # How a command is contained
//
// Start builds a Landlock ruleset in the calling goroutine and starts the
// running binary again (/proc/self/exe) as the command's init, under the
// argv[0] "reika-sandbox-init", with an empty environment (the command's
// travels in the arguments), so any binary that links the package serves,
// test binaries too: where it is built with cgo, a C constructor
// (init_cgo_linux.go) runs the init before the Go runtime starts, which
// makes it cheap; without cgo, this package's init function does the same
// in Go (runInit), the reference. The init starts in new pid and mount namespaces, a new network namespace
// unless Policy.Network is set, and, when the server is not root, a new
// user namespace in which the server's uid and gid stay what they are
// (the init keeps CAP_SYS_ADMIN, CAP_NET_ADMIN and CAP_SETPCAP there, and
// only there, across its exec). As pid 1 it makes every mount private to
// the namespace, mounts a /proc of its own (and grants it reading in the
// ruleset: Landlock does not look at a directory something is mounted on),
// brings up the loopback of its network, then on its main thread drops
// every capability (dropCapabilities), sets no_new_privs, calls
// landlock_restrict_self and installs the socket filter, makes itself
// non-dumpable, and starts the command from that thread, which the
// command inherits. It reaps what the namespace gives it, forwards
// SIGTERM, SIGINT, SIGHUP and SIGQUIT to the command, and exits with its
// status (128 and the signal's number when a signal ended it) once the
// command ends; the kernel then kills everything left in the namespace,
// before the caller's Wait returns. Killing the init (a cancel, a
// timeout, the process group) does the same. The init also reads a
// lifeline, a pipe whose write end only the server holds, and exits at its
// end: when the server dies, even by kill -9, its commands die with it.
//
// Probe starts an init once to learn whether the namespaces can be made
// (a kernel or a container can refuse user namespaces, or mounting a
// /proc); where they cannot, Start does what it did before them: a
// goroutine locks itself to its OS thread and never unlocks, drops the
// capabilities, sets no_new_privs, calls landlock_restrict_self and
// installs the filter on that thread only, and calls cmd.Start there. Go
// forks from the calling thread, so the child inherits the thread's
// domain; the rest of the process is not restricted. When the goroutine
// returns, the Go runtime kills the locked thread rather than reuse it,
// and it never clones a locked thread to make a new one (it asks its
// template thread), so the restriction cannot leak to other goroutines.
// The child outlives its thread: Linux gives it to another thread of the
// process, which waits for it as usual. For the same reason
// cmd.SysProcAttr.Pdeathsig must not be set (it fires when the starting
// thread exits, that is at once), and Start refuses it either way.
// Status.Line says which way holds and what is lost without namespaces.
//
// We use raw system calls from golang.org/x/sys/unix, not
// github.com/landlock-lsm/go-landlock: that library restricts the whole
// process through libpsx, and under cgo (this binary links tree-sitter)
// libpsx wraps pthread_create for the whole process, which is more than a
// language server should accept for starting a command.
//
// # The rules
//
// Landlock only grants; rights are inherited down a directory tree and
// cannot be taken back below a grant. So:
//
//   - Everything under "/" is readable and executable except Home: Start
//     grants each entry of "/" but the one leading to Home, and descends
//     along Home's ancestors granting their other children, so /home/other
//     stays readable and Home does not. A side effect is that the
//     ancestors of Home themselves ("/", "/home") cannot be listed.
//   - Temp is writable. /dev/null, /dev/zero, /dev/full, /dev/tty,
//     /dev/ptmx and /dev/pts can be written; device ioctls (ABI 5) are
//     denied, so a command cannot type into a terminal with TIOCSTI, even
//     as root, and programs that need a pseudo-terminal do not work.
//   - A workspace root itself is only readable: a write right on the root
//     would cover .git too. Each top-level directory Protected does not
//     match is fully writable, each such top-level file can be written and
//     truncated, protected entries are read-only. So a command cannot
//     create, remove or rename entries at the top level of the workspace
//     (no new go.sum, node_modules or target there, no gofmt -w of a
//     top-level file, which writes a backup beside it); the edit and write
//     tools can.
//   - Caches inside Home are readable, and writable where the Cache says
//     so; Exec directories are readable and executable. What the user's
//     own builds trust without checking is never writable: Go's module
//     cache and CARGO_HOME with cargo's registry are read-only (cargo's
//     lock files aside), and the build caches a command writes (GOCACHE,
//     npm's) are not the user's: Private puts directories of the caller's
//     in their place, with the variables that name them, and the user's
//     stay hidden (read-only outside Home). The user's GOCACHE is the one
//     exception, read-only: with Go 1.24 or later Private sets GOCACHEPROG
//     to reika-lsp's hidden "gocache" command (RunGoCache), which answers
//     a get from the workspace's own cache, else from the user's, and puts
//     only into the own, so the first go test of a workspace reads the
//     standard library the user's builds left instead of compiling it
//     (0.5 s against 12 s cold; TestGoCacheLayered). Commands can read the
//     user's build outputs, then, and cached test logs among them.
//   - Without Policy.Network, TCP bind and connect are denied (ABI 4).
//     Signals and abstract unix sockets are scoped to the domain (ABI 6):
//     a command cannot signal or connect to processes outside it.
//
// Symbolic links found while walking are not granted: their targets get
// what their own place in the tree gets, so a link into Home stays hidden.
// A path that would make the policy wider than asked (a workspace, Temp or
// cache that contains Home, a Home that cannot be resolved) is an error,
// never skipped. Only the rights the running kernel knows are handled;
// Status.Line says what is not enforced.
//
// Start builds the ruleset for each command (about half a millisecond;
// BenchmarkRuleset): the workspace's top level changes between commands.
// The init is the larger cost: a second exec of the server's binary and
// the namespaces, a few milliseconds, several times more with the Go init
// (BenchmarkStart). Give the command TMPDIR=Temp when
// Temp is not the system's: git, go and most tools write their temporary
// files there.
//
// # What it cannot stop
//
// Landlock (ABI 7) does not govern unix sockets by path (the D-Bus
// session bus, docker.sock, an ssh-agent, even inside Home), UDP, raw or
// other families' sockets, nor MPTCP where its TCP rules miss it: the
// seccomp filter refuses them (seccomp_linux.go; amd64 and arm64 only),
// and without the network the command's own network namespace has only a
// loopback anyway. Landlock does not govern reading what is outside Home
// either: in namespaces the command's /proc shows only its own processes;
// without them it shows the user's other processes, whose command lines a
// command reads (their environment, memory and open files need ptrace's
// right, which Landlock refuses outside the domain, as root too). /sys
// still shows the system's network interfaces. A root command keeps uid
// 0 without capabilities: it owns root's files, and Landlock does not
// govern chmod, so it can change the mode of a root-owned file it can
// reach by path, outside the writable places too. Nor does the sandbox
// govern what commands leave behind for later, outside it: a nested
// sub/.git/config (the tools package looks for those after each
// command), code the user runs. The tests pin the sockets, /proc, what outlives a
// command and root's capabilities.
//
// All functions are safe for concurrent use; a Policy is a value and is not
// changed by Start.
package sandbox
