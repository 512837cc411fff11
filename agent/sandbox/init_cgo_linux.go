//go:build cgo

package sandbox

// The init in C: where the binary is built with cgo, a constructor runs
// the init before the Go runtime starts, which saves most of what a
// command's init costs (the runtime and the packages' initialisation are
// about two thirds of it; BenchmarkStart with CGO_ENABLED=0 and without). It does what runInit does, step for
// step, and reads the same arguments (initArgs), with the socket filter
// handed to it as hexadecimal (initConfig.Filter): the Go init is the
// reference, and the tests run against both (CGO_ENABLED=0 for the Go one).

/*
#cgo CFLAGS: -O2 -Wall

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

#define INIT_EXIT 125

struct reika_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct reika_init {
	int ruleset, lifeline, network, probe;
	struct sock_filter filter[256];
	unsigned short filter_len;
	char **env, **argv;
};

static int reika_fail(const char *what) {
	fprintf(stderr, "sandbox init: %s: %s\n", what, strerror(errno));
	return -1;
}

// reika_cmdline reads this process's arguments; NULL when it is no init.
static char **reika_cmdline(int *argc) {
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0) return NULL;
	char head[32];
	ssize_t n = read(fd, head, sizeof head);
	if (n < 19 || memcmp(head, "reika-sandbox-init", 19) != 0) { close(fd); return NULL; }
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	memcpy(buf, head, n);
	len = n;
	for (;;) {
		if (len == cap) buf = realloc(buf, cap *= 2);
		n = read(fd, buf + len, cap - len);
		if (n <= 0) break;
		len += n;
	}
	close(fd);
	int count = 0;
	for (size_t i = 0; i < len; i++) count += buf[i] == 0;
	char **argv = calloc(count + 1, sizeof *argv);
	char *p = buf;
	for (int i = 0; i < count; i++) { argv[i] = p; p += strlen(p) + 1; }
	*argc = count;
	return argv;
}

static int reika_hex(char c) {
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// reika_parse reads what initArgs wrote (argv without the name).
static int reika_parse(int argc, char **argv, struct reika_init *in) {
	char net[8] = "", probe[8] = "", hex[4200] = "";
	if (argc < 2 || sscanf(argv[0], "ruleset=%d,lifeline=%d,network=%7[a-z],probe=%7[a-z],filter=%4199[0-9a-f]",
			&in->ruleset, &in->lifeline, net, probe, hex) < 4) {
		fprintf(stderr, "sandbox init: bad configuration\n");
		return -1;
	}
	in->network = strcmp(net, "true") == 0;
	in->probe = strcmp(probe, "true") == 0;
	size_t n = strlen(hex) / 16;
	if (strlen(hex) % 16 != 0 || n > 256) {
		fprintf(stderr, "sandbox init: bad filter\n");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char b[8];
		for (int j = 0; j < 8; j++) b[j] = reika_hex(hex[16 * i + 2 * j]) << 4 | reika_hex(hex[16 * i + 2 * j + 1]);
		memcpy(&in->filter[i], b, 8);
	}
	in->filter_len = n;
	int nenv = atoi(argv[1]);
	if (nenv < 0 || argc < 2 + nenv + 2) {
		fprintf(stderr, "sandbox init: bad arguments\n");
		return -1;
	}
	in->env = calloc(nenv + 1, sizeof(char *));
	memcpy(in->env, argv + 2, nenv * sizeof(char *));
	in->argv = argv + 2 + nenv;
	return 0;
}

// reika_namespaces is setUpNamespaces.
static int reika_namespaces(int network) {
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) return reika_fail("cannot make the mounts private");
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) return reika_fail("cannot mount /proc");
	if (network) return 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) return reika_fail("loopback");
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	int err = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (err == 0) {
		ifr.ifr_flags |= IFF_UP;
		err = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return err < 0 ? reika_fail("cannot bring up the loopback") : 0;
}

// reika_drop_caps is dropCapabilities.
static int reika_drop_caps(void) {
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	if (syscall(SYS_capget, &hdr, data) < 0) return reika_fail("cannot read the capabilities");
	if (data[0].effective & (1u << CAP_SETPCAP)) {
		for (int c = 0; c < 64; c++) {
			if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == 0) continue;
			if (errno == EINVAL) break;
			return reika_fail("cannot drop a capability");
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) return reika_fail("cannot clear the ambient capabilities");
	memset(data, 0, sizeof data);
	if (syscall(SYS_capset, &hdr, data) < 0) return reika_fail("cannot drop the capabilities");
	return 0;
}

// reika_restrict is the rest of startCommand before the start: the
// namespace's /proc granted reading, no_new_privs, Landlock, the filter.
static int reika_restrict(struct reika_init *in) {
	if (reika_drop_caps() < 0) return -1;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) return reika_fail("dumpable");
	int proc = open("/proc", O_PATH | O_CLOEXEC);
	if (proc < 0) return reika_fail("/proc");
	struct reika_path_beneath attr = {(1ull << 0) | (1ull << 2) | (1ull << 3), proc}; // execute, read file, read dir
	long err = syscall(__NR_landlock_add_rule, in->ruleset, 1, &attr, 0);
	close(proc);
	if (err < 0) return reika_fail("landlock_add_rule /proc");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return reika_fail("cannot set no_new_privs");
	if (syscall(__NR_landlock_restrict_self, in->ruleset, 0) < 0) return reika_fail("landlock_restrict_self");
	if (in->filter_len > 0) {
		struct sock_fprog prog = {in->filter_len, in->filter};
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) return reika_fail("seccomp filter");
	}
	return 0;
}

// reika_reap is reap and watchLifeline: it returns the command's status.
static int reika_reap(pid_t pid, int sfd, int lifeline) {
	struct pollfd fds[2] = {{sfd, POLLIN, 0}, {lifeline, POLLIN, 0}};
	for (;;) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR) continue;
			return INIT_EXIT;
		}
		if (fds[1].revents) {
			char b;
			if (read(lifeline, &b, 1) == 0 || (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL))) return INIT_EXIT;
		}
		struct signalfd_siginfo si;
		if (!(fds[0].revents & POLLIN) || read(sfd, &si, sizeof si) != sizeof si) continue;
		if (si.ssi_signo != SIGCHLD) {
			kill(pid, si.ssi_signo);
			continue;
		}
		int st;
		pid_t got;
		while ((got = waitpid(-1, &st, WNOHANG)) > 0) {
			if (got != pid) continue;
			return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
		}
	}
}

// reika_init_main is runInit.
static int reika_init_main(int argc, char **argv) {
	struct reika_init in;
	memset(&in, 0, sizeof in);
	if (reika_parse(argc, argv, &in) < 0 || reika_namespaces(in.network) < 0) return INIT_EXIT;
	if (in.probe) return 0;
	if (reika_restrict(&in) < 0) return INIT_EXIT;
	fcntl(in.ruleset, F_SETFD, FD_CLOEXEC);
	fcntl(in.lifeline, F_SETFD, FD_CLOEXEC);
	sigset_t mask, old;
	sigemptyset(&mask);
	int sigs[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT};
	for (int i = 0; i < 5; i++) sigaddset(&mask, sigs[i]);
	sigprocmask(SIG_BLOCK, &mask, &old);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) return reika_fail("signalfd"), INIT_EXIT;
	pid_t pid = fork();
	if (pid < 0) return reika_fail("fork"), INIT_EXIT;
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		execve(in.argv[0], in.argv + 1, in.env);
		fprintf(stderr, "reika sandbox: cannot start %s: %s\n", in.argv[0], strerror(errno));
		_exit(INIT_EXIT);
	}
	return reika_reap(pid, sfd, in.lifeline);
}

__attribute__((constructor)) static void reika_sandbox_init(void) {
	int argc;
	char **argv = reika_cmdline(&argc);
	if (argv != NULL) _exit(reika_init_main(argc - 1, argv + 1));
}
*/
import "C"
