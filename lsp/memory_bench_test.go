package lsp_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika/agent/sim"
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

// The wait from an ask to its first round with 1,000 documents open in
// the editor (20 KB each, every one new to the repo map): the map takes
// them all before the first request, and that stays a few seconds.
func BenchmarkFirstAskWith1000Documents(b *testing.B) {
	const n = 1000
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("p%04d/f.go", i)] = benchSource(fmt.Sprintf("P%04d_", i), 20<<10)
	}
	var wait time.Duration
	for b.Loop() {
		e := lsptest.Start(b, lsptest.Config{Caps: lsptest.Full(), Files: files,
			Engine: sim.Config{Ctx: 32768}, Env: map[string]string{"REIKA_WARMUP": "0"}, Timeout: 10 * time.Minute})
		for i := range n {
			e.Open(fmt.Sprintf("p%04d/f.go", i))
		}
		from := e.Mark()
		start := time.Now()
		if _, err := e.Exec("reika.ask", map[string]any{"instruction": "What is in p0000?"}); err != nil {
			b.Fatal(err)
		}
		e.WaitLine(from, `round 1`)
		wait = time.Since(start)
		e.WaitRunEnd(from)
		e.Shutdown()
	}
	b.ReportMetric(wait.Seconds(), "s-to-round-1")
}

// benchSource is Go source of about size bytes whose functions are named
// after tag and call a few shared helpers.
func benchSource(tag string, size int) string {
	var sb strings.Builder
	sb.WriteString("package bench\n\nimport \"fmt\"\n\n")
	for i := 0; sb.Len() < size; i++ {
		fmt.Fprintf(&sb, "// %s%d reports whether n is worth keeping.\nfunc %s%d(n int) bool {\n\tif n > %d {\n\t\treturn Helper%d(n - 1)\n\t}\n\tfmt.Println(\"n is\", n)\n\treturn n%%2 == 0\n}\n\n", tag, i, tag, i, i, i%7)
	}
	return sb.String()
}
