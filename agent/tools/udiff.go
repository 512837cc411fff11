package tools

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/sourcegraph/go-diff/diff"
)

// A model's unified diff is read in three steps. extractDiff takes it out
// of a Markdown fence; repairDiff rewrites what the model wrote into a
// diff that go-diff v0.10.0 reads right; diff.ParseMultiFileDiff parses
// that into files and hunks. applyHunks then places each hunk by its
// context and removed lines, using line numbers only to choose among
// several places.
//
// repairDiff exists for the library's gaps, pinned in godiff_test.go and
// listed here: go-diff does not check a hunk's counts against its
// body (so the counts are written from the body), reads "@@-1,2 +1,2@@" as
// no hunk and a diff without ---/+++ lines as no file (so every hunk gets
// a canonical header and every file its header lines), takes a blank line
// for a body line and prose for the end of the file, dropping the hunks
// after it (so prose is left out and blank lines become blank context),
// reads no hunks for a file without a new name (so a missing name is
// written as a placeholder and read back as none), fails the whole diff on a file header whose text after a tab is not a
// timestamp (so that text is cut), and ends a hunk whose last two lines
// start with --- and +++ as if a file header followed (so those two lines
// trade places, which changes neither side of the hunk).

// dline is one line of a hunk body.
type dline struct {
	op   byte // ' ', '-' or '+'
	text string
}

// dhunk is one parsed hunk.
type dhunk struct {
	header    string // as the model wrote it, for messages
	origStart int    // the header's first old line (1-based), or the line an insertion follows
	hasHint   bool   // the header had line numbers
	lines     []dline
	origNoEOL bool // the old side's last line had no newline
	newNoEOL  bool // the new side's last line has none
}

// fileDiff is one file's part of a diff.
type fileDiff struct {
	oldName, newName string
	hunks            []dhunk
}

var hunkHeaderRe = regexp.MustCompile(`^@@+\s*-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?\s*@@+ ?(.*)$`)

var errNoHunks = errors.New("the diff has no hunks: write each change as a hunk that starts with an @@ line, with context lines starting with a space, removed lines with - and added lines with +")

// errMisread is go-diff failing on, or reading otherwise, the diff that
// repairDiff wrote: a gap of the library that the repairs do not cover.
// FuzzParseDiff checks that it does not happen.
var errMisread = errors.New("send the change as old_text and new_text instead")

// parseDiff reads a unified diff as a model writes it.
func parseDiff(text string) ([]fileDiff, error) {
	lines := strings.Split(extractDiff(strings.ReplaceAll(text, "\r\n", "\n")), "\n")
	r, err := repairDiff(lines)
	if err != nil {
		return nil, err
	}
	parsed, err := diff.ParseMultiFileDiff(r.text)
	if err != nil {
		return nil, fmt.Errorf("the diff does not parse (%v); %w", err, errMisread)
	}
	nh, same := 0, len(parsed) == len(r.files)
	for i, f := range parsed {
		nh += len(f.Hunks)
		same = same && len(f.Hunks) == r.files[i].hunks
	}
	switch {
	case nh == 0:
		return nil, errNoHunks
	case !same:
		return nil, fmt.Errorf("the diff was read as %s in %s where it has %s in %s; %w", plural(nh, "hunk"), plural(len(parsed), "file"), plural(len(r.hunks), "hunk"), plural(len(r.files), "file"), errMisread)
	}
	files := make([]fileDiff, len(parsed))
	hi := 0
	for i, pf := range parsed {
		f := fileDiff{oldName: pf.OrigName, newName: pf.NewName}
		if r.files[i].unnamedOld {
			f.oldName = ""
		}
		if r.files[i].unnamedNew {
			f.newName = ""
		}
		for _, ph := range pf.Hunks {
			f.hunks = append(f.hunks, convertHunk(ph, r.hunks[hi]))
			hi++
		}
		files[i] = f
	}
	return files, nil
}

// extractDiff returns the contents of the first ``` or ~~~ fence that
// holds a hunk, or the whole text when there is none.
func extractDiff(text string) string {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		fence := fenceOf(lines[i])
		if fence == "" {
			continue
		}
		end := i + 1
		for end < len(lines) && !(strings.HasPrefix(lines[end], fence) && strings.TrimSpace(strings.TrimLeft(lines[end], fence[:1])) == "") {
			end++
		}
		body := lines[i+1 : end]
		for _, l := range body {
			if strings.HasPrefix(l, "@@") {
				return strings.Join(body, "\n")
			}
		}
		i = end
	}
	return text
}

