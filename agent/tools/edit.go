package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// shownDiffLines bounds the diff an edit result shows the model.
const shownDiffLines = 300

type editArgs struct {
	Path    string  `json:"path"`
	OldText *string `json:"old_text"`
	NewText *string `json:"new_text"`
	Diff    string  `json:"diff"`
	// Names some models use for the same arguments.
	OldString *string `json:"old_string"`
	NewString *string `json:"new_string"`
}

func (s *Set) edit(ctx context.Context, raw json.RawMessage) Result {
	var a editArgs
	if r := decode(EditTool, raw, &a); r != nil {
		return *r
	}
	if a.OldText == nil {
		a.OldText = a.OldString
	}
	if a.NewText == nil {
		a.NewText = a.NewString
	}
	useDiff := strings.TrimSpace(a.Diff) != ""
	if useDiff && a.OldText != nil && *a.OldText == "" && (a.NewText == nil || *a.NewText == "") {
		a.OldText, a.NewText = nil, nil // empty fields sent beside a diff, as some models fill every field
	}
	switch {
	case useDiff && a.OldText != nil:
		return failf("edit takes either old_text and new_text, or diff, not both; send one of them")
	case !useDiff && a.OldText == nil:
		return failf(`edit needs "path" and either "old_text" and "new_text" (old_text copied exactly from the file) or "diff" (a unified diff)`)
	case !useDiff && a.NewText == nil:
		return failf(`edit needs "new_text", the text that replaces old_text (an empty string deletes it)`)
	}
	var files []fileDiff
	if useDiff {
		var err error
		if files, err = parseDiff(a.Diff); err != nil {
			return failf(EditTool+": %v", err)
		}
		if strings.TrimSpace(a.Path) == "" && len(files) == 1 {
			a.Path = stripAB(files[0].newName)
			if a.Path == "/dev/null" {
				a.Path = ""
			}
		}
	}
	if strings.TrimSpace(a.Path) == "" {
		return failf(`edit needs "path": the file to change, relative to the workspace root`)
	}
	t, err := s.resolve(a.Path, false)
	if err != nil {
		return failf(EditTool+": %v", err)
	}
	old, version, err := s.current(t, EditTool)
	if err != nil {
		return Result{Error: true, Content: err.Error(), Payload: contextwin.Payload{Kind: contextwin.Diff, Path: t.rel}}
	}
	if useDiff && len(files) == 1 {
		if other := s.namedElsewhere(files[0], t); other != "" {
			return failf(EditTool+": the diff is for %s, but path is %s; send the diff with the path it changes", other, t.rel)
		}
	}
	var updated, note string
	if useDiff {
		updated, note, err = applyDiff(files, old, t)
	} else {
		updated, err = replaceOnce(old, *a.OldText, *a.NewText, t.rel)
	}
	if err != nil {
		msg := EditTool + ": " + err.Error()
		if version >= 0 {
			msg += " (the file is open in the editor; its text there was used, unsaved changes included)"
		}
		return Result{Error: true, Content: msg, Payload: contextwin.Payload{Kind: contextwin.Diff, Path: t.rel}}
	}
	if updated == old {
		return Result{Error: true, Content: fmt.Sprintf(EditTool+": the change leaves %s as it is; nothing to do", t.rel),
			Payload: contextwin.Payload{Kind: contextwin.Diff, Path: t.rel}}
	}
	res := s.propose(ctx, Proposal{Path: t.rel, Abs: t.abs, Old: old, New: updated, Version: version})
	if note != "" {
		res.Content += "\n" + note
	}
	return res
}

// namedElsewhere returns the file a one-file diff names when that is
// another existing file of the workspace than t; "" when the names fit t,
// or are placeholders that name nothing.
func (s *Set) namedElsewhere(f fileDiff, t target) string {
	for _, name := range []string{f.newName, f.oldName} {
		if name == "" || name == "/dev/null" || nameMatches(name, t.rel, t.abs) {
			continue
		}
		for _, n := range []string{stripAB(name), name} {
			if o, err := s.resolve(n, false); err == nil && o.abs != t.abs && exists(o.abs) {
				return o.rel
			}
		}
	}
	return ""
}

