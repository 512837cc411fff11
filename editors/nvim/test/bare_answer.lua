-- Without the plugin (the README's snippet, params.snippet): reika.ask,
-- whose answer has several lines (params.final); the script waits for it
-- whole, in a message or in a document the server opened, and records
-- where (whole_in) and the text that held it (whole).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

local function whole(text)
  for _, m in ipairs(H.out.messages) do
    if m:find(text, 1, true) then
      return "message", m
    end
  end
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_name(b):match("answer%-[%d%-]+%.md$") then
      local lines = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, true), "\n")
      if lines:find(text, 1, true) then
        return "document", lines
      end
    end
  end
  return nil
end

H.main(function()
  local p = H.params
  H.capture()
  vim.cmd("luafile " .. vim.fn.fnameescape(p.snippet))
  local buf = H.open(p.file)
  local c = H.client(buf)
  local answer
  H.request(c, "workspace/executeCommand", {
    command = "reika.ask",
    arguments = { { instruction = p.instruction, uri = vim.uri_from_bufnr(buf) } },
  }, function(err, result) answer = err or result end, buf)
  H.wait(5000, function() return answer ~= nil end, "reika.ask's answer")
  H.out.ask = answer
  H.wait(15000, function() return whole(p.final) ~= nil end, "the answer whole")
  H.out.whole_in, H.out.whole = whole(p.final)
end)
