-- Reika for Neovim: starts reika-lsp for the buffers of the configured
-- filetypes, one client per project root, and adds the commands, the
-- status line chip, progress on one line and a careful applyEdit.
--
--   require("reika").setup({
--     cmd = { "reika-lsp" },                              -- $REIKA_LSP wins
--     settings = { endpoint = "http://127.0.0.1:8080/v1" }, -- the config file's keys
--     filetypes = { "go", "python" },
--   })
--
-- setup() is optional: plugin/reika.lua attaches with the defaults.
local names = require("reika.names")
local client = require("reika.client")
local apply = require("reika.apply")
local question = require("reika.question")

local M = {}

local defaults = {
  cmd = { "reika-lsp" },
  settings = {},
  filetypes = {
    "c", "cpp", "cs", "css", "elixir", "go", "html", "java", "javascript", "javascriptreact",
    "json", "kotlin", "lua", "markdown", "php", "python", "ruby", "rust", "scala", "sh",
    "swift", "toml", "typescript", "typescriptreact", "yaml", "zig",
  },
  root_markers = client.default_markers,
  flags = nil, -- passed to the client (debounce_text_changes, …)
  capabilities = nil, -- merged into Neovim's own
}

M.config = vim.deepcopy(defaults)

-- The latest reika/status params, and the latest progress line.
local status = nil
local progress_line = ""

-- statusline returns the ctx chip from the latest reika/status
-- notification ("" before the first), for 'statusline' or a status line
-- plugin: %{v:lua.require'reika'.statusline()}.
function M.statusline()
  return status and status.text or ""
end

-- detail returns the window by part from the latest reika/status
-- ("prefix 2100 · map 900 · … · free 6800"), "" before the first.
function M.detail()
  local b = status and status.breakdown
  if type(b) ~= "table" then
    return ""
  end
  local line = string.format("prefix %d · map %d · recap %d · history %d · tools %d",
    b.prefix or 0, b.repo_map or 0, b.recap or 0, b.history or 0, b.tools or 0)
  if (b.window or 0) > 0 then
    line = line .. string.format(" · reserve %d · free %d", b.reserve or 0, b.free or 0)
  end
  return line
end

-- status returns the latest reika/status params, or nil.
function M.status()
  return status
end

-- progress returns the latest $/progress line ("" when no run is under way).
function M.progress()
  return progress_line
end

local function redraw()
  pcall(vim.cmd, "redrawstatus")
  pcall(vim.cmd, "silent doautocmd <nomodeline> User ReikaStatus")
end

local function on_status(_, params)
  if type(params) == "table" then
    status = params
    redraw()
  end
end

-- echo shows one line, cut to the room the command line has.
local function echo(line)
  local room = vim.v.echospace
  if room and room > 0 and vim.fn.strdisplaywidth(line) > room then
    line = vim.fn.strcharpart(line, 0, room - 1) .. "…"
  end
  vim.api.nvim_echo({ { line } }, false, {})
end

local function on_progress(err, params, ctx, config)
  local default = vim.lsp.handlers["$/progress"]
  if default then
    pcall(default, err, params, ctx, config)
  end
  local v = params and params.value
  if type(v) ~= "table" then
    return
  end
  if v.kind == "begin" then
    progress_line = "Reika: " .. (v.message or v.title or "working")
  elseif v.kind == "report" and v.message then
    progress_line = "Reika: " .. v.message
  elseif v.kind == "end" then
    progress_line = ""
    echo("Reika: " .. (v.message or "done"))
    redraw()
    return
  end
  echo(progress_line)
  redraw()
end

-- The end of the last run, in full: its message, then (when the server
-- logged it) the answer's lines, or the answer document's.
local answer = nil
local answer_buf = nil

-- answer returns the lines of the last run's end and answer, or nil.
function M.answer()
  return answer
end

-- The server's message at the end of a run begins so.
local function ends_run(message)
  return message:match("^Reika: ") or message:match("^Reika stopped") or message:match("^Reika finished: ")
end

local function fits(text)
  local room = vim.v.echospace
  if not room or room <= 0 then
    room = vim.o.columns - 12
  end
  return not text:find("\n") and vim.fn.strdisplaywidth(text) <= room
end