func fenceOf(line string) string {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(line, f) {
			return f
		}
	}
	return ""
}

// repaired is a diff rewritten for go-diff, with what go-diff cannot
// carry: which file names were placeholders, and each hunk's header as
// the model wrote it.
type repaired struct {
	text  []byte
	files []repairedFile // in order, as go-diff returns them
	hunks []hunkNote     // in order, over all files
}

type repairedFile struct {
	unnamedOld, unnamedNew bool // the name is a placeholder
	hunks                  int
}

type hunkNote struct {
	header  string // as the model wrote it
	hasNums bool   // it had line numbers
}

// unnamed stands in for a file name the diff does not give: go-diff reads
// no hunks for a file without a new name.
const unnamed = "unnamed"

// pendingFile is a file header read but not written yet: it is written
// with the first hunk after it, and a header that follows before any hunk
// (git's "diff --git" line, then ---/+++) takes its place. The names are
// the text of the --- and +++ lines, which go-diff unquotes.
type pendingFile struct {
	oldName, newName string
	written          bool
}

// repairDiff finds the files and hunks of a diff and writes them as a
// diff go-diff reads right. A hunk's body runs to the next hunk or file
// header; lines after its last -, + or space line are prose and left out,
// while unprefixed lines between them (a blank context line whose space
// the model dropped) are taken as context. Files without hunks are left
// out; hunks before any file header get a header with placeholder names.
func repairDiff(lines []string) (repaired, error) {
	var r repaired
	var b bytes.Buffer
	cur := pendingFile{}
	header := func(oldName, newName string) {
		if !cur.written && oldName == "" && newName == "" {
			return // a "diff --git" line whose names are ambiguous
		}
		cur = pendingFile{oldName: oldName, newName: newName}
	}
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			oldName, newName := gitNames(l)
			header(quoteName(oldName), quoteName(newName))
			i++
		case isFileHeader(lines, i):
			header(headerName(lines[i][4:]), headerName(lines[i+1][4:]))
			i += 2
		case strings.HasPrefix(l, "@@"):
			h, next := readHunk(lines, i)
			if !cur.written {
				f := repairedFile{unnamedOld: readsEmpty(cur.oldName), unnamedNew: readsEmpty(cur.newName)}
				fmt.Fprintf(&b, "--- %s\n+++ %s\n", orUnnamed(cur.oldName), orUnnamed(cur.newName))
				r.files = append(r.files, f)
				cur.written = true
			}
			if err := writeHunk(&b, h); err != nil {
				return repaired{}, err
			}
			r.hunks = append(r.hunks, hunkNote{header: h.header, hasNums: h.hasNums})
			r.files[len(r.files)-1].hunks++
			i = next
		case isModeHeader(l):
			return repaired{}, fmt.Errorf("the diff changes a file's mode (%s): edit changes text only, and never makes a file executable or a symbolic link; send the text change alone", strings.TrimSpace(l))
		default:
			i++ // prose, or git's extended headers (index, similarity)
		}
	}
	r.text = b.Bytes()
	return r, nil
}

// isModeHeader reports whether l is one of git's extended headers that
// give a file a mode: a symbolic link (120000), an executable (100755), a
// submodule (160000). Applying such a diff as text would hide what it asks.
func isModeHeader(l string) bool {
	for _, p := range []string{"new file mode ", "new mode ", "old mode ", "deleted file mode "} {
		if strings.HasPrefix(l, p) {
			mode := strings.TrimSpace(strings.TrimPrefix(l, p))
			return mode != "100644" && mode != "644"
		}
	}
	return false
}

func orUnnamed(name string) string {
	if readsEmpty(name) {
		return unnamed
	}
	return name
}

// readsEmpty reports whether go-diff reads the name as "": it unquotes
// whatever strconv.Unquote takes, two backquotes included.
func readsEmpty(name string) bool {
	if u, err := strconv.Unquote(name); err == nil {
		name = u
	}
	return name == ""
}

func isFileHeader(lines []string, i int) bool {
	return strings.HasPrefix(lines[i], "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ")
}

// rawHunk is a hunk as the model wrote it: its header, what the header
// says, and its body with each line's prefix restored.
type rawHunk struct {
	header                string
	oldStart, newStart    int
	oldCount, newCount    int
	hasNums, hasOldCounts bool
	body                  []string
}

