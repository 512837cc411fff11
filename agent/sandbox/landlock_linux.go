package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Access rights, with the Landlock ABI version each appeared in. The
// values are the kernel's (include/uapi/linux/landlock.h), as in x/sys.
const (
	fsExecute    = unix.LANDLOCK_ACCESS_FS_EXECUTE     // ABI 1
	fsWriteFile  = unix.LANDLOCK_ACCESS_FS_WRITE_FILE  // ABI 1
	fsReadFile   = unix.LANDLOCK_ACCESS_FS_READ_FILE   // ABI 1
	fsReadDir    = unix.LANDLOCK_ACCESS_FS_READ_DIR    // ABI 1
	fsRemoveDir  = unix.LANDLOCK_ACCESS_FS_REMOVE_DIR  // ABI 1
	fsRemoveFile = unix.LANDLOCK_ACCESS_FS_REMOVE_FILE // ABI 1
	fsMakeChar   = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR   // ABI 1
	fsMakeDir    = unix.LANDLOCK_ACCESS_FS_MAKE_DIR    // ABI 1
	fsMakeReg    = unix.LANDLOCK_ACCESS_FS_MAKE_REG    // ABI 1
	fsMakeSock   = unix.LANDLOCK_ACCESS_FS_MAKE_SOCK   // ABI 1
	fsMakeFifo   = unix.LANDLOCK_ACCESS_FS_MAKE_FIFO   // ABI 1
	fsMakeBlock  = unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK  // ABI 1
	fsMakeSym    = unix.LANDLOCK_ACCESS_FS_MAKE_SYM    // ABI 1
	fsRefer      = unix.LANDLOCK_ACCESS_FS_REFER       // ABI 2
	fsTruncate   = unix.LANDLOCK_ACCESS_FS_TRUNCATE    // ABI 3
	fsIoctlDev   = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV   // ABI 5

	netBindTCP    = unix.LANDLOCK_ACCESS_NET_BIND_TCP    // ABI 4
	netConnectTCP = unix.LANDLOCK_ACCESS_NET_CONNECT_TCP // ABI 4

	scopeAbstractUnix = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET // ABI 6
	scopeSignal       = unix.LANDLOCK_SCOPE_SIGNAL               // ABI 6
)

// Groups of rights.
const (
	fsABI1 = fsExecute | fsWriteFile | fsReadFile | fsReadDir | fsRemoveDir | fsRemoveFile |
		fsMakeChar | fsMakeDir | fsMakeReg | fsMakeSock | fsMakeFifo | fsMakeBlock | fsMakeSym

	// read is what every visible path gets.
	read = fsExecute | fsReadFile | fsReadDir
	// fileRights are the rights a rule on a file (not a directory) may carry.
	fileRights = fsExecute | fsWriteFile | fsReadFile | fsTruncate | fsIoctlDev
	// writeFile is what a writable top-level file of a workspace gets.
	writeFile = fsWriteFile | fsTruncate
	// allFS is every file-system right; handledFS trims it to an ABI.
	allFS = fsABI1 | fsRefer | fsTruncate | fsIoctlDev
)

// landlockRuleNetPort is LANDLOCK_RULE_NET_PORT (ABI 4), which x/sys does
// not define; with no such rule in a ruleset that handles TCP, all TCP
// binds and connects are denied. netPortAttr is its struct
// landlock_net_port_attr, for a Network policy that would list ports.
//
//lint:ignore U1000 no port rule is added yet (Network is all or nothing); kept with the ABI it needs for the day one is
const landlockRuleNetPort = 2

//lint:ignore U1000 as landlockRuleNetPort
type netPortAttr struct {
	AllowedAccess uint64
	Port          uint64
}

// handledFS returns the file-system rights ABI abi knows.
func handledFS(abi int) uint64 {
	h := uint64(fsABI1)
	if abi >= 2 {
		h |= fsRefer
	}
	if abi >= 3 {
		h |= fsTruncate
	}
	if abi >= 5 {
		h |= fsIoctlDev
	}
	return h
}

var probe = sync.OnceValue(func() Status {
	s := probeLandlock()
	s.Seccomp = seccompArch != 0
	if s.Available {
		s.UserNamespace, s.NamespacesWhy = probeNamespaces()
		s.Namespaces = s.NamespacesWhy == ""
	}
	return s
})

// probeLandlock asks the kernel for its Landlock ABI.
func probeLandlock() Status {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == 0:
		return Status{ABI: int(v), Available: true}
	case errno == unix.ENOSYS:
		return Status{Why: "the kernel has no Landlock (landlock_create_ruleset: ENOSYS); it needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK"}
	case errno == unix.EOPNOTSUPP:
		return Status{Why: "Landlock is built in but not enabled: add landlock to the kernel's lsm= boot parameter"}
	default:
		return Status{Why: fmt.Sprintf("landlock_create_ruleset: %v", errno)}
	}
}

