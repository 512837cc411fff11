package agent

import (
	"context"

	"github.com/reika-lsp/reika/agent/tools"
)

// planPreface leads the instruction of a plan-mode run (tools.Plan), in
// the user's message: the fixed system prompt stays byte for byte the
// same in every mode, so the engine's cache of it serves them all.
const planPreface = "[Plan mode: read-only. Look with read, glob, grep and read-only commands; " +
	"edits, new files and other commands are refused. Change nothing: end your answer with a " +
	"numbered plan (1., 2., …) of the changes to make — the files, what to change in each, and " +
	"the commands that check it — which the user can then have carried out.]\n\n"

// instructionFor is the instruction as the model reads it in the run ctx
// carries: with the plan preface in plan mode.
func instructionFor(ctx context.Context, instruction string) string {
	if tools.RunMode(ctx) == tools.Plan {
		return planPreface + instruction
	}
	return instruction
}
