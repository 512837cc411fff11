-- workspace/applyEdit for Reika's clients: never lets an edit land on
-- text it was not made for.
--
-- Neovim sends didChange only after ~150 ms without typing, and its own
-- handler applies a TextDocumentEdit at version 0 (the version of every
-- buffer just opened) without looking at the buffer's version at all, so
-- an edit the agent made before the user typed would land on the user's
-- newer text, a line off, and be answered "applied". This handler
--   1. sends the pending didChange first, so that the server knows the
--      user's text before it reads the answer;
--   2. refuses ({applied = false, failureReason = …}) a TextDocumentEdit
--      whose version is not the buffer's version now: the server then
--      places the change again on the user's text and sends it anew;
--   3. refuses an edit without a version (a `changes` map, or a
--      TextDocumentEdit with version null) to a buffer with unsaved
--      changes. Such an edit was made on the file on disk, or on a copy
--      the plugin cannot compare with the buffer; on an unmodified
--      buffer the two are the same text and it is applied. Reika sends
--      versions to every buffer it has open, so this is the rare case.
local M = {}

local client_mod = require("reika.client")

-- flush sends the client's pending didChange notifications now. Neovim
-- 0.10+ has the changetracking module; before it, client.notify flushes
-- every pending didChange before any other notification it sends, so an
-- ignorable `$/` notification (the spec lets servers drop them) does it.
function M.flush(client, bufnr)
  local ok, ct = pcall(require, "vim.lsp._changetracking")
  if ok and type(ct) == "table" and ct.flush then
    ct.flush(client, bufnr)
    return
  end
  client_mod.notify(client, "$/reika/flush", vim.empty_dict())
end

local function null(v)
  return v == nil or v == vim.NIL
end

-- loaded returns the buffer that holds uri's file, if one is loaded,
-- without creating one (vim.uri_to_bufnr would).
local function loaded(uri)
  local fname = vim.uri_to_fname(uri)
  for _, nr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(nr) and vim.api.nvim_buf_get_name(nr) == fname then
      return nr
    end
  end
  return nil
end

local function short(uri)
  return vim.fn.fnamemodify(vim.uri_to_fname(uri), ":t")
end

-- unversioned says why an unversioned edit to uri cannot be applied, or
-- nil when it can.
local function unversioned(uri)
  local nr = loaded(uri)
  if nr and vim.bo[nr].modified then
    return string.format("%s has unsaved changes and the edit has no version to check them against; nothing was applied", short(uri))
  end
  return nil
end

-- stale says why edit cannot be applied to the buffers as they are now,
-- or nil when every part of it fits.
function M.stale(edit)
  local versions = vim.lsp.util.buf_versions
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.kind == nil and change.textDocument then
      local uri, version = change.textDocument.uri, change.textDocument.version
      if null(version) then
        local why = unversioned(uri)
        if why then
          return why
        end
      else
        local nr = loaded(uri)
        local now = nr and versions[nr]
        if now == nil then
          return string.format("%s is no longer open in the editor (the edit is for version %d); nothing was applied", short(uri), version)
        end
        if now ~= version then
          return string.format("version %d of %s differs from the editor's version %d: the buffer changed after the edit was made; nothing was applied", version, short(uri), now)
        end
      end
    end
  end
  for uri in pairs(edit.changes or {}) do
    local why = unversioned(uri)
    if why then
      return why
    end
  end
  return nil
end

-- handler is the workspace/applyEdit handler of Reika's clients.
function M.handler(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client or not params or not params.edit then
    return { applied = false, failureReason = "the edit came without a client or without an edit" }
  end
  M.flush(client)
  local why = M.stale(params.edit)
  if why then
    return { applied = false, failureReason = why }
  end
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, params.edit, client.offset_encoding or "utf-16")
  if not ok then
    return { applied = false, failureReason = tostring(err) }
  end
  return { applied = true }
end

return M
