package main

import (
	"context"
	"fmt"
	"io"
)

// runSim is replaced by the simulated engine's command.
func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "reika-lsp sim: not built yet")
	return 1
}
