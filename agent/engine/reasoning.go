package engine

import (
	"strings"

	"github.com/reika-lsp/reika/contextwin"
)

// What a chat template renders of the reasoning sent back, from what
// llama.cpp's /props tells of it: chat_template_caps.supports_preserve_reasoning,
// which llama.cpp sets when the template reads an earlier assistant
// message's reasoning_content at all, and the template's text, which says
// whether it renders it only after the last user message.

// turnMarks are the names templates give the index of the last user
// message, after which alone they render reasoning (Qwen3's
// last_query_index, GLM's last_user_index, others' last_user_idx).
var turnMarks = []string{"last_query_index", "last_user_index", "last_user_idx"}

// templateReasoning is the class of a template: ReasoningUnknown when
// /props gave no caps, ReasoningDrop when the template never reads
// reasoning_content, ReasoningTurn when it does up to the last user
// message's index, ReasoningAll otherwise.
func templateReasoning(template string, caps map[string]any) contextwin.ReasoningTemplate {
	preserve, ok := caps["supports_preserve_reasoning"].(bool)
	switch {
	case !ok && template == "":
		return contextwin.ReasoningUnknown
	case !ok:
		preserve = strings.Contains(template, "reasoning_content")
	}
	if !preserve {
		return contextwin.ReasoningDrop
	}
	for _, m := range turnMarks {
		if strings.Contains(template, m) {
			return contextwin.ReasoningTurn
		}
	}
	return contextwin.ReasoningAll
}
