-- The `wsp lsp` server config for Neovim 0.11+'s own LSP setup: with this plugin on the
-- runtimepath, `vim.lsp.enable("wsp")` starts it for wsp buffers without require("wsp").setup().
-- Use one or the other, not both (each would start a client).
return {
  cmd = { "wsp", "lsp" },
  filetypes = { "wsp" },
  root_markers = { "wsp.toml", ".git" },
  -- init_options = { targets = { "ascend_npu" } },
}
