package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent/sim"
)

// option is the select option id of opts, nil when there is none.
func option(opts []sdk.SessionConfigOption, id sdk.SessionConfigId) *sdk.SessionConfigOptionSelect {
	for _, o := range opts {
		if o.Select != nil && o.Select.Id == id {
			return o.Select
		}
	}
	return nil
}

// values are a select option's values, in order.
func values(o *sdk.SessionConfigOptionSelect) []string {
	var out []string
	if o != nil && o.Options.Ungrouped != nil {
		for _, v := range *o.Options.Ungrouped {
			out = append(out, string(v.Value))
		}
	}
	return out
}

// The model is a config option whose values are the engine's
// /v1/models: switching it makes the next request name the new model,
// the user is told its window (a usage update carries it) and that the
// next request prefills the conversation anew, and a load after a
// restart keeps it. A model the engine does not list is refused.
func TestModelAsConfigOption(t *testing.T) {
	w := newWorld(t, sim.Config{Model: "coder-7b", Models: []string{"coder-32b"}, ModelCtx: map[string]int{"coder-32b": 32768}, Script: []sim.Turn{
		{Content: "First."}, {Content: "Second."}, {Content: "Third."}}}, map[string]string{"main.go": mainGo})
	c := &client{}
	cn := w.connect(c)
	res, err := cn.NewSession(cn.ctx, sdk.NewSessionRequest{Cwd: w.ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.SessionId
	m := option(res.ConfigOptions, "model")
	if m == nil || m.CurrentValue != "coder-7b" || strings.Join(values(m), " ") != "coder-7b coder-32b" {
		t.Fatalf("session/new's model option = %+v, want coder-7b of coder-7b and coder-32b", m)
	}
	if _, err := cn.prompt(t, id, "First question"); err != nil {
		t.Fatal(err)
	}
	set, err := cn.SetSessionConfigOption(cn.ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: id, ConfigId: "model", Value: "coder-32b"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := option(set.ConfigOptions, "model").CurrentValue; got != "coder-32b" {
		t.Errorf("after the switch the model option is %q", got)
	}
	told := false
	for _, tc := range c.matching("tool_call") {
		title, _ := tc["title"].(string)
		told = told || strings.Contains(title, "the model is now coder-32b, with a window of 32768 tokens") && strings.Contains(title, "prefills it all again")
	}
	if !told {
		t.Errorf("the user was not told what the switch costs:\n%s", c.all())
	}
	waitFor(t, func() bool {
		usage := c.matching("usage_update")
		return len(usage) > 0 && usage[len(usage)-1]["size"] == float64(32768)
	}, "a usage update with coder-32b's window")
	if _, err := cn.prompt(t, id, "Second question"); err != nil {
		t.Fatal(err)
	}
	reqs := w.requests(t, 2)
	if !strings.Contains(string(reqs[0].Body), `"model":"coder-7b"`) || !strings.Contains(string(reqs[1].Body), `"model":"coder-32b"`) {
		t.Errorf("the requests named the models\n%s\n%s", reqs[0].Body, reqs[1].Body)
	}
	if _, err := cn.SetSessionConfigOption(cn.ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: id, ConfigId: "model", Value: "gpt-9"}}); err == nil {
		t.Errorf("a model the engine does not serve was set")
	}
	cn.stop()

	second := w.connect(&client{})
	load, err := second.LoadSession(second.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: w.ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := option(load.ConfigOptions, "model").CurrentValue; got != "coder-32b" {
		t.Errorf("after a restart the model is %q, want coder-32b", got)
	}
	if _, err := second.prompt(t, id, "Third question"); err != nil {
		t.Fatal(err)
	}
	if last := w.requests(t, 3)[2]; !strings.Contains(string(last.Body), `"model":"coder-32b"`) {
		t.Errorf("the request after the load named another model:\n%s", last.Body)
	}
}