// applyDiff applies the part of a parsed diff that is about t.
func applyDiff(files []fileDiff, old string, t target) (string, string, error) {
	f, others, err := pickFile(files, t.rel, t.abs)
	if err != nil {
		return "", "", err
	}
	switch {
	case f.newName == "/dev/null":
		return "", "", fmt.Errorf("the diff deletes %s, which edit cannot do; ask the user to delete it", t.rel)
	case f.oldName == "/dev/null":
		return "", "", fmt.Errorf("the diff creates %s, which exists; change it with a diff against its current text", t.rel)
	}
	updated, err := applyHunks(old, f.hunks, t.rel)
	if err != nil {
		return "", "", err
	}
	note := ""
	if len(others) > 0 {
		note = fmt.Sprintf("(the hunks for %s were left out: send them in their own edit calls)", strings.Join(others, ", "))
	}
	return updated, note, nil
}

// replaceOnce replaces the one occurrence of oldText in text. With no
// exact occurrence it matches whole lines ignoring the whitespace at
// their ends, and re-indents newText to fit.
func replaceOnce(text, oldText, newText, rel string) (string, error) {
	if oldText == "" {
		return "", fmt.Errorf("old_text is empty; to add text, give a line next to the place as old_text and repeat it in new_text; to create a file, use %s", WriteTool)
	}
	if oldText == newText {
		return "", fmt.Errorf("old_text and new_text are the same; nothing to change")
	}
	if strings.Contains(text, "\r\n") && !strings.Contains(oldText, "\r") {
		oldText = strings.ReplaceAll(oldText, "\n", "\r\n")
		newText = strings.ReplaceAll(strings.ReplaceAll(newText, "\r\n", "\n"), "\n", "\r\n")
	}
	switch n := strings.Count(text, oldText); {
	case n == 1:
		return strings.Replace(text, oldText, newText, 1), nil
	case n > 1:
		return "", fmt.Errorf("old_text occurs %d times in %s; include more of the surrounding lines in old_text (and new_text) so that it occurs once", n, rel)
	}
	return replaceLoose(text, oldText, newText, rel)
}

// replaceLoose matches the lines of oldText against whole lines of text,
// ignoring leading and trailing whitespace.
func replaceLoose(text, oldText, newText, rel string) (string, error) {
	pat := splitLines(oldText)
	for len(pat) > 0 && strings.TrimSpace(pat[0]) == "" {
		pat = pat[1:]
	}
	for len(pat) > 0 && strings.TrimSpace(pat[len(pat)-1]) == "" {
		pat = pat[:len(pat)-1]
	}
	lines := splitKeep(text)
	content := splitLines(text)
	if len(pat) == 0 {
		return "", fmt.Errorf("old_text holds only whitespace, which does not occur in %s as given; give the lines to change", rel)
	}
	var found []int
	for p := 0; p+len(pat) <= len(content); p++ {
		ok := true
		for k := range pat {
			if strings.TrimSpace(content[p+k]) != strings.TrimSpace(pat[k]) {
				ok = false
				break
			}
		}
		if ok {
			found = append(found, p)
		}
	}
	switch {
	case len(found) > 1:
		return "", fmt.Errorf("old_text does not occur exactly in %s, and ignoring indentation it fits %d places (lines %d and %d…); copy it exactly from a fresh read, with more surrounding lines", rel, len(found), found[0]+1, found[1]+1)
	case len(found) == 0:
		msg := fmt.Sprintf("old_text was not found in %s, not even ignoring indentation", rel)
		if n, line, ok := closestLine(content, firstNonBlank(pat)); ok {
			msg += fmt.Sprintf("; the closest line to its first line is %d: %q", n, clipWithCount(line, 160))
		}
		return "", fmt.Errorf("%s. Read the file again and copy old_text exactly, without the line numbers", msg)
	}
	p := found[0]
	start := 0
	for _, l := range lines[:p] {
		start += len(l)
	}
	end := start
	for _, l := range lines[p : p+len(pat)] {
		end += len(l)
	}
	eol := dominantEOL(lines)
	lastHasEOL := strings.HasSuffix(text[:end], "\n")
	if strings.TrimSpace(newText) == "" {
		return text[:start] + text[end:], nil // the lines go, with their ends
	}
	// Each indentation of old_text maps to the file's indentation on the
	// same line; new_text's lines are re-indented by the longest that fits.
	indents := map[string]string{}
	for k, l := range pat {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if _, ok := indents[leadingSpace(l)]; !ok {
			indents[leadingSpace(l)] = leadingSpace(content[p+k])
		}
	}
	var repl []string
	for _, l := range splitLines(newText) {
		if strings.TrimSpace(l) != "" {
			l = reindent(l, indents)
		}
		repl = append(repl, l)
	}
	r := strings.Join(repl, eol)
	if lastHasEOL {
		r += eol
	}
	return text[:start] + r + text[end:], nil
}

