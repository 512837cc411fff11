package engine

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// SameTools reports whether two lists of tool definitions are the same as
// a request carries them, byte for byte.
func SameTools(a, b []Tool) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// ToolChanges says which tools differ from old to now, as the user reads
// it ("added: a, b; removed: none"); a definition that changed is both
// added and removed.
func ToolChanges(old, now []Tool) string {
	in := func(list []Tool, d Tool) bool {
		return slices.ContainsFunc(list, func(x Tool) bool { return SameTools([]Tool{x}, []Tool{d}) })
	}
	var added, removed []string
	for _, d := range now {
		if !in(old, d) {
			added = append(added, d.Name)
		}
	}
	for _, d := range old {
		if !in(now, d) {
			removed = append(removed, d.Name)
		}
	}
	return "added: " + orNone(added) + "; removed: " + orNone(removed)
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
