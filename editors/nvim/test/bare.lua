-- Without the plugin: the README's "Neovim without the plugin" snippet,
-- verbatim (params.snippet), then reika.ask through the client; the
-- agent's edit lands in the buffer. With params.type_line the user types
-- that line above everything just before the edit arrives.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

H.main(function()
  local p = H.params
  H.capture()
  vim.cmd("luafile " .. vim.fn.fnameescape(p.snippet))
  local buf = H.open(p.file)
  local c = H.client(buf)
  if p.type_line then
    H.type_on_apply(c, buf, p.type_line)
  else
    H.count_applies(c)
  end
  local answer
  H.request(c, "workspace/executeCommand", {
    command = "reika.ask",
    arguments = { { instruction = p.instruction, uri = vim.uri_from_bufnr(buf) } },
  }, function(err, result) answer = err or result end, buf)
  H.wait(5000, function() return answer ~= nil end, "reika.ask's answer")
  H.out.ask = answer
  H.out.final = H.wait_message(15000, p.final)
  H.lines(buf)
  if p.second then
    -- Another file of the project gets the same client.
    local other = H.open(p.second)
    H.out.same_client = H.client(other).id == c.id
  end
end)
