package engine

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/reika-lsp/reika/contextwin"
)

// What a template renders of the reasoning sent back, from /props.
func TestTemplateReasoning(t *testing.T) {
	qwen3 := `{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}` +
		`{%- if loop.index0 > ns.last_query_index %}{{ reasoning_content }}{%- endif %}`
	glm := `{%- if loop.index0 > ns.last_user_index and reasoning_content -%}<think>{{ reasoning_content }}</think>{%- endif -%}`
	preserve := `{%- if message.reasoning_content %}<think>{{ message.reasoning_content }}</think>{% endif %}`
	tests := []struct {
		name     string
		template string
		caps     map[string]any
		want     contextwin.ReasoningTemplate
	}{
		{"nothing said", "", nil, contextwin.ReasoningUnknown},
		{"caps: no preserve", qwen3, map[string]any{"supports_preserve_reasoning": false}, contextwin.ReasoningDrop},
		{"Qwen3's", qwen3, map[string]any{"supports_preserve_reasoning": true}, contextwin.ReasoningTurn},
		{"GLM's", glm, map[string]any{"supports_preserve_reasoning": true}, contextwin.ReasoningTurn},
		{"preserved", preserve, map[string]any{"supports_preserve_reasoning": true}, contextwin.ReasoningAll},
		{"older build, no caps: the text", qwen3, nil, contextwin.ReasoningTurn},
		{"older build, no caps, no reasoning in it", "{{ message.content }}", nil, contextwin.ReasoningDrop},
		{"caps of another type", preserve, map[string]any{"supports_preserve_reasoning": "yes"}, contextwin.ReasoningAll},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := templateReasoning(tt.template, tt.caps); got != tt.want {
				t.Errorf("templateReasoning = %q, want %q", got, tt.want)
			}
		})
	}
}

// The /props of a real llama-server (Qwen2.5's template, which reads no
// reasoning) says drop.
func TestTemplateReasoningCapture(t *testing.T) {
	var props llamaProps
	if err := json.Unmarshal(readCapture(t, "llama.cpp/c8192-np1-qwen25-template/04-props.json"), &props); err != nil {
		t.Fatal(err)
	}
	if props.ChatTemplate == "" || props.ChatTemplateCaps == nil {
		t.Fatalf("the capture has no chat_template or chat_template_caps: %+v", props)
	}
	if got := templateReasoning(props.ChatTemplate, props.ChatTemplateCaps); got != contextwin.ReasoningDrop {
		t.Errorf("templateReasoning(capture) = %q, want drop", got)
	}
}

// A template with a switch that keeps every message's reasoning is asked
// to, beside the kwargs the settings send, which win.
func TestReasoningKwargs(t *testing.T) {
	qwen := `{%- if preserve_thinking or loop.index0 > ns.last_query_index %}`
	glm := `{%- if not clear_thinking or loop.index0 > ns.last_user_index %}`
	if got := preserving(qwen); fmt.Sprint(got) != "map[preserve_thinking:true]" {
		t.Errorf("preserving(Qwen's) = %v", got)
	}
	if got := preserving(glm); fmt.Sprint(got) != "map[clear_thinking:false]" {
		t.Errorf("preserving(GLM's) = %v", got)
	}
	if got := preserving("{{ reasoning_content }}"); got != nil {
		t.Errorf("preserving(no switch) = %v, want nil", got)
	}
	add := map[string]any{"preserve_thinking": true}
	tests := []struct {
		extra map[string]any
		want  string // fmt of the result
	}{
		{nil, "map[chat_template_kwargs:map[preserve_thinking:true]]"},
		{map[string]any{"top_k": 20}, "map[chat_template_kwargs:map[preserve_thinking:true] top_k:20]"},
		{map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": true}},
			"map[chat_template_kwargs:map[enable_thinking:true preserve_thinking:true]]"},
		{map[string]any{"chat_template_kwargs": map[string]any{"preserve_thinking": false}}, "map[]"},
		{map[string]any{"chat_template_kwargs": "{}"}, "map[]"},
	}
	for _, tt := range tests {
		if got := withKwargs(tt.extra, add); fmt.Sprint(got) != tt.want {
			t.Errorf("withKwargs(%v) = %v, want %s", tt.extra, got, tt.want)
		}
	}
	if tt := (map[string]any{"top_k": 20}); withKwargs(tt, add) != nil && len(tt) != 1 {
		t.Error("withKwargs changed the settings' map")
	}
}
