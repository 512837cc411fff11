package sandbox

import (
	"encoding/hex"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock decides what a command may open, bind and connect over TCP; it
// does not see unix sockets by path (a D-Bus session bus, on which
// `systemd-run --user` starts anything outside the sandbox; docker.sock; an
// ssh or gpg agent), UDP, raw or other families' sockets, nor MPTCP on the
// kernels whose TCP rules miss it (landlock-lsm/linux#54), and an io_uring
// performs socket operations without the system calls a filter sees. So a
// seccomp filter, on the command before it starts, refuses with EACCES:
//
//   - socket() of every family but three: AF_UNIX is refused always
//     (socketpair, which pipes between a program's own processes, stays
//     allowed); AF_NETLINK only for NETLINK_ROUTE (the interfaces and
//     addresses that getaddrinfo and Go's net package read, never the
//     socket lists of sock_diag or the kernel's audit); AF_INET and
//     AF_INET6 as below;
//   - without the network, an AF_INET or AF_INET6 socket that is not
//     SOCK_STREAM with protocol 0 or IPPROTO_TCP: no DNS, no UDP, no raw
//     sockets, no MPTCP or SCTP (TCP is Landlock's); with the network, any;
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
	offArg2  = 32
	retAllow = 0x7fff0000
	retDeny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
)

// A bpfProgram is written with named places to jump to, which link
// resolves into the kernel's relative offsets.
type bpfProgram struct {
	ins    []unix.SockFilter
	labels map[string]int
	jumps  []bpfJump
}

// A bpfJump is a conditional jump at ins whose targets are labels.
type bpfJump struct {
	at      int
	yes, no string
}

const (
	bpfLoad    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfAnd     = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	bpfRet     = unix.BPF_RET | unix.BPF_K
	bpfEqual   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfAtLeast = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
)

// bpfNext names the instruction that follows a jump.
const bpfNext = ""

func (b *bpfProgram) stmt(code uint16, k uint32) {
	b.ins = append(b.ins, unix.SockFilter{Code: code, K: k})
}

// jump adds a jump on code with k to yes or no, labels or bpfNext.
func (b *bpfProgram) jump(code uint16, k uint32, yes, no string) {
	b.jumps = append(b.jumps, bpfJump{len(b.ins), yes, no})
	b.stmt(code, k)
}

// label names the next instruction.
func (b *bpfProgram) label(name string) { b.labels[name] = len(b.ins) }

// link resolves the jumps; a jump backwards, to an unknown label or
// farther than 255 instructions is a bug here, and panics in the tests.
func (b *bpfProgram) link() []unix.SockFilter {
	offset := func(from int, to string) uint8 {
		if to == bpfNext {
			return 0
		}
		at, ok := b.labels[to]
		d := at - from - 1
		if !ok || d < 0 || d > 255 {
			panic("sandbox: bad jump to " + to)
		}
		return uint8(d)
	}
	for _, j := range b.jumps {
		b.ins[j.at].Jt = offset(j.at, j.yes)
		b.ins[j.at].Jf = offset(j.at, j.no)
	}
	return b.ins
}

// socketFilter is the program for one command.
func socketFilter(network bool) []unix.SockFilter {
	b := &bpfProgram{labels: map[string]int{}}
	b.stmt(bpfLoad, offArch)
	b.jump(bpfEqual, seccompArch, bpfNext, "deny") // the binary's own ABI
	b.stmt(bpfLoad, offNr)
	if runtime.GOARCH == "amd64" {
		b.jump(bpfAtLeast, x32Bit, "deny", bpfNext)
	}
	b.jump(bpfEqual, unix.SYS_IO_URING_SETUP, "deny", bpfNext)
	b.jump(bpfEqual, unix.SYS_SOCKET, bpfNext, "allow")
	b.stmt(bpfLoad, offArg0)
	b.jump(bpfEqual, unix.AF_INET, "inet", bpfNext)
	b.jump(bpfEqual, unix.AF_INET6, "inet", bpfNext)
	b.jump(bpfEqual, unix.AF_NETLINK, bpfNext, "deny")
	b.stmt(bpfLoad, offArg2)
	b.jump(bpfEqual, unix.NETLINK_ROUTE, "allow", "deny")
	b.label("inet")
	if !network {
		b.stmt(bpfLoad, offArg1)
		b.stmt(bpfAnd, 0xf) // the type without SOCK_CLOEXEC, SOCK_NONBLOCK
		b.jump(bpfEqual, unix.SOCK_STREAM, bpfNext, "deny")
		b.stmt(bpfLoad, offArg2)
		b.jump(bpfEqual, 0, "allow", bpfNext)
		b.jump(bpfEqual, unix.IPPROTO_TCP, "allow", "deny")
	}
	b.label("allow")
	b.stmt(bpfRet, retAllow)
	b.label("deny")
	b.stmt(bpfRet, retDeny)
	return b.link()
}

// filterHex is socketFilter(network) as the kernel reads it, in
// hexadecimal, or "" where there is no filter.
func filterHex(network bool) string {
	if seccompArch == 0 {
		return ""
	}
	prog := socketFilter(network)
	return hex.EncodeToString(unsafe.Slice((*byte)(unsafe.Pointer(&prog[0])), len(prog)*int(unsafe.Sizeof(prog[0]))))
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
