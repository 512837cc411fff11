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

// preserveKwargs are the chat_template_kwargs that make a template keep
// every message's reasoning, by the name the template reads: Qwen's
// preserve_thinking (true keeps the earlier turns'), GLM's clear_thinking
// (false keeps them).
var preserveKwargs = []struct {
	name  string
	value bool
}{{"preserve_thinking", true}, {"clear_thinking", false}}

// preserving is the chat_template_kwargs to send with every request so
// that the template renders all the reasoning sent back, nil when the
// template reads no such switch.
func preserving(template string) map[string]any {
	for _, k := range preserveKwargs {
		if strings.Contains(template, k.name) {
			return map[string]any{k.name: k.value}
		}
	}
	return nil
}

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
