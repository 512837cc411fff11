-- The server's questions (window/showMessageRequest): a command to run, a
-- change to a protected path with its diff, a new host for fetch_url.
-- Neovim's own handler puts the whole message on one line of an
-- inputlist; this one shows it line by line, the diff included, then the
-- numbered answers. Anything but a number picks no answer, which the
-- server takes as no.
local M = {}

-- prompt asks the user and returns the title picked, or nil. Replace it
-- (require("reika.question").prompt = function(message, titles) … end) to ask
-- another way; the tests answer through it.
function M.prompt(message, titles)
  local items = vim.split(message, "\n", { plain = true })
  for i, t in ipairs(titles) do
    table.insert(items, string.format("%d. %s", i, t))
  end
  local choice = vim.fn.inputlist(items)
  return titles[choice]
end

-- handler answers window/showMessageRequest.
function M.handler(_, params)
  if type(params) ~= "table" then
    return vim.NIL
  end
  local titles = {}
  for _, a in ipairs(params.actions or {}) do
    table.insert(titles, a.title)
  end
  local ok, pick = pcall(M.prompt, params.message or "", titles)
  if ok and pick then
    return { title = pick }
  end
  return vim.NIL
end

return M
