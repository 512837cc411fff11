// Package catalog holds a snapshot of the models.dev catalog's token limits,
// embedded in the binary, and looks up a hosted model's context window and
// output limit by the endpoint's host and the model id.
//
//	m, ok := catalog.Lookup("api.openai.com", "gpt-4o")
//	// m.Provider == "openai", m.Limits.Context == 128000
//
// It is consulted for hosted endpoints only: the caller never asks about a
// loopback or private host. Nothing is fetched at run time. The snapshot and
// its licence are in this directory (README.md, LICENSE.models-dev).
// Lookup is safe for concurrent use.
package catalog

import (
	_ "embed"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"sync"
)

//go:embed models-dev-limits.json
var snapshot []byte

// Limits are a model's token limits; zero means the catalog does not say.
type Limits struct {
	Context int `json:"context"`
	Output  int `json:"output"`
	Input   int `json:"input"`
}

// Match is a catalog entry found for an endpoint and model.
type Match struct {
	Provider string // the catalog's provider id, e.g. "openai"
	Model    string // the catalog's model id
	Limits   Limits
}

type provider struct {
	API    string            `json:"api"`
	Models map[string]Limits `json:"models"`
}

// wellKnownHosts are the API hosts of providers the catalog lists without
// an "api" address.
var wellKnownHosts = map[string]string{
	"api.openai.com":                    "openai",
	"api.anthropic.com":                 "anthropic",
	"generativelanguage.googleapis.com": "google",
	"api.groq.com":                      "groq",
	"api.mistral.ai":                    "mistral",
	"api.x.ai":                          "xai",
	"api.together.xyz":                  "togetherai",
	"api.cerebras.ai":                   "cerebras",
	"api.deepinfra.com":                 "deepinfra",
	"api.perplexity.ai":                 "perplexity",
	"api.cohere.com":                    "cohere",
	"api.cohere.ai":                     "cohere",
	"api.venice.ai":                     "venice",
	"aihubmix.com":                      "aihubmix",
}

type index struct {
	providers map[string]provider
	byHost    map[string][]string // host → provider ids, sorted
}

var load = sync.OnceValues(func() (*index, error) {
	var ps map[string]provider
	if err := json.Unmarshal(snapshot, &ps); err != nil {
		return nil, err
	}
	ix := &index{providers: ps, byHost: map[string][]string{}}
	for id, p := range ps {
		if p.API == "" {
			continue
		}
		if u, err := url.Parse(p.API); err == nil && u.Hostname() != "" {
			h := strings.ToLower(u.Hostname())
			ix.byHost[h] = append(ix.byHost[h], id)
		}
	}
	for h, id := range wellKnownHosts {
		if _, ok := ps[id]; ok {
			ix.byHost[h] = append(ix.byHost[h], id)
		}
	}
	for h := range ix.byHost {
		sort.Strings(ix.byHost[h])
	}
	return ix, nil
})

func providersFor(host string) []string {
	ix, err := load()
	if err != nil {
		return nil
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if ids := ix.byHost[host]; len(ids) > 0 {
		return ids
	}
	if strings.HasSuffix(host, ".openai.azure.com") {
		if _, ok := ix.providers["azure"]; ok {
			return []string{"azure"}
		}
	}
	return nil
}

// Lookup finds the model's limits among the providers serving at host. The
// model id is matched exactly, then without case, then without a leading
// "vendor/" on either side (routers prefix ids with the vendor, direct
// APIs do not).
func Lookup(host, model string) (Match, bool) {
	ix, err := load()
	if err != nil || model == "" {
		return Match{}, false
	}
	for _, id := range providersFor(host) {
		if m, ok := findModel(ix.providers[id].Models, model); ok {
			return Match{Provider: id, Model: m, Limits: ix.providers[id].Models[m]}, true
		}
	}
	return Match{}, false
}

func findModel(models map[string]Limits, model string) (string, bool) {
	if _, ok := models[model]; ok {
		return model, true
	}
	base := func(s string) string { return strings.ToLower(s[strings.LastIndex(s, "/")+1:]) }
	var exactFold, baseMatch []string
	for id := range models {
		switch {
		case strings.EqualFold(id, model):
			exactFold = append(exactFold, id)
		case base(id) == base(model):
			baseMatch = append(baseMatch, id)
		}
	}
	for _, cands := range [][]string{exactFold, baseMatch} {
		if len(cands) > 0 {
			sort.Strings(cands)
			return cands[0], true
		}
	}
	return "", false
}
