package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// Tokenize counts text in the engine's own tokens with llama.cpp's POST
// /tokenize (no special tokens added). The agent asks it once a session,
// to size the warm-up's primer on an engine that restarts from
// checkpoints (see agent.Session.Warmup); it never counts the prompts
// themselves, whose figures the engine reports with every answer.
func Tokenize(ctx context.Context, opts Options, text string) (int, error) {
	d := newDiscoverer(opts)
	var model string
	if opts.Router {
		model = opts.Model // the router finds the model's child by it
	}
	body, err := json.Marshal(struct {
		Content string `json:"content"`
		Model   string `json:"model,omitempty"`
	}{text, model})
	if err != nil {
		return 0, err
	}
	var out struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := d.doJSON(ctx, http.MethodPost, rootOf(opts.BaseURL)+"/tokenize", "POST /tokenize", bytes.NewReader(body), &out); err != nil {
		return 0, err
	}
	if out.Tokens == nil {
		return 0, &Error{Kind: BadResponse, Endpoint: strings.TrimRight(opts.BaseURL, "/"), Op: "POST /tokenize", Message: "answered without tokens"}
	}
	return len(out.Tokens), nil
}
