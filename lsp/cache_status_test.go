package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika/lsp/lsptest"
)

// reika.status names the prompt cache's class; the status line tells a
// checkpointed one with what it costs and the advice, and leaves a dense
// one's line as it was.
func TestStatusNamesThePromptCache(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		class string
		line  string // "" for none in the shown line
	}{
		{"forced checkpointed", map[string]string{"REIKA_CACHE_CLASS": "checkpointed"}, "checkpointed",
			" · prompt cache checkpointed (recurrent or hybrid) (env REIKA_CACHE_CLASS): recurrent/hybrid model: each change restarts from a checkpoint, " +
				"or from the start; a full slot (--ctx-checkpoints, default 32) keeps its old checkpoints --checkpoint-min-step apart (default 8192): " +
				"start llama-server with --checkpoint-min-step 512 so that one stands every 512 tokens of the window, and set REIKA_CHECKPOINT_MIN_STEP=512 (checkpoint_min_step) to tell Reika; or --ctx-checkpoints N for more"},
		{"forced SWA", map[string]string{"REIKA_SWA_WINDOW": "1024"}, "checkpointed",
			" · prompt cache checkpointed (sliding window 1024) (env REIKA_SWA_WINDOW): SWA model (window 1024): "},
		{"forced dense", map[string]string{"REIKA_CACHE_CLASS": "dense"}, "dense", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := lsptest.Start(t, lsptest.Config{Caps: lsptest.Full(), Files: map[string]string{"README.md": "# hi\n"}, Env: tc.env})
			raw, err := e.Exec("reika.status")
			if err != nil {
				t.Fatal(err)
			}
			var st struct {
				CacheClass string `json:"cache_class"`
				Cache      string `json:"cache"`
			}
			if err := json.Unmarshal(raw, &st); err != nil {
				t.Fatal(err)
			}
			if st.CacheClass != tc.class || !strings.Contains(st.Cache, tc.env["REIKA_CACHE_CLASS"]+tc.env["REIKA_SWA_WINDOW"]) {
				t.Errorf("reika.status cache = %q (%q), want class %s from the setting", st.CacheClass, st.Cache, tc.class)
			}
			shown := strings.Join(e.Transcript(), "\n")
			if tc.line != "" && !strings.Contains(shown, tc.line) {
				t.Errorf("the status line does not tell the cache %q:\n%s", tc.line, shown)
			}
			if tc.line == "" && strings.Contains(shown, "prompt cache") {
				t.Errorf("the status line tells a dense cache:\n%s", shown)
			}
		})
	}
}
