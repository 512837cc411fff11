package lsp_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/lsp/lsptest"
)

// rssMB is the resident memory of process pid, in MiB.
func rssMB(b *testing.B, pid int) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(rest), "%f", &kb)
			return kb / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// The server's resident memory before and after a 50 MB document it
// refuses (over 32 MiB): the memory the message took goes back to the
// system within a few seconds. (It stayed at 238 MB from 16 MB.)
func BenchmarkRefusedHugeDocument(b *testing.B) {
	huge := strings.Repeat("// a line of a generated file, the same again\n", 50<<20/46)
	var before, after float64
	for b.Loop() {
		e := lsptest.Start(b, lsptest.Config{Caps: lsptest.Full(), Binary: reikaBinary(b),
			Files: map[string]string{"huge.go": huge, "small.go": "package small\n"}})
		e.Open("small.go")
		pid := e.ServerPID()
		time.Sleep(500 * time.Millisecond) // the server settles after its start
		before = rssMB(b, pid)
		from := e.Mark()
		e.Open("huge.go")
		e.WaitLine(from, `does not keep .*huge.go`)
		after = rssMB(b, pid)
		for deadline := time.Now().Add(10 * time.Second); after > before+32 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			after = rssMB(b, pid)
		}
		e.Shutdown()
	}
	b.ReportMetric(before, "rss-MB-before")
	b.ReportMetric(after, "rss-MB-after")
}
