-- The names Reika adds to the protocol, mirrored from lsp/names.go: this
-- file is the only place the plugin spells them, and
-- editors/names_nvim_test.go fails when the two drift apart.
local M = {}

-- The commands the server executes (workspace/executeCommand).
M.commands = {
  ask = "reika.ask", -- {instruction, uri?, range?}
  compact = "reika.compact",
  status = "reika.status",
  cancel = "reika.cancel",
  save = "reika.save",
  new_session = "reika.newSession",
  resume = "reika.resume", -- {id?}
  list_sessions = "reika.listSessions",
  set_model = "reika.setModel", -- {model?}
  show_recap = "reika.showRecap",
  -- Answers to a proposal offered as code actions, for clients without
  -- workspace/applyEdit; Neovim has it, so the plugin never sends these.
  apply_proposal = "reika.applyProposal",
  apply_hunk = "reika.applyHunk",
  reject_proposal = "reika.rejectProposal",
  -- Reverts the edits the last run applied, where the text since is
  -- unchanged.
  undo_run = "reika.undoRun",
}

-- reika.ask's trust for a read-only run whose answer ends in a numbered
-- plan.
M.trust_plan = "plan"

-- The notification that carries the ctx chip to status lines:
-- {text, size, window, shed_point, percent, warn, running}.
M.status_notification = "reika/status"

return M
