package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// Skip is a line of a transcript that was not read: damaged, cut short,
// or a record this version does not know.
type Skip struct {
	Line int    // 1-based
	What string // what was skipped, and why
	// Cut is set for a last line cut short (a crash while it was written):
	// the only damage a crash may cause.
	Cut bool
}

func (s Skip) String() string { return fmt.Sprintf("line %d: %s", s.Line, s.What) }

// known are the kinds of record this version reads.
var known = map[Kind]bool{
	KindMeta: true, KindMessage: true, KindNote: true, KindEvent: true, KindUsage: true,
	KindPrefix: true, KindPlan: true, KindCompact: true, KindAbandon: true, KindOverflow: true,
	KindRecapEdit: true, KindMapUpdate: true, KindWarmup: true, KindCheckpoint: true, KindSlot: true,
	KindMode: true, KindModel: true,
}

// Load reads a transcript. A last line cut short by a crash is ignored; a
// damaged line elsewhere is an error that names it (Read skips it).
func Load(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	return Parse(data)
}

// Read reads a transcript, skipping what it cannot read (see Scan).
func Read(path string) ([]Record, []Skip, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read transcript: %w", err)
	}
	recs, skipped := Scan(data)
	return recs, skipped, nil
}

// Parse reads transcript lines. A last line cut short is ignored; any
// other line Scan would skip is an error that names it.
func Parse(data []byte) ([]Record, error) {
	recs, skipped := Scan(data)
	for _, s := range skipped {
		if !s.Cut {
			return recs, fmt.Errorf("transcript %s", s)
		}
	}
	return recs, nil
}

// Scan reads transcript lines, skipping a damaged line, a record of a kind
// this version does not know, and a last line cut short; it says which
// it skipped.
func Scan(data []byte) ([]Record, []Skip) {
	recs, skipped, _ := scan(data)
	return recs, skipped
}

// scan is Scan, and the length of data up to the end of its last whole
// line: what a Writer appends after.
func scan(data []byte) (recs []Record, skipped []Skip, whole int) {
	for n, off := 1, 0; off < len(data); n++ {
		end := bytes.IndexByte(data[off:], '\n')
		complete := end >= 0
		if !complete {
			end = len(data) - off
		}
		line := data[off : off+end]
		next := off + end
		if complete {
			next++
		}
		rec, what := readLine(line)
		switch {
		case what == "":
			recs = append(recs, rec)
			if !complete {
				// Whole but for its newline: kept, and the next record
				// starts a line of its own (a Writer sees it unended).
				return recs, skipped, len(data)
			}
		case !complete:
			skipped = append(skipped, Skip{Line: n, What: fmt.Sprintf("a record cut short by a crash (%d bytes)", len(line)), Cut: true})
			return recs, skipped, off
		case what != "blank":
			skipped = append(skipped, Skip{Line: n, What: what})
		}
		off = next
		whole = off
	}
	return recs, skipped, whole
}

// readLine reads one line: what skips it ("blank" for an empty line),
// "" when it is a record.
func readLine(line []byte) (Record, string) {
	var rec Record
	if len(bytes.TrimSpace(line)) == 0 {
		return rec, "blank"
	}
	if err := json.Unmarshal(line, &rec); err != nil {
		if !json.Valid(line) {
			return rec, fmt.Sprintf("a damaged line (%v)", err)
		}
		return rec, fmt.Sprintf("a record this version cannot read, perhaps from a newer one (%v)", err)
	}
	if !known[rec.Kind] {
		return rec, fmt.Sprintf("a %q record, a kind this version does not know (from a newer version?)", rec.Kind)
	}
	return rec, ""
}
