package sandbox

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock decides what a command may open, bind and connect over TCP; it
// does not see unix sockets by path (a D-Bus session bus, on which
// `systemd-run --user` starts anything outside the sandbox; docker.sock; an
// ssh or gpg agent), UDP or raw sockets, and an io_uring performs socket
// operations without the system calls a filter sees. So a seccomp filter,
// on the same thread before the command starts, refuses with EACCES:
//
//   - socket(AF_UNIX, …) always (socketpair, which pipes between a
//     program's own processes, stays allowed);
//   - socket(AF_INET or AF_INET6, anything but SOCK_STREAM, …) unless the
//     network is allowed: no DNS, no UDP, no raw sockets (TCP is
//     Landlock's);
//   - io_uring_setup, and every system call of another ABI than the
//     binary's own (x32, 32-bit compat): their numbers would slip past the
//     checks above, so 32-bit programs do not run in the sandbox.
//
// On architectures other than amd64 and arm64 there is no filter, and
// Status.Line says so.

// seccompArch is the audit architecture of this build, 0 where the filter
// is not built.
var seccompArch = map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]

// x32Bit marks the x32 ABI's system call numbers on amd64.
const x32Bit = 0x40000000

// seccompData's offsets (struct seccomp_data): nr, arch, then args at 16,
// each 8 bytes, read here as their low 32 bits (little-endian).
const (
	offNr    = 0
	offArch  = 4
	offArg0  = 16
	offArg1  = 24
	retAllow = 0x7fff0000
	retDeny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
)

// socketFilter is the program for one command.
func socketFilter(network bool) []unix.SockFilter {
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		and = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	// The program, with its jumps counted to the two returns at its end
	// (allow, then deny).
	p := []unix.SockFilter{
		stmt(ld, offArch),
		jump(jeq, seccompArch, 1, 0), // the binary's own ABI
		stmt(ret, retDeny),
		stmt(ld, offNr),
	}
	rest := []unix.SockFilter{
		jump(jeq, unix.SYS_IO_URING_SETUP, 0, 1),
		stmt(ret, retDeny),
		jump(jeq, unix.SYS_SOCKET, 1, 0),
		stmt(ret, retAllow),
		stmt(ld, offArg0),
		jump(jeq, unix.AF_UNIX, 0, 1),
		stmt(ret, retDeny),
	}
	if runtime.GOARCH == "amd64" {
		p = append(p, jump(jge, x32Bit, 0, 1), stmt(ret, retDeny))
	}
	p = append(p, rest...)
	if !network {
		p = append(p,
			jump(jeq, unix.AF_INET, 1, 0),
			jump(jeq, unix.AF_INET6, 0, 3),
			stmt(ld, offArg1),
			stmt(and, 0xf), // the type without SOCK_CLOEXEC, SOCK_NONBLOCK
			jump(jeq, unix.SOCK_STREAM, 0, 1),
		)
	}
	return append(p, stmt(ret, retAllow), stmt(ret, retDeny))
}

// filterSockets installs socketFilter on the calling thread, which must be
// locked and have no_new_privs; the command inherits it. Where there is no
// filter for the architecture it does nothing.
func filterSockets(network bool) error {
	if seccompArch == 0 {
		return nil
	}
	prog := socketFilter(network)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// prctl, not seccomp(2) with TSYNC: the filter is for this thread.
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}
