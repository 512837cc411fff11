package catalog

import "testing"

func TestSnapshotSize(t *testing.T) {
	p, m := Size()
	// The snapshot README: 141 providers, 4212 models.
	if p != 141 || m != 4212 {
		t.Errorf("Size() = %d providers, %d models; want 141, 4212", p, m)
	}
}

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		host, model       string
		provider, modelID string
		context           int
		ok                bool
	}{
		{"api.openai.com", "gpt-4o", "openai", "gpt-4o", 128000, true},
		{"API.OpenAI.com", "GPT-4o", "openai", "gpt-4o", 128000, true},
		{"api.openai.com", "openai/gpt-4o", "openai", "gpt-4o", 128000, true},
		{"openrouter.ai", "openai/gpt-4", "openrouter", "openai/gpt-4", 0, true},
		{"openrouter.ai", "gpt-4", "openrouter", "openai/gpt-4", 0, true},
		{"api.deepseek.com", "deepseek-chat", "deepseek", "deepseek-chat", 0, true},
		{"api.openai.com", "no-such-model", "", "", 0, false},
		{"example.com", "gpt-4o", "", "", 0, false},
		{"api.openai.com", "", "", "", 0, false},
	} {
		m, ok := Lookup(tc.host, tc.model)
		if ok != tc.ok || m.Provider != tc.provider || m.Model != tc.modelID {
			t.Errorf("Lookup(%q, %q) = %+v, %v; want provider %q model %q, %v", tc.host, tc.model, m, ok, tc.provider, tc.modelID, tc.ok)
			continue
		}
		if ok && tc.context != 0 && m.Limits.Context != tc.context {
			t.Errorf("Lookup(%q, %q).Limits.Context = %d, want %d", tc.host, tc.model, m.Limits.Context, tc.context)
		}
		if ok && m.Limits.Context <= 0 {
			t.Errorf("Lookup(%q, %q).Limits.Context = %d, want > 0", tc.host, tc.model, m.Limits.Context)
		}
	}
}

func BenchmarkLookup(b *testing.B) {
	Lookup("api.openai.com", "gpt-4o")
	for b.Loop() {
		Lookup("openrouter.ai", "anthropic/claude-sonnet-4")
	}
}

// Size reports how many providers and models the snapshot holds.
func Size() (providers, models int) {
	ix, err := load()
	if err != nil {
		return 0, 0
	}
	for _, p := range ix.providers {
		models += len(p.Models)
	}
	return len(ix.providers), models
}
