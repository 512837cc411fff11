-- With the plugin, configured by setup{}: one client per project root,
-- the root found from each buffer's path whatever Neovim's cwd is.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

H.main(function()
  local p = H.params
  require("reika").setup({ filetypes = { "go" }, settings = p.settings })
  vim.cmd("cd /")
  H.out.roots = {}
  for _, file in ipairs(p.files) do
    local buf = H.open(file)
    local c = H.client(buf)
    table.insert(H.out.roots, { file = file, root = c.config.root_dir, id = c.id })
  end
  -- A buffer of a filetype not configured gets no client (attaching is
  -- synchronous, in the FileType autocommand).
  local other = H.open(p.other)
  H.out.other_attached = false
  for _, r in ipairs(H.out.roots) do
    if vim.lsp.buf_is_attached(other, r.id) then
      H.out.other_attached = true
    end
  end
end)
