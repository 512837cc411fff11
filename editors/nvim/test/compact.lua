-- With the plugin: after a run, :ReikaCompact folds the conversation and
-- says so.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

H.main(function()
  local p = H.params
  H.capture()
  local buf = H.open(p.file)
  H.client(buf)
  vim.cmd(p.ask)
  H.wait_message(15000, p.final)
  vim.cmd("ReikaCompact")
  H.out.final = H.wait_message(15000, p.compacted)
  H.out.chip = require("reika").statusline()
end)
