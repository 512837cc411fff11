package agent

import (
	"encoding/json"
	"fmt"
	"sort"
)

// cacheLine is the REIKA_DEBUG line for one request: whether its prompt
// material was a pure append of the previous request's, or where it first
// differed, and what the engine says reprocessing cost.
func cacheLine(prev, cur []byte, starts []int, reprocessed, reused int, ms float64) string {
	where := divergence(prev, cur, starts)
	return fmt.Sprintf("prefix cache: %s; engine reprocessed %d tokens, reused %d, %.2f s", where, reprocessed, reused, ms/1000)
}

// divergence describes how cur relates to prev: "first request", "append
// (+N bytes)", or "diverged at message M byte B" (M counts the system
// prompt as message 0; the tool definitions come before it).
func divergence(prev, cur []byte, starts []int) string {
	if prev == nil {
		return "first request"
	}
	n := min(len(prev), len(cur))
	i := 0
	for i < n && prev[i] == cur[i] {
		i++
	}
	if i == len(prev) {
		return fmt.Sprintf("append (+%d bytes)", len(cur)-len(prev))
	}
	m := sort.Search(len(starts), func(k int) bool { return starts[k] > i }) - 1
	if m < 0 {
		return fmt.Sprintf("diverged in the tool definitions at byte %d", i)
	}
	return fmt.Sprintf("diverged at message %d byte %d", m, i-starts[m])
}

func jsonValid(s string) bool { return json.Valid([]byte(s)) }