// readHunk reads the hunk whose header is lines[i]; it returns the hunk
// and where reading goes on.
func readHunk(lines []string, i int) (rawHunk, int) {
	h := rawHunk{header: lines[i]}
	if m := hunkHeaderRe.FindStringSubmatch(lines[i]); m != nil {
		nums := []int{0, 1, 0, 1}
		ok := true
		for k, s := range m[1:5] {
			if s == "" {
				continue
			}
			n, err := strconv.Atoi(s)
			ok = ok && err == nil && n <= math.MaxInt32
			nums[k] = n
		}
		if ok { // numbers go-diff cannot hold are taken as none
			h.hasNums, h.hasOldCounts = true, true
			h.oldStart, h.oldCount, h.newStart, h.newCount = nums[0], nums[1], nums[2], nums[3]
		}
	}
	oldN, newN := 0, 0
	last := i // the last body line that is certainly part of the hunk
	j := i + 1
	for ; j < len(lines); j++ {
		l := lines[j]
		if strings.HasPrefix(l, "@@") || strings.HasPrefix(l, "diff --git ") {
			break
		}
		// "--- x" then "+++ y" then "@@" is the next file, unless the
		// header's counts say this hunk is not complete yet (a removed
		// "-- x" line followed by an added "++ y" line).
		if isFileHeader(lines, j) && j+2 < len(lines) && strings.HasPrefix(lines[j+2], "@@") &&
			!(h.hasOldCounts && (oldN < h.oldCount || newN < h.newCount)) {
			break
		}
		if l == "" {
			continue
		}
		switch l[0] {
		case ' ':
			oldN++
			newN++
		case '-':
			oldN++
		case '+':
			newN++
		case '\\':
		default:
			continue
		}
		last = j
	}
	for _, l := range lines[i+1 : last+1] {
		switch {
		case l == "":
			l = " "
		case !strings.ContainsRune(" -+\\", rune(l[0])):
			l = " " + l
		}
		h.body = append(h.body, l)
	}
	return h, j
}

