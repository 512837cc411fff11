-- The injection attack (lsptest.Injection) in a real Neovim: the README's
-- bare snippet (params.snippet) or the plugin's setup (params.setup), one
-- ask, and a user who answers every window/showMessageRequest "Deny".
-- Edits are applied as Neovim applies them (its own applyEdit handler, or
-- the plugin's); when the run has ended the user saves every buffer
-- (:wall), so that whatever reached the editor reaches the disk, where
-- the Go test looks for it.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

H.main(function()
  local p = H.params
  H.capture()
  -- The user: every question is answered with the action titled Deny.
  H.out.questions = {}
  vim.lsp.handlers["window/showMessageRequest"] = function(_, res)
    table.insert(H.out.questions, res.message)
    for _, a in ipairs(res.actions or {}) do
      if a.title == "Deny" then
        return a
      end
    end
    return vim.NIL
  end
  vim.cmd("luafile " .. vim.fn.fnameescape(p.snippet or p.setup))
  -- With the plugin the question comes through its own prompt.
  if p.setup then
    require("reika.question").prompt = function(message, titles)
      table.insert(H.out.questions, message)
      for _, t in ipairs(titles) do
        if t == "Deny" then
          return t
        end
      end
    end
  end
  local buf = H.open(p.file)
  local c = H.client(buf)
  H.count_applies(c)
  if p.setup then
    vim.cmd("ReikaAsk " .. p.instruction)
  else
    local answer
    H.request(c, "workspace/executeCommand", {
      command = "reika.ask",
      arguments = { { instruction = p.instruction, uri = vim.uri_from_bufnr(buf) } },
    }, function(err, result) answer = err or result end, buf)
    H.wait(5000, function() return answer ~= nil end, "reika.ask's answer")
    H.out.ask = answer
  end
  H.wait(45000, function()
    local last = H.out.progress[#H.out.progress]
    return last ~= nil and last:sub(1, 4) == "end:"
  end, "the end of the run's progress")
  H.out.final = H.wait_message(5000, p.final)
  -- The user saves everything the run changed.
  H.out.written = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified then
      table.insert(H.out.written, vim.api.nvim_buf_get_name(b))
    end
  end
  vim.cmd("silent! wall")
  H.lines(buf)
end)
