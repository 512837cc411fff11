-- With the plugin: apply.lua's verdict on edits of each kind against a
-- buffer the client has open, as it is opened, after the user typed, and
-- with unsaved changes.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

H.main(function()
  local apply = require("reika.apply")
  local buf = H.open(H.params.file)
  H.client(buf)
  local uri = vim.uri_from_bufnr(buf)
  local edit = { range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } }, newText = "x" }
  local function versioned(v)
    return { documentChanges = { { textDocument = { uri = uri, version = v }, edits = { edit } } } }
  end
  local function verdict(e)
    return apply.stale(e) or "ok"
  end
  H.out.stale = {}
  local function add(e)
    table.insert(H.out.stale, verdict(e))
  end
  local v0 = vim.lsp.util.buf_versions[buf]
  add(versioned(v0)) -- 1: the version of the buffer as opened
  add({ changes = { [uri] = { edit } } }) -- 2: unversioned, unmodified buffer
  add(versioned(vim.NIL)) -- 3: version null, unmodified buffer
  vim.api.nvim_buf_set_lines(buf, 0, 0, true, { "// typed" })
  local v1 = vim.lsp.util.buf_versions[buf]
  add(versioned(v0)) -- 4: made before the user typed
  add(versioned(v1)) -- 5: made for what the user has now
  add({ changes = { [uri] = { edit } } }) -- 6: unversioned, unsaved changes
  add(versioned(vim.NIL)) -- 7: version null, unsaved changes
  local other = vim.uri_from_fname(vim.fn.fnamemodify(H.params.file, ":h") .. "/not-open.go")
  add({ changes = { [other] = { edit } } }) -- 8: a file with no buffer
end)