-- show_answer shows the last run's end and answer in a scratch buffer in a
-- window below, and stays in the current window (:ReikaAnswer).
function M.show_answer()
  if not answer then
    vim.notify("Reika: no answer yet", vim.log.levels.INFO)
    return nil
  end
  if not (answer_buf and vim.api.nvim_buf_is_valid(answer_buf)) then
    answer_buf = vim.api.nvim_create_buf(false, true)
    vim.bo[answer_buf].bufhidden = "hide"
    vim.bo[answer_buf].filetype = "markdown"
    pcall(vim.api.nvim_buf_set_name, answer_buf, "Reika answer")
  end
  vim.bo[answer_buf].modifiable = true
  vim.api.nvim_buf_set_lines(answer_buf, 0, -1, false, answer)
  vim.bo[answer_buf].modifiable = false
  local shown = vim.fn.bufwinid(answer_buf)
  if shown == -1 then
    local here = vim.api.nvim_get_current_win()
    vim.cmd("botright " .. math.max(3, math.min(#answer, 15)) .. "split")
    vim.api.nvim_win_set_buf(0, answer_buf)
    vim.wo.wrap = true
    vim.api.nvim_set_current_win(here)
  end
  return answer_buf
end

local function global(method)
  return vim.lsp.handlers[method]
end

-- on_show_message: the end of a run is kept for :ReikaAnswer; shown in a
-- window below when it does not fit the command line (Neovim would cut it
-- or ask to press Enter), else as Neovim shows messages.
local function on_show_message(err, params, ctx, config)
  local msg = params and params.message
  local prefix = "Reika's answer:\n"
  if type(msg) == "string" and msg:sub(1, #prefix) == prefix and answer then
    -- The answer whole, which the server sends after the end line to a
    -- client that opens no document: it joins that end, in the window.
    vim.list_extend(answer, { "" })
    vim.list_extend(answer, vim.split(msg:sub(#prefix + 1), "\n", { plain = true }))
    M.show_answer()
    return
  end
  if type(msg) == "string" and ends_run(msg) then
    answer = vim.split(msg, "\n", { plain = true })
    if not fits(msg) then
      M.show_answer()
      return
    end
  end
  return global("window/showMessage")(err, params, ctx, config)
end

-- on_log_message: an answer of several lines, which the server logs after
-- the one-line end of its run, joins that end.
local function on_log_message(err, params, ctx, config)
  local msg = params and params.message
  local prefix = "Reika's answer:\n"
  if type(msg) == "string" and msg:sub(1, #prefix) == prefix and answer then
    vim.list_extend(answer, { "" })
    vim.list_extend(answer, vim.split(msg:sub(#prefix + 1), "\n", { plain = true }))
    M.show_answer()
  end
  return global("window/logMessage")(err, params, ctx, config)
end

-- on_show_document: a long answer, which the server writes to a document
-- and opens, joins the end of its run; other documents open as Neovim
-- opens them.
local function on_show_document(err, params, ctx, config)
  local uri = params and params.uri
  if type(uri) == "string" and uri:match("/answer%-[%d-]+%.md$") then
    local ok, lines = pcall(vim.fn.readfile, vim.uri_to_fname(uri))
    if ok then
      answer = answer or {}
      vim.list_extend(answer, { "" })
      vim.list_extend(answer, lines)
      M.show_answer()
      return { success = true }
    end
  end
  local default = global("window/showDocument")
  if not default then
    return { success = false }
  end
  return default(err, params, ctx, config)
end

-- handlers are the handlers of every Reika client.
function M.handlers()
  return {
    ["workspace/applyEdit"] = apply.handler,
    ["window/showMessageRequest"] = question.handler,
    ["window/showMessage"] = on_show_message,
    ["window/logMessage"] = on_log_message,
    ["window/showDocument"] = on_show_document,
    ["$/progress"] = on_progress,
    [names.status_notification] = on_status,
  }
end

-- attach starts or reuses the client for the buffer's project and
-- attaches the buffer.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  return client.attach(bufnr, M.config, M.handlers())
end

local function wanted(bufnr)
  return vim.tbl_contains(M.config.filetypes, vim.bo[bufnr].filetype)
end

-- on_filetype attaches a buffer of a configured filetype.
function M.on_filetype(bufnr)
  if wanted(bufnr) then
    M.attach(bufnr)
  end
end

-- setup configures the plugin and attaches the loaded buffers of the
-- configured filetypes; running clients get the new settings (pushed, or,
-- when one that widens trust changed, by a restart with them as
-- init_options).
function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
  if opts and opts.filetypes then
    M.config.filetypes = opts.filetypes -- a list replaces, never merges
  end
  for _, c in ipairs(client.all()) do
    -- A setting that widens trust reaches the server only at startup (a
    -- push of it is ignored): such a change restarts the client, which
    -- the loop below starts again with the new init_options.
    if client.widens(c.config.init_options, M.config.settings) then
      client.restart(c)
    else
      client.notify(c, "workspace/didChangeConfiguration", { settings = { reika = M.config.settings } })
    end
  end
  for _, nr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(nr) then
      M.on_filetype(nr)
    end
  end
end

local function warn(msg, level)
  vim.notify(msg, level or vim.log.levels.WARN)
end

-- execute runs one of Reika's commands on the client of the current
-- buffer; on_result gets the result. Errors are shown; the server shows
-- its own messages.
function M.execute(command, args, on_result)
  local bufnr = vim.api.nvim_get_current_buf()
  local c = client.for_buf(bufnr, M.config.root_markers)
  if not c then
    warn("Reika: no reika-lsp runs for this buffer (its filetype is not in require('reika').setup{filetypes=…}?)")
    return
  end
  client.request(c, "workspace/executeCommand", { command = command, arguments = args }, function(err, result)
    if err then
      warn("Reika: " .. command .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if on_result then
      on_result(result)
    end
  end, bufnr)
end

-- selection_range is the LSP range of lines first..last (1-based) of the
-- buffer, from the start of the first to the end of the last.
local function selection_range(bufnr, first, last, encoding)
  local text = vim.api.nvim_buf_get_lines(bufnr, last - 1, last, false)[1] or ""
  local col = #text
  if encoding ~= "utf-8" then
    local ok, utf32, utf16 = pcall(vim.str_utfindex, text, #text)
    if ok then
      col = encoding == "utf-32" and utf32 or utf16
    end
  end
  return { start = { line = first - 1, character = 0 }, ["end"] = { line = last - 1, character = col } }
end

-- ask sends reika.ask: the instruction, the buffer, and with range
-- ({first, last}, 1-based lines) the selected lines; trust, when given,
-- is the run's mode (names.trust_plan); and the errors and warnings
-- Neovim shows in the workspace (diagnostics.lua).
function M.ask(instruction, range, trust)
  local bufnr = vim.api.nvim_get_current_buf()
  local args = { instruction = instruction, trust = trust }
  local c = client.for_buf(bufnr, M.config.root_markers)
  if c and vim.lsp.buf_is_attached(bufnr, c.id) then
    args.uri = vim.uri_from_bufnr(bufnr)
    if range then
      args.range = selection_range(bufnr, range[1], range[2], c.offset_encoding or "utf-16")
    end
  end
  if c then
    args.diagnostics = require("reika.diagnostics").workspace(c.config.root_dir, c.offset_encoding or "utf-16")
  end
  M.execute(names.commands.ask, { args }, function(result)
    if type(result) == "table" and result.started == false and result.reason then
      warn("Reika did not start: " .. result.reason)
    end
  end)
end

-- plan sends reika.ask in the plan mode: read-only, nothing edited, the
-- answer a numbered plan.
function M.plan(instruction, range)
  M.ask(instruction, range, names.trust_plan)
end

-- prompt asks for an instruction (vim.ui.input), then sends it, with
-- trust when given (names.trust_plan).
function M.prompt(range, trust)
  local label = trust == names.trust_plan and "Reika plan: " or "Reika: "
  local function go(text)
    if text and vim.trim(text) ~= "" then
      M.ask(text, range, trust)
    end
  end
  if vim.ui and vim.ui.input then
    vim.ui.input({ prompt = label }, go)
  else
    go(vim.fn.input(label))
  end
end

-- The commands below show nothing themselves (the server shows what
-- happened); on_result, when given, gets the command's result.

function M.compact(on_result)
  M.execute(names.commands.compact, {}, on_result)
end

function M.cancel(on_result)
  M.execute(names.commands.cancel, {}, on_result)
end

function M.show_status()
  M.execute(names.commands.status, {}, function(result)
    if type(result) == "table" and result.chip then
      status = vim.tbl_extend("force", status or {}, { text = result.chip })
      redraw()
    end
  end)
end

function M.save(on_result)
  M.execute(names.commands.save, {}, on_result)
end

function M.new_session(on_result)
  M.execute(names.commands.new_session, {}, on_result)
end

function M.recap(on_result)
  M.execute(names.commands.show_recap, {}, on_result)
end

function M.resume(on_result)
  M.execute(names.commands.resume, {}, on_result)
end

function M.undo_run(on_result)
  M.execute(names.commands.undo_run, {}, on_result)
end

return M
