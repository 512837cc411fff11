package contextwin

import (
	"fmt"
	"strings"
	"testing"
)

// noise is n lines of a passing run's chatter.
func noise(n int, f string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(strings.ReplaceAll(f, "#", string(rune('a'+i%26))) + "\n")
	}
	return b.String()
}

// TestShedLogKeepsItsFailureBlock: a shed test log keeps the failing
// test's name, its assertion and the run's summary line, which each
// format prints 8–14 lines above the end, not only its first and last
// lines.
func TestShedLogKeepsItsFailureBlock(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      []string
	}{
		{"pytest", "============ test session starts ============\nplatform linux -- Python 3.12.1, pytest-8.0.0\ncollected 120 items\n\n" +
			noise(150, "tests/test_#.py ........                [ 50%]") +
			"================= FAILURES =================\n_____________ test_parse_dates _____________\n\n    def test_parse_dates():\n>       assert parse('2024-02-30') is None\nE       AssertionError: assert datetime(2024, 3, 1) is None\n\ntests/test_dates.py:41: AssertionError\n" +
			"---------- coverage: platform linux, python 3.12.1 ----------\nName              Stmts   Miss  Cover\n" + noise(6, "src/mod_#.py         40      2    95%") +
			"TOTAL               400     12    97%\n========= short test summary info =========\nFAILED tests/test_dates.py::test_parse_dates - AssertionError\n======= 1 failed, 119 passed in 3.21s =======\n",
			[]string{"test_parse_dates", "AssertionError: assert datetime(2024, 3, 1) is None", "1 failed, 119 passed"}},
		{"go test", noise(150, "=== RUN   TestOk#\n--- PASS: TestOk# (0.00s)") +
			"=== RUN   TestRound\n    round_test.go:22: Round(2.5) = 2, want 3\n--- FAIL: TestRound (0.00s)\n" + noise(9, "=== RUN   TestLate#\n--- PASS: TestLate# (0.00s)") +
			"FAIL\ncoverage: 81.2% of statements\nFAIL\texample.com/calc\t0.012s\nok  \texample.com/other\t0.020s\nok  \texample.com/more\t0.011s\nok  \texample.com/last\t0.010s\n",
			[]string{"Round(2.5) = 2, want 3", "--- FAIL: TestRound", "coverage: 81.2% of statements"}},
		{"jest", "> app@1.0.0 test\n> jest\n\n" + noise(150, " PASS  src/#.test.js") +
			" FAIL  src/sum.test.js\n  ● sum › adds two numbers\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: 4\n    Received: 5\n\n      at Object.<anonymous> (src/sum.test.js:7:23)\n\n" +
			"Test Suites: 1 failed, 150 passed, 151 total\nTests:       1 failed, 300 passed, 301 total\nSnapshots:   0 total\nTime:        4.2 s\nRan all test suites.\n" + noise(6, "info: cleanup #"),
			[]string{"● sum › adds two numbers", "Expected: 4", "Tests: 1 failed, 300 passed, 301 total"}},
		{"cargo", "   Compiling calc v0.1.0\n    Finished test profile\n     Running unittests src/lib.rs\n\nrunning 160 tests\n" + noise(150, "test tests::case_# ... ok") +
			"test tests::rounds_half ... FAILED\n\nfailures:\n\n---- tests::rounds_half stdout ----\nthread 'tests::rounds_half' panicked at src/lib.rs:40:9:\nassertion `left == right` failed\n  left: 2\n right: 3\n\nfailures:\n    tests::rounds_half\n\n" +
			"test result: FAILED. 159 passed; 1 failed; 0 ignored\n\n" + noise(6, "note: run with `RUST_BACKTRACE=1` #"),
			[]string{"tests::rounds_half", "assertion `left == right` failed", "test result: FAILED. 159 passed; 1 failed"}},
		{"tap", "TAP version 13\n" + noise(150, "ok - case #") +
			"not ok 151 - rounds half up\n  ---\n  operator: equal\n  expected: 3\n  actual:   2\n  ...\n" + noise(8, "ok - late #") + "1..159\n# tests 159\n# pass  158\n# fail  1\n",
			[]string{"not ok 151 - rounds half up", "expected: 3", "# fail 1"}},
	} {
		m := Message{Role: Tool, Content: tc.log, Payload: Payload{Kind: Command, Path: "make test"}}
		sum, keep := Summarize(m)
		if keep {
			t.Errorf("%s: a %d-byte log kept whole", tc.name, len(tc.log))
		}
		if len(sum) > maxSummary {
			t.Errorf("%s: summary of %d bytes, over %d", tc.name, len(sum), maxSummary)
		}
		for _, w := range tc.want {
			if !strings.Contains(sum, w) {
				t.Errorf("%s: the summary lacks %q:\n%s", tc.name, w, sum)
			}
		}
	}
}

