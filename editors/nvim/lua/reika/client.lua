-- Starting reika-lsp and finding it again: one client per project root,
-- the root found from the buffer's own path (never Neovim's cwd), on
-- Neovim 0.7 (vim.lsp.start_client + buf_attach_client, no vim.fs) as on
-- current ones.
local M = {}

local uv = vim.uv or vim.loop

-- The name every Reika client has; commands look for it.
M.name = "reika"

-- The files that mark a project's root. The nearest directory, going up
-- from the buffer's file, that holds any of them is the root.
M.default_markers = {
  ".git", ".hg", ".jj", "go.work", "go.mod", "package.json", "Cargo.toml",
  "pyproject.toml", "setup.py", "setup.cfg", "Gemfile", "pom.xml", "build.gradle",
  "composer.json", "mix.exs", "deno.json", "Makefile",
}

-- root_id → client id, for the clients this plugin started.
local by_root = {}

-- root returns the project root of a file: the nearest directory above it
-- holding one of markers, else the file's own directory.
function M.root(path, markers)
  local dir = vim.fn.fnamemodify(path, ":p:h")
  local d = dir
  while true do
    for _, m in ipairs(markers or M.default_markers) do
      if uv.fs_stat((d:sub(-1) == "/" and d or d .. "/") .. m) then
        return d
      end
    end
    local parent = vim.fn.fnamemodify(d, ":h")
    if parent == d then
      return dir
    end
    d = parent
  end
end

local new_api = vim.fn.has("nvim-0.11") == 1

-- stopped says whether a client has stopped (client:is_stopped from 0.11).
local function stopped(c)
  if new_api then
    return c:is_stopped()
  end
  return c.is_stopped()
end

-- all returns every running Reika client (vim.lsp.get_clients is 0.10+).
function M.all()
  local list = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  local out = {}
  for _, c in ipairs(list) do
    if c.name == M.name and not stopped(c) then
      table.insert(out, c)
    end
  end
  return out
end

-- for_buf returns the Reika client attached to bufnr, else the one whose
-- root holds the buffer's file, else the only one running; nil when none
-- fits.
function M.for_buf(bufnr, markers)
  local clients = M.all()
  for _, c in ipairs(clients) do
    if vim.lsp.buf_is_attached(bufnr, c.id) then
      return c
    end
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name ~= "" then
    local root = M.root(name, markers)
    for _, c in ipairs(clients) do
      if c.config.root_dir == root then
        return c
      end
    end
  end
  if #clients == 1 then
    return clients[1]
  end
  return nil
end

-- The settings that widen trust (agent/config's TrustKeys): the server
-- takes them from its startup options (init_options) only, never from a
-- settings push, which other editors fill from the workspace.
M.trust_keys = { "profile", "endpoint", "api_key_env", "fetch", "bash_allow", "sandbox_env", "language_servers" }

local function camel(key)
  return (key:gsub("_(%l)", string.upper))
end

-- widens says whether two sets of settings differ in a setting that widens
-- trust (either spelling), so that the server must be restarted to take it.
function M.widens(was, now)
  was, now = was or {}, now or {}
  for _, k in ipairs(M.trust_keys) do
    local a, b = was[k], now[k]
    if a == nil then
      a = was[camel(k)]
    end
    if b == nil then
      b = now[camel(k)]
    end
    if not vim.deep_equal(a, b) then
      return true
    end
  end
  return false
end

-- restart stops a client and forgets its root, so that the next attach
-- starts a new one with the current settings as its init_options.
function M.restart(c)
  if by_root[c.config.root_dir] == c.id then
    by_root[c.config.root_dir] = nil
  end
  if new_api then
    c:stop()
  else
    c.stop()
  end
end

-- server_cmd is the command that starts the server: $REIKA_LSP, then the
-- cmd setting, then reika-lsp on PATH.
function M.server_cmd(cfg)
  local env = vim.env.REIKA_LSP
  if env and env ~= "" then
    return { env }
  end
  return cfg.cmd or { "reika-lsp" }
end

-- capabilities are Neovim's own, plus the versioned edits its applyEdit
-- handler (and Reika's) honour.
local function capabilities(extra)
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.workspace.workspaceEdit = caps.workspace.workspaceEdit or {}
  caps.workspace.workspaceEdit.documentChanges = true
  if extra then
    caps = vim.tbl_deep_extend("force", caps, extra)
  end
  return caps
end

-- start starts a client: vim.lsp.start from 0.8 (told not to reuse one:
-- the plugin keeps one per root itself), vim.lsp.start_client on 0.7.
local function start(config, bufnr)
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr, reuse_client = function() return false end })
  end
  return vim.lsp.start_client(config)
end

-- attach starts (or reuses) the client for the buffer's root and attaches
-- the buffer; it returns the client id, or nil for a buffer that is not a
-- file.
function M.attach(bufnr, cfg, handlers)
  if vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return nil
  end
  local root = M.root(name, cfg.root_markers)
  local id = by_root[root]
  local live = id and vim.lsp.get_client_by_id(id)
  if not live or stopped(live) then
    local settings = cfg.settings
    if settings and next(settings) == nil then
      settings = nil
    end
    id = start({
      name = M.name,
      cmd = M.server_cmd(cfg),
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
      init_options = settings,
      settings = settings and { reika = settings } or nil,
      capabilities = capabilities(cfg.capabilities),
      handlers = handlers,
      flags = cfg.flags,
      on_exit = function(_, _, client_id)
        if by_root[root] == client_id then
          by_root[root] = nil
        end
      end,
    }, bufnr)
    if not id then
      return nil
    end
    by_root[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

-- request sends a request the way the running Neovim spells it
-- (client:request from 0.11, client.request before).
function M.request(client, method, params, handler, bufnr)
  if new_api then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

-- notify sends a notification, spelled for the running Neovim.
function M.notify(client, method, params)
  if new_api then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

return M
