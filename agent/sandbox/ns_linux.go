package sandbox

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// selfExe is the running binary, which serves as a command's init. The
// kernel opens it at exec, so a binary replaced on disk since the server
// started still serves.
const selfExe = "/proc/self/exe"

// initCaps are the capabilities the init keeps across its exec in a user
// namespace, as an ordinary user: to mount /proc, bring up the loopback
// and empty the bounding set. They hold only in the namespaces it owns,
// and it drops them before it starts the command.
var initCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}

// namespaceAttr returns a copy of attr (nil for none) that starts the
// init in new pid and mount namespaces, a new network namespace without
// the network, and, when user is set, a new user namespace in which the
// server's uid and gid are the same.
func namespaceAttr(attr *syscall.SysProcAttr, network, user bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{}
	if attr != nil {
		*a = *attr
	}
	a.Cloneflags |= unix.CLONE_NEWPID | unix.CLONE_NEWNS
	if !network {
		a.Cloneflags |= unix.CLONE_NEWNET
	}
	if user {
		a.Cloneflags |= unix.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		a.GidMappingsEnableSetgroups = false
		a.AmbientCaps = initCaps
	}
	return a
}

// lifeline is a pipe whose write end only this process holds, for its
// lifetime (close-on-exec: no child inherits it). Each init reads the
// read end, and reads end of file when the server is gone, however it
// ended. lifelineWrite keeps the write end from the garbage collector,
// which would close it.
var (
	lifeline = sync.OnceValues(func() (*os.File, error) {
		r, w, err := os.Pipe()
		lifelineWrite = w
		return r, err
	})
	//lint:ignore U1000 only held, so that the garbage collector never closes the write end
	lifelineWrite *os.File
)

// startInNamespaces starts cmd (as cmd.Start does) under an init in its
// own namespaces (runInit), which restricts itself with the Landlock
// ruleset and the socket filter before it starts the command. cmd's
// fields are as the caller left them once it returns.
func startInNamespaces(cmd *exec.Cmd, ruleset *os.File, network, user bool) error {
	if cmd.Err != nil || cmd.Process != nil {
		return cmd.Start() // its error
	}
	life, err := lifeline()
	if err != nil {
		return err
	}
	path, args, env, extra, attr := cmd.Path, cmd.Args, cmd.Env, cmd.ExtraFiles, cmd.SysProcAttr
	defer func() {
		cmd.Path, cmd.Args, cmd.Env, cmd.ExtraFiles, cmd.SysProcAttr = path, args, env, extra, attr
	}()
	if len(args) == 0 {
		args = []string{path}
	}
	first := 3 + len(extra)
	conf := initConfig{Ruleset: first, Lifeline: first + 1, Network: network, Filter: filterHex(network)}
	cmd.ExtraFiles = append(slices.Clip(extra), ruleset, life)
	cmd.Path = selfExe
	cmd.Args = initArgs(conf, cmd.Environ(), path, args)
	// The init runs before the restrictions: nothing in its environment
	// (LD_PRELOAD, LD_LIBRARY_PATH, GODEBUG) may change what it runs. The
	// command's environment travels in its arguments.
	cmd.Env = []string{}
	cmd.SysProcAttr = namespaceAttr(attr, network, user)
	return cmd.Start()
}

// initArgs are the init's arguments: its name, its configuration, the
// number of the command's environment's entries and the entries, the
// command's path and its arguments (argv[0] first). parseInitArgs reads
// them back.
func initArgs(c initConfig, env []string, path string, args []string) []string {
	a := append([]string{initName, c.String(), strconv.Itoa(len(env))}, env...)
	return append(append(a, path), args...)
}

// probeNamespaces starts an init in the namespaces a command would get
// and has it set them up and exit. It returns whether they are made in a
// user namespace and, when they cannot be made, why. An ordinary user
// needs one; root tries without first, then with one (root without
// CAP_SYS_ADMIN, as in a container, may still make a user namespace).
func probeNamespaces() (user bool, why string) {
	tries := []bool{true}
	if os.Geteuid() == 0 {
		tries = []bool{false, true}
	}
	for _, user = range tries {
		if why = probeInit(user); why == "" {
			return user, ""
		}
	}
	return tries[0], why
}

// probeInit starts an init in probe mode and returns why it failed, or "".
func probeInit(user bool) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, selfExe)
	cmd.Args = initArgs(initConfig{Ruleset: -1, Lifeline: -1, Probe: true}, nil, "true", []string{"true"})
	cmd.Env = []string{}
	cmd.SysProcAttr = namespaceAttr(nil, false, user)
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil:
		return ""
	case strings.TrimSpace(string(out)) != "":
		return strings.TrimSpace(string(out))
	}
	return "cannot start a process in new namespaces: " + err.Error()
}
