package sandbox

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// probeMain lets the test binary serve as a probe inside the sandbox, run
// by TestMain before the tests: SANDBOX_SOCKET=family,type,protocol opens
// a socket, SANDBOX_SYSCALL names a privileged call to try (settimeofday,
// setuid), SANDBOX_READ a file to read, SANDBOX_INTERFACES=1 lists the
// network interfaces. It prints "ok" or the error and
// exits 0 or 1; it returns only when no probe is asked for.
func probeMain() {
	var err error
	switch {
	case os.Getenv("SANDBOX_SOCKET") != "":
		err = probeSocket(os.Getenv("SANDBOX_SOCKET"))
	case os.Getenv("SANDBOX_SYSCALL") != "":
		err = probeSyscall(os.Getenv("SANDBOX_SYSCALL"))
	case os.Getenv("SANDBOX_READ") != "":
		_, err = os.ReadFile(os.Getenv("SANDBOX_READ"))
	case os.Getenv("SANDBOX_INTERFACES") != "":
		err = probeInterfaces()
	default:
		return
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("ok")
	os.Exit(0)
}

// probeInterfaces prints the network interfaces with their flags, as
// netlink's route family tells them.
func probeInterfaces() error {
	ifaces, err := net.Interfaces()
	for _, i := range ifaces {
		fmt.Printf("%s %v\n", i.Name, i.Flags)
	}
	return err
}

// probeSocket opens and closes a socket of "family,type,protocol".
func probeSocket(spec string) error {
	var n [3]int
	for i, f := range strings.SplitN(spec, ",", 3) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return err
		}
		n[i] = v
	}
	fd, err := unix.Socket(n[0], n[1], n[2])
	if err != nil {
		return fmt.Errorf("socket(%d, %d, %d): %w", n[0], n[1], n[2], err)
	}
	return unix.Close(fd)
}

// probeSyscall tries a call only a capability allows, on this thread.
func probeSyscall(name string) error {
	switch name {
	case "settimeofday":
		tv := unix.NsecToTimeval(time.Now().UnixNano())
		return unix.Settimeofday(&tv)
	case "setuid":
		if _, _, errno := unix.RawSyscall(unix.SYS_SETUID, 65534, 0, 0); errno != 0 {
			return errno
		}
		return nil
	}
	return fmt.Errorf("no probe %q", name)
}
