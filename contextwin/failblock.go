package contextwin

import (
	"regexp"
	"strings"
)

// The failure block of a shed command's output: a test or build log puts
// the failing test, its assertion and the run's summary line a few lines
// above its end (pytest, tap, go test, jest, cargo: 8–14 lines), where the
// closing lines alone miss them. The lines that read as a failure or a
// verdict are found by their words, whatever the tool, and kept with a
// little context, within a bound.
const (
	failBlockLines = 14 // lines of the failure block at most
	failBefore     = 2  // context lines kept before a failure line
	failAfter      = 1  // and after it
)

// failMark finds a word of a failure or a verdict: FAIL, FAILED,
// failed, Error: or error[…], panic: or panicked, assert, expected,
// Traceback, Exception, not ok (tap), the marks jest and mocha print, and
// the coverage figure. The words stand alone, so that a passing test
// named TestFailedNote or TestChatErrors is not one.
var failMark = regexp.MustCompile(`\b(?:FAIL(?:ED|URES?)?|[Ff]ailed|failures?|ERROR|panicked|[Aa]ssert(?:ion)?|[Ee]xpected|not ok|Traceback|Exception)\b|\b(?:\w*Error|error)[:\[]|\b(?:panic:|coverage:)|✕|✗|●`)

// failureLine reports whether line reads as a failure or a verdict; an
// "E   " line is pytest's explanation of an assertion.
func failureLine(line string) bool {
	return strings.HasPrefix(line, "E  ") || strings.HasPrefix(line, "> ") || failMark.MatchString(line)
}

// failureBlock picks the lines of lines[from:to] (the output between the
// opening and the closing lines a summary keeps) that read as a failure
// or a verdict, each with failBefore lines before it and failAfter after,
// at most failBlockLines in all: half the bound from the end (the last
// failure and the summary line near it), the rest from the start (the
// first failure, often the cause). It returns their indices in order;
// blank lines are not counted.
func failureBlock(lines []string, from, to int) []int {
	var marks []int
	for i := from; i < to; i++ {
		if failureLine(lines[i]) {
			marks = append(marks, i)
		}
	}
	if len(marks) == 0 {
		return nil
	}
	picked := make(map[int]bool)
	take := func(m int) bool {
		for i := max(m-failBefore, from); i <= min(m+failAfter, to-1); i++ {
			if len(picked) >= failBlockLines {
				return false
			}
			if strings.TrimSpace(lines[i]) != "" {
				picked[i] = true
			}
		}
		return true
	}
	lo, hi := 0, len(marks)-1
	for lo <= hi && len(picked) < failBlockLines/2 {
		take(marks[hi])
		hi--
	}
	for lo <= hi && take(marks[lo]) {
		lo++
	}
	out := make([]int, 0, len(picked))
	for i := from; i < to; i++ {
		if picked[i] {
			out = append(out, i)
		}
	}
	return out
}
