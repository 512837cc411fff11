-- The editor's own diagnostics go with an ask (reika.ask's diagnostics):
-- the errors and warnings Neovim shows in the workspace's buffers, from
-- every language server and linter the user runs, so that the model sees
-- what the user sees. At most M.max go, errors first, each file's as
-- textDocument/publishDiagnostics gives them.
local M = {}

-- The most diagnostics an ask carries (the server's
-- tools.MaxEditorDiagnostics).
M.max = 50

-- character is the column col (bytes, as vim.diagnostic counts) of line
-- lnum (0-based) in the client's encoding; col itself when the buffer's
-- text is not at hand.
local function character(bufnr, lnum, col, encoding)
  if encoding == "utf-8" or not vim.api.nvim_buf_is_loaded(bufnr) then
    return col
  end
  local line = vim.api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1]
  if not line then
    return col
  end
  local ok, utf32, utf16 = pcall(vim.str_utfindex, line, math.min(col, #line))
  if not ok then
    return col
  end
  return encoding == "utf-32" and utf32 or utf16
end

-- workspace returns the errors and warnings of the buffers below root
-- (all buffers' when root is nil), a list of {uri, diagnostics}, each
-- range in encoding ("utf-8", "utf-16" or "utf-32").
function M.workspace(root, encoding)
  local files, order, n = {}, {}, 0
  for _, severity in ipairs({ vim.diagnostic.severity.ERROR, vim.diagnostic.severity.WARN }) do
    for _, d in ipairs(vim.diagnostic.get(nil, { severity = severity })) do
      local name = vim.api.nvim_buf_get_name(d.bufnr)
      if n < M.max and name ~= "" and (not root or name:sub(1, #root + 1) == root .. "/") then
        local uri = vim.uri_from_bufnr(d.bufnr)
        local f = files[uri]
        if not f then
          f = { uri = uri, diagnostics = {} }
          files[uri] = f
          table.insert(order, f)
        end
        local end_lnum = d.end_lnum or d.lnum
        table.insert(f.diagnostics, {
          range = {
            start = { line = d.lnum, character = character(d.bufnr, d.lnum, d.col or 0, encoding) },
            ["end"] = { line = end_lnum, character = character(d.bufnr, end_lnum, d.end_col or d.col or 0, encoding) },
          },
          -- vim.diagnostic.severity's numbers are LSP's.
          severity = severity,
          message = d.message,
          source = d.source,
        })
        n = n + 1
      end
    end
  end
  return order
end

return M
