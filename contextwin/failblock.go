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
	// failBody is how many lines of a failure's body are kept besides:
	// the lines after a failure line indented deeper than it (tap's YAML
	// block after "not ok", go test's lines after "--- FAIL", a
	// traceback's frames), which say what failed and where.
	failBody = 12
	// failReach is how far above the closing lines a failure line may
	// stand for every line from it to them to be kept: its block whole
	// (tap's YAML up to "...", a traceback's last frames, what a runner
	// printed after the assertion, indented or not) and the run's summary
	// lines.
	failReach = 16
)

// failMark finds a word of a failure or a verdict: FAIL, FAILED,
// failed, Error: or error[…], panic: or panicked, assert, expected,
// Traceback, Exception, not ok (tap), the marks jest and mocha print, and
// the coverage figure. The words stand alone, so that a passing test
// named TestFailedNote or TestChatErrors is not one.
var failMark = regexp.MustCompile(`\b(?:FAIL(?:ED|URES?)?|[Ff]ailed|failures?|ERROR|panicked|[Aa]ssert(?:ion)?|[Ee]xpected|not ok|Traceback|Exception)\b|(?:Error|\berror)[:\[]|\b(?:panic:|coverage:)|✕|✗|●`)

// failureLine reports whether line reads as a failure or a verdict; an
// "E   " line is pytest's explanation of an assertion.
func failureLine(line string) bool {
	if len(line) > maxFailLine {
		return false // no test runner's line; and the expression would crawl through it
	}
	if strings.HasPrefix(line, "E  ") || strings.HasPrefix(line, "> ") {
		return true
	}
	// Most lines hold none of failMark's words: a scan for a piece of
	// each spares them the expression (a shed prices every line of every
	// log it may summarize).
	for _, h := range failHints {
		if strings.Contains(line, h) {
			return failMark.MatchString(line)
		}
	}
	return false
}

// failScan is how many lines from each end of a log's middle are searched
// for failures: a summary keeps the first and the last of them.
const failScan = 2000

// maxFailLine is the longest line read as a failure line.
const maxFailLine = 1024

// failHints are pieces of failMark's words, one of which every line it
// matches holds.
var failHints = []string{"FAIL", "ail", "ERROR", "anic", "ssert", "xpected", "not ok", "Traceback", "xception", "rror", "coverage:", "✕", "✗", "●"}

// failureBlock picks the lines of lines[from:to] (the output between the
// opening and the closing lines a summary keeps) that read as a failure
// or a verdict, each with failBefore lines before it and failAfter after,
// at most failBlockLines in all besides the lines from a failure in the
// last failReach on (or the last failure's body): half the bound from
// the end (the last failure and the summary line near it), the rest from
// the start (the first failure, often the cause). It returns their indices in order;
// blank lines are not counted.
func failureBlock(lines []string, from, to int) []int {
	var marks []int
	for i := from; i < to; i++ {
		if i == from+failScan && to-failScan > i {
			i = to - failScan // the middle of a long log: its first and last failures are what a summary keeps
		}
		if failureLine(lines[i]) {
			marks = append(marks, i)
		}
	}
	if len(marks) == 0 {
		return nil
	}
	picked := make(map[int]bool)
	// The failures near the end with every line from the first of them
	// on (failReach), else the body of the last failure that has one,
	// whole (within failBody): besides the bound.
	bodyN := 0
	for _, m := range marks {
		if to-m > failReach {
			continue
		}
		for k := m; k < to; k++ {
			if strings.TrimSpace(lines[k]) != "" {
				picked[k] = true
			}
		}
		bodyN = len(picked)
		break
	}
	for i := len(marks) - 1; i >= 0 && bodyN == 0; i-- {
		if body := failureBody(lines, marks[i], to); len(body) > 0 {
			for _, k := range body {
				picked[k] = true
			}
			bodyN = len(body)
		}
	}
	take := func(m int) bool {
		for i := max(m-failBefore, from); i <= min(m+failAfter, to-1); i++ {
			if len(picked) >= failBlockLines+bodyN {
				return false
			}
			if strings.TrimSpace(lines[i]) != "" {
				picked[i] = true
			}
		}
		return true
	}
	lo, hi := 0, len(marks)-1
	for lo <= hi && len(picked)-bodyN < failBlockLines/2 {
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

// failureBody is the lines after lines[m], up to to, indented deeper than
// it, at most failBody of them, blank ones skipped; none when the next
// line is not indented deeper.
func failureBody(lines []string, m, to int) []int {
	base := indentOf(lines[m])
	var out []int
	for k := m + 1; k < to && len(out) < failBody; k++ {
		if strings.TrimSpace(lines[k]) == "" {
			continue
		}
		if indentOf(lines[k]) <= base {
			break
		}
		out = append(out, k)
	}
	return out
}

// indentOf is how many spaces and tabs a line starts with.
func indentOf(line string) int {
	return len(line) - len(strings.TrimLeft(line, " \t"))
}
