-- With the plugin: :checkhealth reika runs and reports the binary and its
-- version, and the engine.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

H.main(function()
  vim.cmd("checkhealth reika")
  H.lines(vim.api.nvim_get_current_buf(), "health")
end)
