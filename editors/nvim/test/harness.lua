-- What the scenario scripts share. editors/nvim_test.go runs each script
-- in headless Neovim (0.7 and current) as
--   nvim --headless --clean [--cmd "set rtp^=editors/nvim"]
--        --cmd "let g:reika_test_params = 'params.json'" -c "luafile SCRIPT"
-- The script calls H.main(fn): fn runs under xpcall (a Lua error inside
-- -c would leave headless Neovim running forever), what it records goes
-- to params.out as JSON, and Neovim quits with 0, or 1 on an error.
local H = {}

H.params = vim.fn.json_decode(table.concat(vim.fn.readfile(vim.g.reika_test_params), "\n"))
-- out is what the Go test reads: messages, progress, buffer lines, …
H.out = { messages = {}, progress = {}, applies = 0 }

local new_api = vim.fn.has("nvim-0.11") == 1

-- slow is the tests' slowness factor (REIKA_TEST_SLOW, internal/testslow).
local slow = tonumber(os.getenv("REIKA_TEST_SLOW") or "") or 1

-- wait polls cond until it is true or ms (times slow) pass; it fails
-- naming what.
function H.wait(ms, cond, what)
  ms = ms * slow
  if not vim.wait(ms, cond, 20) then
    error("timed out after " .. ms .. " ms waiting for " .. what, 2)
  end
end

-- capture records every window/showMessage and $/progress of every
-- client (the plugin's own $/progress handler calls the global one).
-- The plugin's clients have a showMessage handler of their own (it calls
-- the global one for the messages it does not show itself): it is
-- wrapped too, and a message is recorded once.
function H.capture()
  local inside = false
  local show = vim.lsp.handlers["window/showMessage"]
  vim.lsp.handlers["window/showMessage"] = function(err, res, ctx, cfg)
    if not inside then
      table.insert(H.out.messages, res.message)
    end
    return show(err, res, ctx, cfg)
  end
  local ok, reika = pcall(require, "reika")
  if ok then
    local handlers = reika.handlers
    reika.handlers = function()
      local hs = handlers()
      local own = hs["window/showMessage"]
      hs["window/showMessage"] = function(err, res, ctx, cfg)
        table.insert(H.out.messages, res.message)
        inside = true
        local ok2, r = pcall(own, err, res, ctx, cfg)
        inside = false
        if not ok2 then
          error(r)
        end
        return r
      end
      return hs
    end
  end
  local prog = vim.lsp.handlers["$/progress"]
  vim.lsp.handlers["$/progress"] = function(err, res, ctx, cfg)
    if res and type(res.value) == "table" then
      table.insert(H.out.progress, res.value.kind .. ": " .. (res.value.message or res.value.title or ""))
    end
    if prog then
      return prog(err, res, ctx, cfg)
    end
  end
end

-- message returns the first captured message holding text, or nil.
function H.message(text)
  for _, m in ipairs(H.out.messages) do
    if m:find(text, 1, true) then
      return m
    end
  end
  return nil
end

-- wait_message waits for a message holding text and returns it.
function H.wait_message(ms, text)
  H.wait(ms, function() return H.message(text) ~= nil end, "a message saying " .. text)
  return H.message(text)
end

-- client waits for the initialized Reika client attached to bufnr.
function H.client(bufnr)
  local found
  H.wait(5000, function()
    local list = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
    for _, c in ipairs(list) do
      if c.name == "reika" and c.initialized and vim.lsp.buf_is_attached(bufnr, c.id) then
        found = c
        return true
      end
    end
    return false
  end, "the reika client to start and attach")
  return found
end

-- request sends a request as the running Neovim spells it.
function H.request(c, method, params, handler, bufnr)
  if new_api then
    return c:request(method, params, handler, bufnr)
  end
  return c.request(method, params, handler, bufnr)
end

-- type_on_apply makes the user type line above everything just before
-- the first workspace/applyEdit is handled, before Neovim has sent the
-- didChange for it: the client's applyEdit handler (or the global one) is
-- wrapped so that the line goes in first, then the real handler runs.
function H.type_on_apply(c, bufnr, line)
  local own = c.handlers["workspace/applyEdit"] ~= nil
  local real = c.handlers["workspace/applyEdit"] or vim.lsp.handlers["workspace/applyEdit"]
  local typed = false
  local function wrapped(err, res, ctx, cfg)
    if not typed then
      typed = true
      vim.api.nvim_buf_set_lines(bufnr, 0, 0, true, { line })
    end
    local answer = real(err, res, ctx, cfg)
    table.insert(H.out.answers, answer)
    return answer
  end
  H.out.answers = {}
  if own then
    c.handlers["workspace/applyEdit"] = wrapped
  else
    vim.lsp.handlers["workspace/applyEdit"] = wrapped
  end
end

-- count_applies counts the workspace/applyEdit requests (wrapping like
-- type_on_apply, without typing).
function H.count_applies(c)
  local key = "workspace/applyEdit"
  local own = c.handlers[key] ~= nil
  local real = c.handlers[key] or vim.lsp.handlers[key]
  local function wrapped(...)
    H.out.applies = H.out.applies + 1
    return real(...)
  end
  if own then
    c.handlers[key] = wrapped
  else
    vim.lsp.handlers[key] = wrapped
  end
end

-- open edits the scenario's file and returns its buffer.
function H.open(name)
  vim.cmd("edit " .. vim.fn.fnameescape(name))
  return vim.api.nvim_get_current_buf()
end

-- lines records a buffer's lines under key.
function H.lines(bufnr, key)
  H.out[key or "lines"] = vim.api.nvim_buf_get_lines(bufnr, 0, -1, true)
end

local function write()
  local f = assert(io.open(H.params.out, "w"))
  f:write(vim.fn.json_encode(H.out))
  f:close()
end

-- main runs fn, writes what was recorded and quits.
function H.main(fn)
  H.out.version = tostring(vim.version().major) .. "." .. tostring(vim.version().minor)
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    H.out.error = tostring(err)
  end
  local wok, werr = pcall(write)
  if not wok then
    io.stderr:write("writing the result: " .. tostring(werr) .. "\n")
  end
  if ok and wok then
    vim.cmd("qa!")
  else
    io.stderr:write(tostring(err) .. "\n")
    vim.cmd("cquit 1")
  end
end

return H
