package tools

// When the only difference between the text the agent read and the text
// now is whole lines the user inserted (a line typed above the target,
// between the lines of its context), every byte of the old text is still
// there, in order: each hunk's place is known exactly, shifted by the
// inserted length when it lies below them. anchorByInsertion places the
// hunks so when the context rule of anchorHunks refused them; lines
// inserted among a hunk's own lines still refuse it.

// insertedLines reports whether cur is old with whole lines inserted at one
// place: at (a line start of old) and how many bytes.
func insertedLines(old, cur string) (at, n int, ok bool) {
	n = len(cur) - len(old)
	pre := commonPrefix(old, cur)
	if n <= 0 || pre+commonSuffix(old[pre:], cur[pre:]) < len(old) {
		return 0, 0, false
	}
	// The insertion may sit anywhere in a run of equal bytes: slide it
	// back to a line start, with a line break last.
	at = pre
	ins := cur[at : at+n]
	for !(ins[len(ins)-1] == '\n' && (at == 0 || old[at-1] == '\n')) {
		if at == 0 || old[at-1] != ins[len(ins)-1] {
			return 0, 0, false
		}
		ins = old[at-1:at] + ins[:len(ins)-1]
		at--
	}
	return at, n, true
}

// anchorByInsertion returns each hunk's start in cur when cur is old with
// whole lines inserted outside every hunk's own lines; ok is false
// otherwise.
func anchorByInsertion(old string, hunks []Hunk, cur string) (starts []int, ok bool) {
	at, n, ok := insertedLines(old, cur)
	if !ok || old == "" {
		// A file that was empty has nothing to place a change by.
		return nil, false
	}
	starts = make([]int, len(hunks))
	for i, h := range hunks {
		ls, le := contextStart(old, h.OldStart, 0), contextEnd(old, h.OldEnd, 0)
		switch {
		case at <= ls:
			starts[i] = h.OldStart + n
		case at >= le:
			starts[i] = h.OldStart
		default:
			return nil, false // among the hunk's own lines
		}
	}
	return starts, true
}
