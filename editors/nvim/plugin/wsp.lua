-- wsp.nvim commands, defined at startup (Neovim 0.7+ loads plugin/*.lua); the work is done by
-- require("wsp") when a command runs, so nothing else loads until then.
if vim.g.loaded_wsp then
  return
end
vim.g.loaded_wsp = true

require("wsp.commands").create()
