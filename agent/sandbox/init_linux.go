package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// initName is the argv[0] under which a binary that links this package
// runs as the init of a command's namespaces (see runInit) instead of as
// itself. The package's init function looks for it (and before it, in a
// binary built with cgo, a C constructor: init_cgo_linux.go), so the
// server and every test binary serve without a word in their main.
const initName = "reika-sandbox-init"

func init() {
	if len(os.Args) > 0 && os.Args[0] == initName {
		os.Exit(runInit(os.Args[1:]))
	}
}

// initExit is init's exit status when it could not run the command.
const initExit = 125

// An initConfig is what Start tells the init in its first argument.
type initConfig struct {
	Ruleset  int  // the Landlock ruleset's descriptor
	Lifeline int  // the lifeline's read end (see lifeline)
	Network  bool // the command may use the network: no network namespace
	Probe    bool // set up the namespaces, then exit 0 without a command
	// Filter is socketFilter(Network) in hexadecimal, for the init in C,
	// which cannot build it (init_cgo_linux.go); the Go init builds its own.
	Filter string
}

func (c initConfig) String() string {
	return fmt.Sprintf("ruleset=%d,lifeline=%d,network=%t,probe=%t,filter=%s", c.Ruleset, c.Lifeline, c.Network, c.Probe, c.Filter)
}

// parseInitConfig reads what initConfig.String wrote.
func parseInitConfig(s string) (initConfig, error) {
	c := initConfig{Ruleset: -1, Lifeline: -1}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "ruleset":
			c.Ruleset, err = strconv.Atoi(v)
		case "lifeline":
			c.Lifeline, err = strconv.Atoi(v)
		case "network":
			c.Network, err = strconv.ParseBool(v)
		case "probe":
			c.Probe, err = strconv.ParseBool(v)
		case "filter":
			c.Filter = v
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return c, fmt.Errorf("sandbox init: bad configuration %q: %w", s, err)
		}
	}
	return c, nil
}

// runInit is pid 1 of a command's pid namespace. It mounts the
// namespace's own /proc, brings up its loopback when it has its own
// network, restricts its thread as startRestricted does (capabilities,
// no_new_privs, Landlock, the socket filter), starts the command from
// that thread, reaps every process given to it, and exits with the
// command's status when the command ends: the kernel then kills what is
// left in the namespace. It exits at once too when the server is gone
// (the lifeline closes). args are what initArgs made, less the name.
func runInit(args []string) int {
	runtime.LockOSThread() // init functions run on the main thread; stay there
	c, env, argv, err := parseInitArgs(args)
	if err == nil {
		err = setUpNamespaces(c.Network)
	}
	if err != nil || c.Probe {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return initExit
		}
		return 0
	}
	debug.SetGCPercent(-1) // a short life with little garbage
	go watchLifeline(c.Lifeline)
	pid, err := startCommand(c, env, argv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "reika sandbox: cannot start %s: %v\n", argv[0], err)
		return initExit
	}
	return reap(pid)
}

// parseInitArgs reads what initArgs wrote: the configuration, the
// command's environment, and its path followed by its arguments.
func parseInitArgs(args []string) (c initConfig, env, argv []string, err error) {
	if len(args) < 2 {
		return c, nil, nil, errors.New("sandbox init: no configuration")
	}
	if c, err = parseInitConfig(args[0]); err != nil {
		return c, nil, nil, err
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 0 || len(args) < 2+n+2 {
		return c, nil, nil, fmt.Errorf("sandbox init: bad arguments %q", args)
	}
	return c, args[2 : 2+n], args[2+n:], nil
}

// setUpNamespaces makes the mounts private to the namespace (none of them
// propagates back to the system's), mounts a /proc that shows only the
// namespace's processes, and without the network brings up the loopback
// of the namespace's own network.
func setUpNamespaces(network bool) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("sandbox init: cannot make the mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("sandbox init: cannot mount /proc: %w", err)
	}
	if network {
		return nil
	}
	return loopbackUp()
}

// loopbackUp brings up the interface lo.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox init: loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err == nil {
		err = unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr)
	}
	if err == nil {
		ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
		err = unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
	}
	if err != nil {
		return fmt.Errorf("sandbox init: cannot bring up the loopback: %w", err)
	}
	return nil
}

// watchLifeline exits when the lifeline's read end reads end of file,
// that is when the server that holds its write end is gone, kill -9
// included. The read waits in the runtime's poller, not on a thread of
// its own.
func watchLifeline(fd int) {
	if fd < 0 || unix.SetNonblock(fd, true) != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "lifeline")
	var b [1]byte
	for {
		if _, err := f.Read(b[:]); err != nil {
			os.Exit(initExit)
		}
	}
}

// startCommand restricts the calling (main, locked) thread and starts the
// command from it; the command inherits the thread's restrictions. Only
// the standard descriptors and those Start's caller passed reach it.
func startCommand(c initConfig, env, argv []string) (int, error) {
	if err := dropCapabilities(); err != nil {
		return 0, err
	}
	// The init is not to be traced or read by the command it starts
	// (its own exec makes the command dumpable again).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return 0, err
	}
	// Landlock skips a directory something is mounted on when it walks up
	// from a file: the rule on /proc that Start's ruleset has is on the
	// system's proc, which the namespace's now hides. So the new one is
	// granted reading too.
	if err := addRule(c.Ruleset, rule{"/proc", read, true}, read); err != nil {
		return 0, err
	}
	if err := restrictThread(c.Ruleset, c.Network); err != nil {
		return 0, err
	}
	first := min(c.Ruleset, c.Lifeline)
	files := make([]uintptr, first)
	for i := range files {
		files[i] = uintptr(i)
	}
	unix.CloseOnExec(c.Ruleset)
	unix.CloseOnExec(c.Lifeline)
	return syscall.ForkExec(argv[0], argv[1:], &syscall.ProcAttr{Env: env, Files: files})
}

// reap waits for every process the namespace gives to its init, forwards
// the signals a caller sends to stop the command, and returns the
// command's exit status (128 and the signal's number when a signal ended
// it) once the command with pid ends.
func reap(pid int) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT)
	go func() {
		for s := range sigs {
			unix.Kill(pid, s.(syscall.Signal))
		}
	}()
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return initExit
		case got != pid:
			continue
		case ws.Signaled():
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}
