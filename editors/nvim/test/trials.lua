-- The race and the undo, with the plugin or bare (params.snippet: the
-- README's snippet). Every applyEdit goes through a wrapper of the
-- client's handler (the plugin's, or Neovim's own) that can act as the
-- user just before it (type) and after it (undo).
--   race: params.n asks in one session, one per function Fi; each edit
--         arrives just after the user typed a line above Fi (at the top
--         for odd i, right above Fi for even i), before Neovim sent it.
--   undo: the edit lands; the user undoes it 50 ms later, before Neovim's
--         debounce sent the edit's didChange.
-- Each trial records the buffer after the run, the answers to its
-- applyEdits, the end-of-run message (and, for the undo, the buffer right
-- after the user's undo); the Go side judges them.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

local function say(a)
  if type(a) == "table" and a.applied == true then
    return "applied"
  elseif type(a) == "table" and a.applied == false then
    return "refused: " .. tostring(a.failureReason)
  end
  return "error: " .. vim.inspect(a)
end

H.main(function()
  local p = H.params
  H.capture()
  if p.snippet then
    vim.cmd("luafile " .. vim.fn.fnameescape(p.snippet))
  end
  local buf = H.open(p.file)
  local c = H.client(buf)
  local key = "workspace/applyEdit"
  local own = c.handlers[key] ~= nil
  local real = c.handlers[key] or vim.lsp.handlers[key]
  local before, after
  local answers = {}
  local function wrapped(err, res, ctx, cfg)
    if before then
      local f = before
      before = nil
      f()
    end
    local answer = real(err, res, ctx, cfg)
    table.insert(answers, answer)
    if after then
      local f = after
      after = nil
      f(answer)
    end
    return answer
  end
  if own then
    c.handlers[key] = wrapped
  else
    vim.lsp.handlers[key] = wrapped
  end

  local function ask(instruction)
    if p.snippet then
      local answer
      H.request(c, "workspace/executeCommand", {
        command = "reika.ask",
        arguments = { { instruction = instruction, uri = vim.uri_from_bufnr(buf) } },
      }, function(err, result) answer = err or result end, buf)
      H.wait(5000, function() return answer ~= nil end, "reika.ask's answer")
    else
      require("reika").ask(instruction)
    end
  end
  local function lines()
    return vim.api.nvim_buf_get_lines(buf, 0, -1, true)
  end
  local function since(from)
    local out = {}
    for k = from + 1, #answers do
      table.insert(out, say(answers[k]))
    end
    return out
  end

  H.out.trials = {}
  if p.mode == "race" then
    for i = 1, p.n do
      local from = #answers
      before = function()
        local at = 0
        if i % 2 == 0 then
          for n, l in ipairs(lines()) do
            if l == "// F" .. i .. " says hello." then
              at = n - 1
              break
            end
          end
        end
        vim.api.nvim_buf_set_lines(buf, at, at, true, { "// typed before F" .. i })
      end
      ask("Capitalize F" .. i .. "'s greeting.")
      local final = H.wait_message(15000, "Done " .. i .. ".")
      -- The user pauses before the next ask: Neovim sends what changed.
      vim.wait(250)
      table.insert(H.out.trials, { lines = lines(), answers = since(0 + from), final = final })
    end
  else
    local undone
    after = function(answer)
      if type(answer) == "table" and answer.applied == true then
        vim.defer_fn(function()
          vim.api.nvim_buf_call(buf, function() vim.cmd("silent undo") end)
          undone = lines()
        end, 50)
      end
    end
    ask("Capitalize the greeting.")
    local final = H.wait_message(15000, "Done.")
    H.wait(5000, function() return undone ~= nil end, "the user's undo")
    -- Time for the server to send the edit again, if it does.
    vim.wait(1000)
    table.insert(H.out.trials, { lines = lines(), answers = since(0), final = final, undone = undone })
  end
end)
