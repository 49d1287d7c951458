-- `wsp lsp` in headless Neovim 0.7 (Debian's), with its own LSP client.
--
-- Run from the repository root by `cargo xtask test`:
--   WSP_BIN=target/debug/wsp nvim --headless -u NONE -i NONE -c "luafile lsp/tests/clients/neovim.lua"
-- It copies examples/hello_add.wsp with its output tile declared 32x16, opens it, waits for the
-- server's diagnostics and asks for a hover. Exit status 0 when every check holds; otherwise the
-- failure goes to stderr and Neovim quits with status 1.

local TIMEOUT_MS = 30000

local function fail(message)
  error(message, 0)
end

local function check(cond, message)
  if not cond then
    fail(message)
  end
end

local function test()
  -- `vim.lsp.start` arrived in 0.8; this test is about the `start_client` of Debian's 0.7.
  check(vim.lsp.start_client ~= nil, "vim.lsp.start_client is missing")
  local bin = os.getenv("WSP_BIN")
  check(bin and vim.fn.executable(bin) == 1, "WSP_BIN must name the wsp binary, got " .. tostring(bin))

  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  local file = dir .. "/hello_add.wsp"
  local good, bad = "c: Out[Tile[32, 32, F32]]", "c: Out[Tile[32, 16, F32]]"
  local lines = vim.fn.readfile("examples/hello_add.wsp")
  local edited = false
  for i, line in ipairs(lines) do
    local s, e = line:find(good, 1, true)
    if s then
      lines[i] = line:sub(1, s - 1) .. bad .. line:sub(e + 1)
      edited = true
    end
  end
  check(edited, "examples/hello_add.wsp no longer declares " .. good)
  vim.fn.writefile(lines, file)

  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local exited = nil
  local id = vim.lsp.start_client({
    name = "wsp",
    cmd = { bin, "lsp" },
    root_dir = dir,
    on_exit = function(code)
      exited = code
    end,
  })
  check(id, "start_client did not start the server")
  check(vim.lsp.buf_attach_client(buf, id), "the buffer could not be attached")

  -- The diagnostics of the open buffer: the store (line 17) and the task call (line 23).
  local arrived = vim.wait(TIMEOUT_MS, function()
    return #vim.diagnostic.get(buf) >= 2 or exited ~= nil
  end, 20)
  check(arrived and exited == nil, "no diagnostics arrived (server exit: " .. tostring(exited) .. ")")
  local got = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    check(d.severity == vim.diagnostic.severity.ERROR, "not an error: " .. vim.inspect(d))
    check(d.source == "wsp", "source: " .. vim.inspect(d))
    table.insert(got, string.format("%d:%d %s", d.lnum + 1, d.col + 1, d.code))
  end
  table.sort(got)
  check(
    vim.deep_equal(got, { "17:18 WSP201", "23:41 WSP206" }),
    "diagnostics: " .. vim.inspect(got)
  )

  -- Hover over `add` in `pto.add(x, y)`.
  vim.api.nvim_win_set_cursor(0, { 17, 22 })
  local replies = vim.lsp.buf_request_sync(buf, "textDocument/hover", vim.lsp.util.make_position_params(), TIMEOUT_MS)
  check(replies and replies[id], "no hover reply")
  check(replies[id].err == nil, "hover failed: " .. vim.inspect(replies[id].err))
  local hover = replies[id].result
  check(hover and hover.contents.kind == "markdown", "hover: " .. vim.inspect(hover))
  local text = hover.contents.value
  check(text:find("pto.add(a, b)", 1, true), "hover has no signature: " .. text)
  check(text:find("Here: `Tile[32,32] F32`", 1, true), "hover has no tile type: " .. text)

  vim.lsp.stop_client(id)
  vim.wait(TIMEOUT_MS, function()
    return exited ~= nil
  end, 20)
  check(exited == 0, "the server exited with " .. tostring(exited))
end

local ok, err = pcall(test)
if ok then
  io.stdout:write("neovim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor)
    .. ": diagnostics and hover from wsp lsp\n")
  vim.cmd("qall!")
else
  io.stderr:write("neovim test failed: " .. tostring(err) .. "\n")
  vim.cmd("cquit 1")
end