// TestFailureBlockIsBounded: a log full of failures keeps at most
// failBlockLines of them besides the lines of the last failReach, the
// first and the last among them.
func TestFailureBlockIsBounded(t *testing.T) {
	log := "start\n" + noise(400, "FAIL case # broke\ncontext line #") + "end 1\nend 2\nend 3\nend 4\nend 5\n"
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	got := failureBlock(lines, 1, len(lines)-5)
	if len(got) == 0 || len(got) > failBlockLines+failReach {
		t.Fatalf("failure block of %d lines, want 1 to %d", len(got), failBlockLines+failReach)
	}
	if got[0] != 1 || got[len(got)-1] != len(lines)-6 {
		t.Errorf("failure block spans lines %d to %d, want the first failure (1) to the last line before the tail (%d)", got[0], got[len(got)-1], len(lines)-6)
	}
	sum, _ := Summarize(Message{Role: Tool, Content: log, Payload: Payload{Kind: Command}})
	if len(sum) > maxSummary {
		t.Errorf("summary of %d bytes, over %d", len(sum), maxSummary)
	}
}

// TestFailureLine: the words of a failure stand alone; a passing test
// named after a failure is not one.
func TestFailureLine(t *testing.T) {
	for line, want := range map[string]bool{
		"--- FAIL: TestRound (0.00s)":                  true,
		"coverage: 81.2% of statements":                true,
		"TypeError: x is undefined":                    true,
		"error[E0308]: mismatched types":               true,
		"panic: runtime error: index out of range":     true,
		"not ok 3 - adds":                              true,
		"=== RUN   TestFailedNoteFoldsWithoutOne":      false,
		"--- PASS: TestChatErrors/one_round_0 (0.03s)": false,
		"ok  \texample.com/calc\t0.012s":               false,
	} {
		if got := failureLine(line); got != want {
			t.Errorf("failureLine(%q) = %v, want %v", line, got, want)
		}
	}
}

// A failure's body — the lines after it indented deeper, such as tap's
// YAML block after "not ok" with its stack — is kept whole (within
// failBody), so what it says ten lines below the failure line survives a
// shed.
func TestFailureBodyKept(t *testing.T) {
	var b strings.Builder
	b.WriteString("TAP version 13\n")
	for i := 1; i < 300; i++ {
		fmt.Fprintf(&b, "ok %d - test/a.js > case %d # time=1.0ms\n", i, i)
	}
	b.WriteString("not ok 300 - test/find.js > processData symlink\n  ---\n  duration_ms: 12.010\n  failureType: 'testCodeFailure'\n" +
		"  error: 'Expected values to be strictly equal:\\n\\n26 !== 82\\n'\n  code: 'ERR_ASSERTION'\n  stack: |-\n" +
		"    TestContext.<anonymous> (test/find.js:355:6)\n    processData (lib/find.js:255:15)\n    processData (lib/find.js:666:22)\n" +
		"    heap after the run: rss 617 MB\n  ...\n1..300\n# tests 300\n# suites 0\n# pass 299\n# fail 1\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 45393.860\n")
	sum, _ := Summarize(Message{Role: Tool, Content: b.String(), Payload: Payload{Kind: Command, Path: "npm test"}})
	for _, want := range []string{"not ok 300 - test/find.js > processData symlink", "26 !== 82", "lib/find.js:666:22", "rss 617 MB", "# fail 1"} {
		if !strings.Contains(sum, want) {
			t.Errorf("the summary lacks %q:\n%s", want, sum)
		}
	}
}
