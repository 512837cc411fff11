package replay

import (
	"github.com/reika-lsp/reika/agent/engine"
)

// Helpers only the tests use: the acceptance checks the peers' token
// count against the engine's.

// promptTokens is what the engine will count for req.
func promptTokens(prefix int, msgs []engine.Message) int {
	n := prefix + genPrompt
	for _, m := range msgs {
		if m.Role != "system" {
			n += blockTokens(m)
		}
	}
	return n
}