// writeHunk writes a hunk for go-diff: a header with the model's line
// numbers (1 when it gave none) and counts taken from the body, then the
// body.
func writeHunk(b *bytes.Buffer, h rawHunk) error {
	oldN, newN := 0, 0
	for _, l := range h.body {
		switch l[0] {
		case ' ':
			oldN++
			newN++
		case '-':
			oldN++
		case '+':
			newN++
		}
	}
	if oldN == 0 && newN == 0 {
		return fmt.Errorf("the hunk %q has no lines: give context lines starting with a space, removed lines with - and added lines with +", h.header)
	}
	oldStart, newStart := h.oldStart, h.newStart
	if !h.hasNums {
		oldStart, newStart = 1, 1
	}
	body := h.body
	if n := len(body); n >= 2 && strings.HasPrefix(body[n-2], "---") && strings.HasPrefix(body[n-1], "+++") {
		// go-diff would take these two lines, before the next hunk's
		// header, for the next file's header. A removed line next to an
		// added one may trade places: neither side of the hunk changes.
		body = append(body[:n-2:n-2], body[n-1], body[n-2])
	}
	fmt.Fprintf(b, "@@ -%d,%d +%d,%d @@\n", oldStart, oldN, newStart, newN)
	for _, l := range body {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return nil
}

// gitNames reads the names of a "diff --git a/x b/x" line, when they are
// unambiguous.
func gitNames(l string) (string, string) {
	rest := strings.TrimPrefix(l, "diff --git ")
	if i := strings.Index(rest, " b/"); i >= 0 && strings.HasPrefix(rest, "a/") {
		return rest[:i], rest[i+1:]
	}
	return "", ""
}

// quoteName writes a name for a --- or +++ line that go-diff reads back
// as it is: quoted if it holds a tab, has spaces at its ends or starts
// with a quote.
func quoteName(n string) string {
	if strings.ContainsRune(n, '\t') || strings.TrimSpace(n) != n || strings.HasPrefix(n, `"`) {
		return strconv.Quote(n)
	}
	return n
}

// headerName is what go-diff is given of a --- or +++ line's text: the
// text before a tab (go-diff fails on anything there but a timestamp,
// such as svn's "(working copy)"), spaces trimmed. go-diff unquotes it.
func headerName(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// convertHunk takes a hunk as go-diff parsed it, with the note on its
// header.
func convertHunk(gh *diff.Hunk, note hunkNote) dhunk {
	h := dhunk{header: note.header, origStart: int(gh.OrigStartLine), hasHint: note.hasNums, origNoEOL: gh.OrigNoNewlineAt > 0}
	body := string(gh.Body)
	bodyNoEOL := body != "" && !strings.HasSuffix(body, "\n")
	for l := range strings.SplitSeq(strings.TrimSuffix(body, "\n"), "\n") {
		if l == "" || !strings.ContainsRune(" -+", rune(l[0])) {
			continue // a stray marker line
		}
		h.lines = append(h.lines, dline{op: l[0], text: l[1:]})
	}
	if n := len(h.lines); bodyNoEOL && n > 0 {
		h.newNoEOL = true
		if h.lines[n-1].op == ' ' {
			h.origNoEOL = true
		}
	}
	return h
}

// pickFile chooses the part of a diff that changes rel (or abs). A diff
// of one file goes to the path given, whatever name it has; in a diff of
// several, the one that names the path is taken and the others are
// reported.
func pickFile(files []fileDiff, rel, abs string) (fileDiff, []string, error) {
	if len(files) == 1 {
		return files[0], nil, nil
	}
	var pick []int
	var others []string
	for i, f := range files {
		if nameMatches(f.newName, rel, abs) || nameMatches(f.oldName, rel, abs) {
			pick = append(pick, i)
		} else {
			others = append(others, displayName(f))
		}
	}
	if len(pick) != 1 {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = displayName(f)
		}
		which := "none of them is " + rel
		if len(pick) > 1 {
			which = "several of them look like " + rel
		}
		return fileDiff{}, nil, fmt.Errorf("the diff changes %d files (%s) and %s; send one edit per file, each with its own path", len(files), strings.Join(names, ", "), which)
	}
	return files[pick[0]], others, nil
}

func displayName(f fileDiff) string {
	n := f.newName
	if n == "" || n == "/dev/null" {
		n = f.oldName
	}
	return stripAB(n)
}

// nameMatches reports whether a diff's file name denotes the path: equal
// with or without the a/ b/ prefix, or one a path-suffix of the other.
func nameMatches(name, rel, abs string) bool {
	if name == "" || name == "/dev/null" {
		return false
	}
	for _, n := range []string{name, stripAB(name)} {
		n = path.Clean(n)
		if n == rel || n == abs || strings.HasSuffix(rel, "/"+n) || strings.HasSuffix(n, "/"+rel) {
			return true
		}
	}
	return false
}

func stripAB(n string) string {
	if strings.HasPrefix(n, "a/") || strings.HasPrefix(n, "b/") {
		return n[2:]
	}
	return n
}

// span is the lines [start, end) of the old text a hunk replaces.
type span struct{ start, end, hunk int }

// applyHunks applies the hunks to text, placing each by its context and
// removed lines. If any hunk cannot be placed, nothing is applied and the
// error says which and why. rel names the file in messages.
func applyHunks(text string, hunks []dhunk, rel string) (string, error) {
	lines := splitKeep(text)
	content := make([]string, len(lines))
	for i, l := range lines {
		content[i] = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
	}
	eol := dominantEOL(lines)
	var spans []span
	for hi, h := range hunks {
		var old []string
		for _, l := range h.lines {
			if l.op != '+' {
				old = append(old, l.text)
			}
		}
		pos, err := locate(content, old, h, spans)
		if err != nil {
			return "", fmt.Errorf("hunk %d of %d (%s) %v in %s; nothing was applied. Read the file again and send the change with the exact current lines", hi+1, len(hunks), shortHeader(h.header), err, rel)
		}
		spans = append(spans, span{pos, pos + len(old), hi})
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		for ; at < sp.start; at++ {
			b.WriteString(lines[at])
		}
		h := hunks[sp.hunk]
		var repl []string
		cur := sp.start
		for _, l := range h.lines {
			switch l.op {
			case ' ':
				repl = append(repl, lines[cur])
				cur++
			case '-':
				cur++
			case '+':
				repl = append(repl, l.text+eol)
			}
		}
		atEOF := sp.end == len(lines)
		for i, r := range repl {
			if i < len(repl)-1 || !atEOF {
				repl[i] = withEOL(r, eol)
			}
		}
		if atEOF && len(repl) > 0 {
			fileNoEOL := len(lines) > 0 && !strings.HasSuffix(lines[len(lines)-1], "\n")
			noEOL := fileNoEOL
			switch {
			case h.newNoEOL:
				noEOL = true
			case h.origNoEOL:
				noEOL = false
			}
			last := &repl[len(repl)-1]
			if noEOL {
				*last = strings.TrimSuffix(strings.TrimSuffix(*last, "\n"), "\r")
			} else {
				*last = withEOL(*last, eol)
			}
		}
		for _, r := range repl {
			b.WriteString(r)
		}
		at = sp.end
	}
	for ; at < len(lines); at++ {
		b.WriteString(lines[at])
	}
	return b.String(), nil
}

func withEOL(l, eol string) string {
	if strings.HasSuffix(l, "\n") {
		return l
	}
	return l + eol
}

// dominantEOL is the line ending most lines of the text use.
func dominantEOL(lines []string) string {
	crlf := 0
	for _, l := range lines {
		if strings.HasSuffix(l, "\r\n") {
			crlf++
		}
	}
	if crlf*2 > len(lines) {
		return "\r\n"
	}
	return "\n"
}

func shortHeader(h string) string {
	return clipWithCount(strings.TrimSpace(h), 60)
}

// locate finds where the old side of a hunk sits in the file: exactly, or
// else ignoring trailing whitespace; not overlapping hunks placed before;
// nearest to the header's line number when there are several places.
func locate(content, old []string, h dhunk, taken []span) (int, error) {
	if len(old) == 0 {
		switch {
		case len(content) == 0:
			return 0, nil
		case h.hasHint:
			return min(max(h.origStart, 0), len(content)), nil
		}
		return 0, fmt.Errorf("only adds lines and has neither context nor line numbers to place them")
	}
	free := func(p int) bool {
		for _, t := range taken {
			if p < t.end && t.start < p+len(old) {
				return false
			}
		}
		return true
	}
	var found []int
	for _, eq := range []func(a, b string) bool{
		func(a, b string) bool { return a == b },
		func(a, b string) bool { return strings.TrimRight(a, " \t") == strings.TrimRight(b, " \t") },
	} {
		for p := 0; p+len(old) <= len(content); p++ {
			ok := true
			for k := range old {
				if !eq(content[p+k], old[k]) {
					ok = false
					break
				}
			}
			if ok && free(p) {
				found = append(found, p)
			}
		}
		if len(found) > 0 {
			break
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1 && h.hasHint:
		want := h.origStart - 1
		best := found[0]
		for _, p := range found[1:] {
			if abs(p-want) < abs(best-want) {
				best = p
			}
		}
		return best, nil
	case len(found) > 1:
		nums := make([]string, 0, 5)
		for _, p := range found[:min(len(found), 5)] {
			nums = append(nums, strconv.Itoa(p+1))
		}
		return 0, fmt.Errorf("fits %d places (lines %s) and has no line numbers to choose; add context lines or line numbers", len(found), strings.Join(nums, ", "))
	}
	return 0, whyNotFound(content, old)
}

// whyNotFound explains a hunk that fits nowhere: how far its lines match
// at their best place, and what the file has instead.
func whyNotFound(content, old []string) error {
	bestLen, bestAt := 0, -1
	for p := range content {
		k := 0
		for k < len(old) && p+k < len(content) && strings.TrimRight(content[p+k], " \t") == strings.TrimRight(old[k], " \t") {
			k++
		}
		if k > bestLen {
			bestLen, bestAt = k, p
		}
	}
	if bestAt < 0 {
		msg := fmt.Sprintf("cannot be placed: its first old line %q is not in the file", clipWithCount(old[0], 120))
		if n, line, ok := closestLine(content, old[0]); ok {
			msg += fmt.Sprintf(" (the closest is line %d: %q)", n, clipWithCount(line, 120))
		}
		return fmt.Errorf("%s", msg)
	}
	at := bestAt + bestLen
	has := "the file ends there"
	if at < len(content) {
		has = fmt.Sprintf("line %d is %q", at+1, clipWithCount(content[at], 120))
	}
	if bestLen == len(old) {
		return fmt.Errorf("cannot be placed: its lines overlap another hunk at line %d", bestAt+1)
	}
	return fmt.Errorf("cannot be placed: its old lines match from line %d for %s, but then it expects %q where %s",
		bestAt+1, plural(bestLen, "line"), clipWithCount(old[bestLen], 120), has)
}

// closestLine finds the line of content most like want (by shared
// character pairs, whitespace ignored at both ends).
func closestLine(content []string, want string) (int, string, bool) {
	want = strings.TrimSpace(want)
	if want == "" {
		return 0, "", false
	}
	wp := pairs(want)
	best, bestScore := -1, 0.0
	for i, l := range content {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		lp := pairs(t)
		common := 0
		for p, n := range lp {
			common += min(n, wp[p])
		}
		score := 2 * float64(common) / float64(max(1, sum(lp)+sum(wp)))
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 || bestScore < 0.4 {
		return 0, "", false
	}
	return best + 1, content[best], true
}

func pairs(s string) map[string]int {
	m := make(map[string]int)
	r := []rune(s)
	for i := 0; i+1 < len(r); i++ {
		m[string(r[i:i+2])]++
	}
	if len(r) == 1 {
		m[s]++
	}
	return m
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
