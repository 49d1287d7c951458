-- The user commands of wsp.nvim, defined by plugin/wsp.lua at startup and again by setup() (for
-- installs that put the plugin on the runtimepath after startup, when plugin/ is not sourced).
local M = {}

function M.create()
  vim.api.nvim_create_user_command("WspBuildParser", function()
    require("wsp").build_parser_command()
  end, { desc = "Compile the WSP tree-sitter parser into the plugin's parser/wsp.so" })

  vim.api.nvim_create_user_command("WspRestart", function()
    require("wsp").restart()
  end, { desc = "Restart the wsp language server" })

  vim.api.nvim_create_user_command("WspInfo", function()
    local lines = require("wsp").info()
    vim.api.nvim_echo({ { table.concat(lines, "\n") } }, false, {})
  end, { desc = "Show the wsp language server and parser status" })
end

return M
