package lsp

import (
	"fmt"
	"regexp"
	"strings"

	"go.lsp.dev/protocol"
)

// commentAsk reads an instruction the user wrote in a comment — "//
// reika: add a timeout", "# reika: …", "-- reika: …" — on the lines of
// the range, so that an editor that cannot pass a command arguments
// (Helix's :lsp-workspace-command) can still ask anything, through the
// code action "Reika: do what this comment says". Comment lines right
// below it with the same leader continue it. ok is false when the range
// holds no such comment or the document is not open.
func (s *Server) commentAsk(uri protocol.DocumentURI, r protocol.Range) (a askArgs, ok bool) {
	doc, open := s.docs.Get(uri)
	if !open {
		return askArgs{}, false
	}
	lines := strings.Split(doc.Text, "\n")
	last := min(int(r.End.Line), len(lines)-1)
	for i := int(r.Start.Line); i <= last && i >= 0; i++ {
		m := commentInstruction.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		leader, text := m[1], []string{strings.TrimSpace(m[2])}
		end := i
		for j := i + 1; j < len(lines); j++ {
			rest, ok := strings.CutPrefix(strings.TrimSpace(lines[j]), leader)
			if !ok || strings.TrimSpace(rest) == "" || commentInstruction.MatchString(lines[j]) {
				break
			}
			text, end = append(text, strings.TrimSpace(closer.ReplaceAllString(rest, ""))), j
		}
		instruction := strings.Join(text, " ")
		if instruction == "" {
			return askArgs{}, false
		}
		return askArgs{
			Instruction: fmt.Sprintf("%s\n\n(This instruction is the comment at line %d; remove the comment once it is done.)", instruction, i+1),
			URI:         uri,
			Range:       &protocol.Range{Start: protocol.Position{Line: uint32(i)}, End: protocol.Position{Line: uint32(end + 1)}},
		}, true
	}
	return askArgs{}, false
}

// commentInstruction matches a comment that starts with "reika:": the
// comment's leader, then the instruction (a closing "*/" or "-->" left
// out).
var commentInstruction = regexp.MustCompile(`^\s*(//+|#+|--+|;+|/\*+|<!--|\*|%+|")\s*(?i:reika):\s*(.*?)\s*(?:\*/|-->)?\s*$`)

// closer is the end of a block comment on a continuation line.
var closer = regexp.MustCompile(`\s*(\*/|-->)\s*$`)
