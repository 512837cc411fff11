-- The answer in full: params.asks are asks in one session; for each, the
-- script waits for require("reika").answer() to hold params.asks[i].expect,
-- records the window below that shows it, closes that window, runs
-- :ReikaAnswer and records what it shows again.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

local function answer_window()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    local b = vim.api.nvim_win_get_buf(w)
    if vim.api.nvim_buf_get_name(b):match("Reika answer$") then
      return w, b
    end
  end
  return nil
end

H.main(function()
  local p = H.params
  H.capture()
  H.out.echoes = {}
  local echo = vim.api.nvim_echo
  vim.api.nvim_echo = function(chunks, history, opts)
    local text = ""
    for _, ch in ipairs(chunks) do
      text = text .. ch[1]
    end
    table.insert(H.out.echoes, text)
    return echo(chunks, history, opts)
  end
  local buf = H.open(p.file)
  H.client(buf)
  local reika = require("reika")
  H.out.shown = {}
  for _, a in ipairs(p.asks) do
    vim.cmd("ReikaAsk " .. a.instruction)
    H.wait(15000, function()
      local got = reika.answer()
      return got ~= nil and table.concat(got, "\n"):find(a.expect, 1, true) ~= nil
    end, "an answer holding " .. a.expect)
    local shown = { answer = reika.answer(), stayed = vim.api.nvim_get_current_buf() == buf }
    local w, b = answer_window()
    if w then
      shown.window = vim.api.nvim_buf_get_lines(b, 0, -1, true)
      vim.api.nvim_win_close(w, true)
    end
    vim.cmd("ReikaAnswer")
    w, b = answer_window()
    if w then
      shown.reopened = vim.api.nvim_buf_get_lines(b, 0, -1, true)
      vim.api.nvim_win_close(w, true)
    end
    table.insert(H.out.shown, shown)
  end
end)
