// Package editors holds the editor integrations — the VS Code extension
// (vscode/), the Neovim plugin (nvim/) — and their end-to-end tests: real
// editors, run headless, over `reika-lsp serve` and `reika-lsp sim
// --script`.
//
// The tests skip an editor that is not installed, unless
// REIKA_EDITORS=require (as .ci/run sets it), where a missing editor
// fails the test.
package editors
