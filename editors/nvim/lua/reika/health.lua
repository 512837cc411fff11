-- :checkhealth reika — the server binary, its version, and what
-- `reika-lsp check --json --no-tools` says about the engine. (--no-tools:
-- a health check should not cost a generation, which on a real model
-- takes seconds to minutes; `reika-lsp check` in a shell does it.)
local M = {}

-- report is vim.health (0.9+) or the health module of 0.7/0.8, whose
-- functions are named report_*.
local function report()
  local h = vim.health
  if h and h.start then
    return h
  end
  local old = require("health")
  return {
    start = old.report_start,
    ok = old.report_ok,
    info = old.report_info,
    warn = old.report_warn,
    error = old.report_error,
  }
end

local function run(args)
  local out = vim.fn.system(args)
  return out, vim.v.shell_error
end

local function first_line(s)
  return (vim.trim(s or ""):match("^[^\n]*"))
end

function M.check()
  local h = report()
  local reika = require("reika")
  local cmd = require("reika.client").server_cmd(reika.config)
  h.start("reika: the server")
  local bin = vim.fn.exepath(cmd[1])
  if bin == "" then
    h.error(string.format("%s is not found (not on PATH, and no such file)", cmd[1]), {
      "in a clone of Reika: go install ./cmd/reika-lsp (the module is not published: go install …@latest cannot find it)",
      "or set require('reika').setup{cmd = {'/path/to/reika-lsp'}}, or $REIKA_LSP",
    })
    return
  end
  h.ok("found: " .. bin)
  local out, code = run({ bin, "version" })
  if code ~= 0 then
    h.error(string.format("`%s version` failed (exit %d): %s", bin, code, first_line(out)))
    return
  end
  h.ok("version: " .. first_line(out))

  h.start("reika: the engine (reika-lsp check --json --no-tools)")
  -- The plugin's settings go as the server gets them, so that the check
  -- sees what the editor overrides of the config file and REIKA_*.
  local args = { bin, "check", "--json", "--no-tools" }
  local settings = reika.config.settings or {}
  if next(settings) ~= nil then
    vim.list_extend(args, { "--settings", vim.fn.json_encode(settings) })
  end
  out, code = run(args)
  local json = out:match("%b{}")
  local ok, rep = pcall(vim.fn.json_decode, json or "")
  if not ok or type(rep) ~= "table" then
    h.error(string.format("`reika-lsp check --json` printed no report (exit %d): %s", code, first_line(out)))
    return
  end
  local function s(v)
    return (v == nil or v == vim.NIL) and "" or tostring(v)
  end
  local function from(v, source)
    return source ~= "" and string.format("%s (%s)", v, source) or v
  end
  if s(rep.endpoint) ~= "" then
    local engine = s(rep.flavor) .. (s(rep.version) ~= "" and " " .. s(rep.version) or "")
    h.info(string.format("engine: %s at %s", engine, from(s(rep.endpoint), s(rep.endpoint_source_text))))
  end
  if s(rep.model) ~= "" then
    h.info("model: " .. from(s(rep.model), s(rep.model_source_text)))
  end
  if tonumber(rep.window) and rep.window > 0 then
    h.info("context window: " .. from(s(rep.window) .. " tokens", s(rep.window_source_text)))
  end
  if type(rep.overrides) == "table" then
    for _, o in ipairs(rep.overrides) do
      h.info("setup{settings}: " .. s(o))
    end
  end
  if type(rep.warnings) == "table" then
    for _, w in ipairs(rep.warnings) do
      h.warn(s(w))
    end
  end
  if rep.ok == true then
    h.ok("the engine answers")
  else
    h.error(s(rep.error ~= nil and rep.error or "the check failed"), {
      "set require('reika').setup{settings = {endpoint = 'http://127.0.0.1:8080/v1'}}, or REIKA_ENDPOINT",
      "`reika-lsp check` in a shell says more",
    })
  end
end

return M
