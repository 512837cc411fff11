-- With the plugin: :checkhealth reika runs and reports the binary and its
-- version, and the engine, with the plugin's settings as the server gets
-- them (those that override the config file or REIKA_* are named).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

H.main(function()
  if H.params.settings or H.params.cmd then
    require("reika").setup({ settings = H.params.settings, cmd = H.params.cmd })
  end
  vim.cmd("checkhealth reika")
  H.lines(vim.api.nvim_get_current_buf(), "health")
end)
