-- Reika's commands, and the autocommand that starts reika-lsp for the
-- buffers of the configured filetypes. Everything else is in lua/reika/,
-- loaded when first used; require("reika").setup{} is optional.
if vim.g.loaded_reika then
  return
end
vim.g.loaded_reika = true

local function reika()
  return require("reika")
end

local command = vim.api.nvim_create_user_command

command("ReikaAsk", function(o)
  local range = o.range > 0 and { o.line1, o.line2 } or nil
  if o.args ~= "" then
    reika().ask(o.args, range)
  else
    reika().prompt(range)
  end
end, { nargs = "*", range = true, desc = "Reika: ask the agent (the selected lines with a range)" })
command("ReikaPlan", function(o)
  local range = o.range > 0 and { o.line1, o.line2 } or nil
  if o.args ~= "" then
    reika().plan(o.args, range)
  else
    reika().prompt(range, require("reika.names").trust_plan)
  end
end, { nargs = "*", range = true, desc = "Reika: a read-only plan, nothing edited (the selected lines with a range)" })
command("ReikaCompact", function() reika().compact() end, { desc = "Reika: fold the conversation now" })
command("ReikaCancel", function() reika().cancel() end, { desc = "Reika: stop the run under way" })
command("ReikaStatus", function() reika().show_status() end, { desc = "Reika: the ctx chip and the budget" })
command("ReikaSave", function() reika().save() end, { desc = "Reika: save the transcript as Markdown" })
command("ReikaNew", function() reika().new_session() end, { desc = "Reika: start a new session" })
command("ReikaRecap", function() reika().recap() end, { desc = "Reika: open the recap to edit it" })
command("ReikaAnswer", function() reika().show_answer() end, { desc = "Reika: show the last run's end and answer again" })
command("ReikaResume", function() reika().resume() end, { desc = "Reika: continue the previous session" })
command("ReikaUndoRun", function() reika().undo_run() end, { desc = "Reika: undo this run (the edits the last run applied)" })

vim.api.nvim_create_autocmd("FileType", {
  group = vim.api.nvim_create_augroup("reika", { clear = true }),
  callback = function(ev)
    reika().on_filetype(ev.buf)
  end,
})
