-- With the plugin: the user asks (:ReikaAsk over a range, or without an
-- argument through the prompt); the agent's edit lands in the buffer; the
-- status line shows the chip; :ReikaSave's transcript holds the range.
-- With params.type_line the user types that line above everything just
-- before the edit arrives (the typing-while-editing scenario). With
-- params.diagnostic a warning shows in the buffer when the user asks.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

H.main(function()
  local p = H.params
  H.capture()
  vim.o.laststatus = 2
  -- The README's snippets, verbatim.
  for _, snippet in ipairs({ p.setup, p.statusline }) do
    if snippet then
      vim.cmd("luafile " .. vim.fn.fnameescape(snippet))
    end
  end
  vim.ui.input = function(opts, on_confirm)
    H.out.prompt = opts.prompt
    on_confirm(p.instruction)
  end
  -- What the plugin echoes (its progress line).
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
  local c = H.client(buf)
  if p.type_line then
    H.type_on_apply(c, buf, p.type_line)
  else
    H.count_applies(c)
  end
  if p.diagnostic then
    -- A linter of the user's shows a warning: it goes with the ask.
    local ns = vim.api.nvim_create_namespace("reika-test-lint")
    vim.diagnostic.set(ns, buf, { {
      lnum = p.diagnostic.lnum, col = p.diagnostic.col, severity = vim.diagnostic.severity.WARN,
      message = p.diagnostic.message, source = "testlint",
    } })
  end
  vim.cmd(p.ask)
  H.out.final = H.wait_message(15000, p.final)
  H.lines(buf)
  H.out.chip = require("reika").statusline()
  H.out.statusline = vim.api.nvim_eval_statusline(vim.o.statusline, {}).str
  local saved
  require("reika").save(function(r) saved = r end)
  H.wait(5000, function() return saved ~= nil end, "reika.save's answer")
  H.out.transcript = table.concat(vim.fn.readfile(saved.path), "\n")
end)
