package contextwin

import (
	"strconv"
	"strings"
)

// Diffs.

// diffFile is one file of a unified diff.
type diffFile struct {
	path       string
	verb       string // Edited, Created or Deleted
	hunks      []string
	nHunks     int
	adds, dels int
}

// diffPath is the path of a "--- " or "+++ " header: without its "a/" or
// "b/" and the timestamp some tools add after a tab.
func diffPath(h string) string {
	h, _, _ = strings.Cut(h, "\t")
	h = strings.TrimSpace(h)
	if strings.HasPrefix(h, "a/") || strings.HasPrefix(h, "b/") {
		h = h[2:]
	}
	return h
}

// parseDiff reads the files and hunks of a unified diff (or of an edit
// tool's report that holds one), keeping at most maxHunks hunk headers in
// all. Content with no file headers is about fallback.
func parseDiff(content, fallback string) []diffFile {
	var files []diffFile
	kept := 0
	cur := func() *diffFile {
		if len(files) == 0 {
			files = append(files, diffFile{path: fallback, verb: "Edited"})
		}
		return &files[len(files)-1]
	}
	oldPath := ""
	inHunk := false
	for line := range strings.Lines(content) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			inHunk = false
		case !inHunk && strings.HasPrefix(line, "--- "):
			oldPath = diffPath(line[4:])
		case !inHunk && strings.HasPrefix(line, "+++ "):
			f := diffFile{path: diffPath(line[4:]), verb: "Edited"}
			switch {
			case oldPath == "/dev/null":
				f.verb = "Created"
			case f.path == "/dev/null":
				f.path, f.verb = oldPath, "Deleted"
			}
			files = append(files, f)
		case strings.HasPrefix(line, "@@"):
			inHunk = true
			f := cur()
			f.nHunks++
			if kept < maxHunks {
				f.hunks = append(f.hunks, "  "+oneLine(line, maxSummaryLine-2))
				kept++
			}
		case inHunk && strings.HasPrefix(line, "+"):
			cur().adds++
		case inHunk && strings.HasPrefix(line, "-"):
			cur().dels++
		}
	}
	return files
}

func summarizeDiff(content string, p Payload) string {
	s := newSummary(p, "read the file for its current text")
	files := parseDiff(content, p.Path)
	if len(files) == 0 {
		s.add("Edited "+label(p.Path, "a file"), 0)
		if o := opening(content, min(openingBytes, s.room(1))); o != "" {
			s.add(o, 0)
		}
		return s.String()
	}
	// File headers and hunk headers in order, until one does not fit.
	leftFiles, leftHunks := len(files), 0
	for _, f := range files {
		leftHunks += f.nHunks
	}
	for _, f := range files {
		head := f.verb + " " + label(f.path, "a file")
		if f.adds > 0 || f.dels > 0 {
			head += " (+" + strconv.Itoa(f.adds) + " -" + strconv.Itoa(f.dels) + ")"
		}
		if !s.add(head, moreReserve) {
			break
		}
		leftFiles--
		full := false
		for _, h := range f.hunks {
			if !s.add(h, moreReserve) {
				full = true
				break
			}
			leftHunks--
		}
		if full {
			break
		}
	}
	switch {
	case leftFiles > 0:
		s.add(more(leftFiles, "file"), 0)
	case leftHunks > 0:
		s.add(more(leftHunks, "hunk"), 0)
	}
	return s.String()
}