func firstNonBlank(lines []string) string {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}

// reindent replaces the longest leading indentation of l that indents
// maps.
func reindent(l string, indents map[string]string) string {
	lead := leadingSpace(l)
	for n := len(lead); n >= 0; n-- {
		if to, ok := indents[lead[:n]]; ok {
			return to + l[n:]
		}
	}
	return l
}

func leadingSpace(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// propose hands a change to the front end and reports what became of it.
// Without a proposer the change stays proposed, for the user to review.
func (s *Set) propose(ctx context.Context, p Proposal) Result {
	a, b := splitKeep(p.Old), splitKeep(p.New)
	edits := diffLines(a, b)
	p.Hunks = changeHunks(a, b, edits)
	if p.Create {
		p.Version = -1
	}
	p.Protected = s.protection(p.Abs, p.Path)
	p.Diff = unifiedDiff(p.Path, a, b, edits, 3)
	res := Result{Payload: contextwin.Payload{Kind: contextwin.Diff, Path: p.Path}, Proposal: &p}
	what := "the change to " + p.Path
	shown := ""
	if p.Create {
		what = "creating " + p.Path
		shown = fmt.Sprintf(" (%s)", plural(len(b), "line"))
	} else {
		shown = ":\n" + diffHead(p.Diff, shownDiffLines)
	}
	if s.proposer == nil {
		res.Content = fmt.Sprintf("Proposed %s to the user for review; it is not applied yet%s", what, shown)
		return res
	}
	out, err := s.proposer(ctx, p)
	if err != nil {
		res.Error = true
		res.Content = fmt.Sprintf("%s could not be proposed to the user: %v; the file is unchanged", upper(what), err)
		return res
	}
	res.Outcome = &out
	reason := strings.TrimSuffix(out.Reason, ".")
	if reason == "" {
		reason = "no reason given"
	}
	switch {
	case out.Partial:
		runOf(ctx).setWrote()
		res.Error = true
		res.Content = fmt.Sprintf("Only part of %s was applied: %s. Read the file for its current text before changing it further", what, reason)
		return res
	case !out.Applied:
		res.Error = true
		res.Content = fmt.Sprintf("%s was not applied: %s. The file is unchanged", upper(what), reason)
		return res
	}
	runOf(ctx).setWrote()
	res.Content = fmt.Sprintf("Applied %s%s", what, shown)
	if out.Note != "" {
		res.Content += "\n" + out.Note
	}
	return res
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// diffHead keeps the first n lines of diff s and counts the rest ("… 4
// more lines of the diff"); the text it returns is valid UTF-8.
func diffHead(s string, n int) string {
	s = strings.TrimSuffix(s, "\n")
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) <= n {
		return validUTF8(s)
	}
	rest := strings.Count(lines[n], "\n") + 1
	return validUTF8(strings.Join(lines[:n], "\n")) + fmt.Sprintf("\n… %s more of the diff", plural(rest, "line"))
}
