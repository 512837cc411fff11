// Package testslow is the one place the tests read how slow the machine
// is: REIKA_TEST_SLOW, a factor (1 when unset) by which every deadline a
// test sets for a condition it waits for is multiplied. A deadline is the
// longest wait before a test gives up on something that should happen;
// on a machine busy with other work (two cores shared with a build, a CI
// runner) everything takes longer, and a test must then wait longer, not
// fail.
//
//	REIKA_TEST_SLOW=3 go test ./lsp/...
//
// A test scales its deadline with Scale:
//
//	deadline := time.Now().Add(testslow.Scale(10 * time.Second))
//
// go test's own -timeout is not scaled: give it on the command line.
// Safe for concurrent use.
package testslow

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"time"
)

// Env is the variable the factor is read from.
const Env = "REIKA_TEST_SLOW"

// Factor is REIKA_TEST_SLOW as a number, 1 when it is unset or empty. A
// value that is not a number of at least 1 panics with what to set: a
// test run must not silently ignore it.
func Factor() float64 {
	once.Do(func() { factor, factorErr = parse(os.Getenv(Env)) })
	if factorErr != nil {
		panic(factorErr)
	}
	return factor
}

var (
	once      sync.Once
	factor    float64
	factorErr error
)

// parse reads a factor; "" is 1.
func parse(s string) (float64, error) {
	if s == "" {
		return 1, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 1 {
		return 0, fmt.Errorf("%s=%q: want a number of at least 1, the factor by which the tests' deadlines grow (e.g. 3 on a busy machine)", Env, s)
	}
	return f, nil
}

// Scale is d times the factor.
func Scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) * Factor())
}
