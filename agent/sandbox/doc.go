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
// Start builds a Landlock ruleset in the calling goroutine, then starts a
// goroutine that locks itself to its OS thread and never unlocks, sets
// no_new_privs and calls landlock_restrict_self on that thread only, and
// calls cmd.Start there. Go forks from the calling thread, so the child
// inherits the thread's domain; the rest of the process is not restricted.
// When the goroutine returns, the Go runtime kills the locked thread rather
// than reuse it, and it never clones a locked thread to make a new one (it
// asks its template thread), so the restriction cannot leak to other
// goroutines. The child outlives its thread: Linux gives it to another
// thread of the process, which waits for it as usual. For the same reason
// cmd.SysProcAttr.Pdeathsig must not be set: it fires when the starting
// thread exits, that is at once, and Start refuses it.
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
// BenchmarkStart): the workspace's top level changes between commands.
// Give the command TMPDIR=Temp when Temp is not the system's: git, go
// and most tools write their temporary files there.
//
// # What it cannot stop
//
// Landlock (ABI 7) does not govern unix sockets by path (the D-Bus
// session bus, docker.sock, an ssh-agent, even inside Home), UDP or raw
// sockets: a seccomp filter on the same thread refuses socket(AF_UNIX)
// always and non-TCP inet sockets without the network, with io_uring and
// other ABIs' system calls (seccomp_linux.go; amd64 and arm64 only).
// Landlock does not govern reading what is outside Home either:
// /proc/<pid>/environ of the user's other dumpable processes is readable
// by an ordinary user's command (ptrace, their memory and open files are
// refused), so a secret in the editor's environment is readable; the
// server hides its own (HideEnvironment), and a root command has fewer
// capabilities than root's processes, which refuses it theirs. Nor does it
// govern what commands leave behind for later, outside the sandbox: a
// nested sub/.git/config (the tools package looks for those after each
// command), code the user runs. The tests pin the sockets and /proc.
//
// All functions are safe for concurrent use; a Policy is a value and is not
// changed by Start.
package sandbox
