-- With the plugin: :ReikaCancel while the agent waits for the engine
-- stops the run; nothing lands in the buffer.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

H.main(function()
  local p = H.params
  H.capture()
  local buf = H.open(p.file)
  local c = H.client(buf)
  H.count_applies(c)
  vim.cmd(p.ask)
  -- The engine answers the first turn at once and the second after a
  -- while: cancel once the first tool has run.
  H.wait(10000, function()
    for _, l in ipairs(H.out.progress) do
      if l:find(p.progress_before_cancel, 1, true) then
        return true
      end
    end
    return false
  end, "progress saying " .. p.progress_before_cancel)
  vim.cmd("ReikaCancel")
  H.out.final = H.wait_message(10000, p.final)
  H.wait(5000, function() return H.out.progress[#H.out.progress]:find("^end") ~= nil end, "the progress to end")
  H.lines(buf)
end)
