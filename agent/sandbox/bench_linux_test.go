package sandbox

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStart compares starting and waiting for bash -c true plainly
// and through Policy.Start: in namespaces without the network (the
// default), in namespaces with it (no network namespace), and without
// namespaces (Landlock, the filter and the capabilities only, as where
// namespaces cannot be made). The target is at most 5 ms more per command.
func BenchmarkStart(b *testing.B) {
	needLandlock(b)
	dir := b.TempDir()
	p := Policy{Workspace: []string{dir}, Temp: b.TempDir(), Home: "/root"}
	withNet := p
	withNet.Network = true
	start := map[string]func(*exec.Cmd) error{
		"plain":                  (*exec.Cmd).Start,
		"sandboxed":              p.Start,
		"sandboxed-network":      withNet.Start,
		"sandboxed-no-namespace": p.Start,
	}
	for _, name := range []string{"plain", "sandboxed", "sandboxed-network", "sandboxed-no-namespace"} {
		b.Run(name, func(b *testing.B) {
			noNamespaces = name == "sandboxed-no-namespace"
			defer func() { noNamespaces = false }()
			cpu := cpuTime()
			for b.Loop() {
				cmd := exec.Command("bash", "-c", "true")
				cmd.Dir = dir
				if err := start[name](cmd); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the processor time this process and its children have used,
// which a busy machine changes less than the time on the clock.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		syscall.Getrusage(who, &ru)
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}

// BenchmarkRuleset measures building the ruleset alone.
func BenchmarkRuleset(b *testing.B) {
	needLandlock(b)
	root, err := filepath.Abs("../..") // this repository: a workspace with a few dozen entries
	if err != nil {
		b.Fatal(err)
	}
	p := Policy{Workspace: []string{root}, Temp: b.TempDir(), Home: "/root"}
	for b.Loop() {
		fd, err := p.ruleset(Probe().ABI)
		if err != nil {
			b.Fatal(err)
		}
		closeFD(fd)
	}
}
