package sim

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

// policyTools are the tools the exploring policy knows how to use.
var policyTools = []string{"read", "glob", "grep", "edit", "write", "bash"}

// offersPolicyTools reports whether c offers any tool the policy uses.
func offersPolicyTools(c *chat) bool {
	for _, name := range policyTools {
		if c.offers(name) {
			return true
		}
	}
	return false
}

// schemaReply answers a request whose tools the policy does not know — a
// connectivity check asking for "ping", say — the way an obliging model
// does: it calls the first offered tool, with every required argument
// filled from its schema. Once a tool result has come back after the last
// user message, it has nothing more to call and reports false.
func schemaReply(c *chat) (reply, bool) {
	if len(c.tools) == 0 {
		return reply{}, false
	}
	for i := len(c.messages) - 1; i >= 0; i-- {
		if c.messages[i].Role == "user" {
			break
		}
		if c.messages[i].Role == "tool" {
			return reply{}, false
		}
	}
	t := c.tools[0]
	if name, ok := strings.CutPrefix(c.toolChoice, "function:"); ok {
		for _, o := range c.tools {
			if strings.EqualFold(o.Name, name) {
				t = o
			}
		}
	}
	var fn struct {
		Parameters struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
			Required []string `json:"required"`
		} `json:"parameters"`
	}
	json.Unmarshal([]byte(t.Raw), &fn) // a schema we cannot read gets no arguments
	word := quotedWord(c)
	args := map[string]any{}
	required := append([]string(nil), fn.Parameters.Required...)
	sort.Strings(required)
	for _, name := range required {
		switch fn.Parameters.Properties[name].Type {
		case "integer", "number":
			args[name] = 1
		case "boolean":
			args[name] = true
		case "array":
			args[name] = []any{}
		case "object":
			args[name] = map[string]any{}
		default:
			args[name] = word
		}
	}
	text, _ := json.Marshal(args)
	return reply{
		Source:    "schema",
		ToolCalls: []toolCall{{ID: callID(conversationSeed(c), countAssistant(c)+1, 0), Name: t.Name, Arguments: string(text)}},
	}, true
}

var quoted = regexp.MustCompile(`"([^"]{1,80})"`)

// quotedWord is the first quoted text of the last user message, the value
// a model would pass along, or "sim".
func quotedWord(c *chat) string {
	for i := len(c.messages) - 1; i >= 0; i-- {
		if c.messages[i].Role != "user" {
			continue
		}
		if m := quoted.FindStringSubmatch(c.messages[i].Content); m != nil {
			return m[1]
		}
		break
	}
	return "sim"
}