// noNamespaces has Start contain commands without namespaces even where
// they can be made, for the tests of that way.
var noNamespaces bool

// Probe reports whether Landlock is available and its ABI version, and
// whether commands can run in namespaces of their own. It asks the kernel
// once (and starts a process in new namespaces once) and remembers the
// answer.
func Probe() Status { return probe() }

// Start starts cmd (as cmd.Start does) inside a Landlock domain built from
// p, without capabilities, under the socket filter, and where Probe found
// them in namespaces of its own: then cmd.Process is the command's init,
// whose exit status is the command's, which passes SIGTERM, SIGINT,
// SIGHUP and SIGQUIT on, and whose end (SIGKILL, the server's) ends
// everything the command started. It returns an error wrapping
// ErrUnavailable when Landlock is not there, and refuses a cmd with
// SysProcAttr.Pdeathsig set. The calling process is not restricted.
func (p Policy) Start(cmd *exec.Cmd) error {
	s := Probe()
	if !s.Available {
		return fmt.Errorf("%w: %s", ErrUnavailable, s.Why)
	}
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0 {
		return errors.New("sandbox: cmd.SysProcAttr.Pdeathsig fires when the thread that started the command exits, which is at once: leave it unset")
	}
	fd, err := p.ruleset(s.ABI)
	if err != nil {
		return err
	}
	if s.Namespaces && !noNamespaces {
		ruleset := os.NewFile(uintptr(fd), "landlock ruleset")
		defer ruleset.Close()
		return startInNamespaces(cmd, ruleset, p.Network, s.UserNamespace)
	}
	defer unix.Close(fd)
	return startOnThread(fd, p.Network, cmd)
}

// startOnThread restricts a fresh thread with the ruleset fd and starts
// cmd from it. The goroutine it starts locks its thread and never unlocks
// it: when the goroutine returns, the runtime ends the thread, and its
// Landlock domain with it. Except on the main thread, which the runtime
// cannot end: it parks it for good, still the leader of the process, and
// the kernel checks access to /proc/<pid> (mem, fd) against the leader,
// so a command in the domain the leader kept would pass those checks. So
// if the goroutine finds itself on the main thread, it holds it, which
// keeps the next goroutine off it, starts again from there, and gives the
// main thread back unrestricted.
func startOnThread(fd int, network bool, cmd *exec.Cmd) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			done <- startOnThread(fd, network, cmd)
			runtime.UnlockOSThread()
			return
		}
		done <- startRestricted(fd, network, cmd)
	}()
	return <-done
}

// startRestricted restricts the current thread with the ruleset fd and
// starts cmd from it. The thread must be locked and never unlocked.
func startRestricted(fd int, network bool, cmd *exec.Cmd) error {
	// Root keeps its capabilities across exec, and they step around the
	// rules (reading any file, chown, setuid, the clock, another
	// process's /proc files): the command gets none (dropCapabilities).
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := restrictThread(fd, network); err != nil {
		return err
	}
	return cmd.Start()
}

// restrictThread sets no_new_privs, the Landlock domain of the ruleset
// fd and the socket filter on the calling thread, which must be locked
// and never given back; the programs it starts inherit them.
func restrictThread(fd int, network bool) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: cannot set no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", errno)
	}
	if err := filterSockets(network); err != nil {
		return fmt.Errorf("sandbox: seccomp filter: %w", err)
	}
	return nil
}

// HideEnvironment makes the calling process non-dumpable, so that a
// command of the same user (contained or not, unless it has
// CAP_SYS_PTRACE, which a contained one never has) cannot read its
// /proc/<pid>/environ, where the API key and every secret the server was
// started with stay for its lifetime (unsetting a variable does not clear
// the copy the kernel shows). Its commands are dumpable again from exec.
// It also marks every file descriptor the server inherited beyond the
// standard three close-on-exec: Go opens its own so, but one an editor or
// a shell left open without it would reach every command the server
// starts (before Linux 5.11 they still do). Call it once, at the start
// of a server.
func HideEnvironment() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil && err != unix.ENOSYS && err != unix.EINVAL {
		return fmt.Errorf("marking inherited files close-on-exec: %w", err)
	}
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// A rule grants access beneath path. Paths the caller names are followed
// if they are symbolic links; paths found by walking are not (follow
// false), so a link into Home grants nothing.
type rule struct {
	path   string
	access uint64
	follow bool
}

// ruleset creates a Landlock ruleset for p at ABI abi and returns its fd.
func (p Policy) ruleset(abi int) (int, error) {
	rules, err := p.rules()
	if err != nil {
		return -1, err
	}
	handled := handledFS(abi)
	attr := unix.LandlockRulesetAttr{Access_fs: handled}
	if abi >= 4 && !p.Network {
		attr.Access_net = netBindTCP | netConnectTCP
	}
	if abi >= 6 {
		attr.Scoped = scopeAbstractUnix | scopeSignal
	}
	// Older kernels accept the larger struct as long as the fields they do
	// not know are zero.
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return -1, fmt.Errorf("sandbox: landlock_create_ruleset: %w", errno)
	}
	fd := int(r)
	for _, ru := range rules {
		if err := addRule(fd, ru, handled); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// addRule adds ru to the ruleset fd, with its access trimmed to handled
// and, for a file, to the rights a file can carry. A path that is gone,
// cannot be opened, or is a symbolic link not to follow is skipped: a
// skipped rule only narrows the policy.
func addRule(fd int, ru rule, handled uint64) error {
	flags := unix.O_PATH | unix.O_CLOEXEC
	if !ru.follow {
		flags |= unix.O_NOFOLLOW
	}
	pfd, err := unix.Open(ru.path, flags, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return nil
	}
	access := ru.access & handled
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return nil
	case unix.S_IFDIR:
	default:
		access &= fileRights
	}
	if access == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(pfd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("sandbox: landlock_add_rule %s: %w", ru.path, errno)
	}
	return nil
}

// devices are the device files a command may write, beside reading them.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// rules lists the rules of p, walking "/" along Home's ancestors and the
// top level of each workspace root.
func (p Policy) rules() ([]rule, error) {
	home, err := resolveHome(p.Home)
	if err != nil {
		return nil, err
	}
	rules := readRules(home)
	granted := func(what, path string) error {
		if path == "" {
			return nil
		}
		if !filepath.IsAbs(path) {
			return fmt.Errorf("sandbox: %s %q is not an absolute path", what, path)
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			real = filepath.Clean(path) // opening it will fail too, and skip it
		}
		if home != "" && within(home, real) {
			return fmt.Errorf("sandbox: %s %s holds the home directory %s, which could not be hidden", what, path, home)
		}
		return nil
	}
	if err := granted("temporary directory", p.Temp); err != nil {
		return nil, err
	}
	if p.Temp != "" {
		rules = append(rules, rule{p.Temp, allFS, true})
	}
	for _, d := range devices {
		rules = append(rules, rule{d, fsReadFile | fsWriteFile, true})
	}
	for _, root := range p.Workspace {
		if err := granted("workspace", root); err != nil {
			return nil, err
		}
		ws, err := workspaceRules(root, p.Protected)
		if err != nil {
			return nil, err
		}
		rules = append(rules, ws...)
	}
	for _, c := range p.Caches {
		if err := granted(c.Tool, c.Path); err != nil {
			return nil, err
		}
		access := uint64(read)
		if c.Write {
			access = allFS
		}
		rules = append(rules, rule{c.Path, access, true})
	}
	for _, d := range p.Exec {
		if err := granted("executable directory", d); err != nil {
			return nil, err
		}
		rules = append(rules, rule{d, read, true})
	}
	return rules, nil
}

// resolveHome returns home clean, absolute and without symbolic links, so
// that walking "/" does not grant it under another name.
func resolveHome(home string) (string, error) {
	if home == "" {
		return "", nil
	}
	if !filepath.IsAbs(home) {
		return "", fmt.Errorf("sandbox: home %q is not an absolute path", home)
	}
	real, err := filepath.EvalSymlinks(home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		real = filepath.Clean(home) // nothing there to hide
	case err != nil:
		return "", fmt.Errorf("sandbox: cannot resolve home, so it could not be hidden: %w", err)
	}
	if real == "/" {
		return "", errors.New("sandbox: home is /, which cannot be hidden")
	}
	return real, nil
}

// readRules grants reading everything under "/" but home: each entry of
// each of home's ancestors except the next one on the way to home.
func readRules(home string) []rule {
	if home == "" {
		return []rule{{"/", read, true}}
	}
	var rules []rule
	dir := "/"
	for _, name := range strings.Split(strings.TrimPrefix(home, "/"), "/") {
		entries, _ := os.ReadDir(dir) // an ancestor we cannot list: its children stay hidden
		for _, e := range entries {
			if e.Name() != name {
				rules = append(rules, rule{filepath.Join(dir, e.Name()), read, false})
			}
		}
		dir = filepath.Join(dir, name)
	}
	return rules
}

// workspaceRules makes root readable, its top-level entries writable and
// the protected ones read-only.
func workspaceRules(root string, protected func(string) bool) ([]rule, error) {
	rules := []rule{{root, read, true}}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("sandbox: cannot list the workspace: %w", err)
	}
	for _, e := range entries {
		if protected != nil && protected(e.Name()) {
			continue // readable through root
		}
		// A file gets only writeFile: addRule trims allFS to fileRights,
		// and fsIoctlDev is not for workspace files.
		access := uint64(allFS)
		if !e.IsDir() {
			access = writeFile
		}
		rules = append(rules, rule{filepath.Join(root, e.Name()), access, false})
	}
	return rules, nil
}
