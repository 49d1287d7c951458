-- The Neovim plugin (editors/nvim) end to end, headless, on whichever Neovim runs it (Debian's
-- 0.7 and a current one): filetype detection, :WspBuildParser, tree-sitter highlighting with the
-- shared queries, and the `wsp lsp` client it starts (diagnostics, hover, completion, reuse per
-- root, :WspInfo, :WspRestart).
--
-- Run from the repository root:
--   WSP_BIN=target/debug/wsp nvim --headless -u NONE -i NONE -c "luafile editors/nvim/tests/plugin.lua"
-- The parser is built into a temporary folder (setup's parser_dir), so the plugin's own parser/
-- is neither used nor touched. Exit status 0 when every check holds; otherwise the failure goes
-- to stderr and Neovim quits with status 1.
-- With WSP_PLUGIN_COPY=1 the same checks run on a copy of the plugin outside the repository, as
-- a user who copied the folder has it: its queries/wsp symlink points nowhere and setup() is
-- told where the grammar is.

local TIMEOUT_MS = 30000
-- Compiling the 1.5 MB parser.c at -O2 takes a while on a small machine.
local BUILD_TIMEOUT_MS = 300000

local function fail(message)
  error(message, 0)
end

local function check(cond, message)
  if not cond then
    fail(message)
  end
end

local function contains(list, value)
  for _, v in ipairs(list) do
    if v == value then
      return true
    end
  end
  return false
end

-- The capture names at a position, in the order Neovim applies them (the last one wins).
local function captures_at(buf, row, col)
  local names = {}
  -- Current Neovim parses for the highlighter asynchronously; parse now so the tree is there.
  vim.treesitter.get_parser(buf, "wsp"):parse()
  if vim.treesitter.get_captures_at_pos then
    for _, c in ipairs(vim.treesitter.get_captures_at_pos(buf, row, col)) do
      if c.lang == "wsp" then
        table.insert(names, c.capture)
      end
    end
    return names
  end
  -- 0.7: what its highlighter does, the highlights query's captures over the buffer's tree.
  local query = require("vim.treesitter.query").get_query("wsp", "highlights")
  check(query, "no highlights query for wsp on the runtimepath")
  local tree = vim.treesitter.get_parser(buf, "wsp"):parse()[1]
  for id, node in query:iter_captures(tree:root(), buf, row, row + 1) do
    local sr, sc, er, ec = node:range()
    local after_start = row > sr or (row == sr and col >= sc)
    local before_end = row < er or (row == er and col < ec)
    if after_start and before_end then
      table.insert(names, query.captures[id])
    end
  end
  return names
end

-- The highlight group a capture resolves to on this Neovim.
local function group_of(capture)
  if vim.fn.has("nvim-0.8") == 1 then
    -- Current Neovim: the @capture group itself, linked by the default colors.
    local id = vim.fn.hlID("@" .. capture)
    return id > 0 and vim.fn.synIDattr(vim.fn.synIDtrans(id), "name") or nil
  end
  return vim.treesitter.highlighter.hl_map[capture]
end

local function test()
  local bin = os.getenv("WSP_BIN")
  check(bin and vim.fn.executable(bin) == 1, "WSP_BIN must name the wsp binary, got " .. tostring(bin))
  bin = vim.fn.fnamemodify(bin, ":p")
  local repo = vim.fn.getcwd()

  -- A project: root/wsp.toml, root/src/hello_add.wsp with the known error, and a clean copy.
  local root = vim.fn.tempname()
  vim.fn.mkdir(root .. "/src", "p")
  root = vim.loop.fs_realpath(root)
  vim.fn.writefile({ "[check]", 'targets = ["cpu_sim"]' }, root .. "/wsp.toml")
  local good, bad = "c: Out[Tile[32, 32, F32]]", "c: Out[Tile[32, 16, F32]]"
  local lines = vim.fn.readfile(repo .. "/examples/hello_add.wsp")
  vim.fn.writefile(lines, root .. "/src/clean.wsp")
  local edited = false
  for i, line in ipairs(lines) do
    local s, e = line:find(good, 1, true)
    if s then
      lines[i] = line:sub(1, s - 1) .. bad .. line:sub(e + 1)
      edited = true
    end
  end
  check(edited, "examples/hello_add.wsp no longer declares " .. good)
  local file = root .. "/src/hello_add.wsp"
  vim.fn.writefile(lines, file)
  local parser_dir = vim.fn.tempname()

  -- As a user's init would: the plugin on the runtimepath, its plugin/ file, filetype detection.
  local copy = os.getenv("WSP_PLUGIN_COPY") == "1"
  local plugin = repo .. "/editors/nvim"
  if copy then
    plugin = vim.fn.tempname()
    vim.fn.system({ "cp", "-R", repo .. "/editors/nvim", plugin })
    check(vim.v.shell_error == 0, "cannot copy the plugin to " .. plugin)
    check(not vim.loop.fs_stat(plugin .. "/queries/wsp/highlights.scm"), "the copy's queries symlink still resolves")
  end
  vim.opt.runtimepath:prepend(plugin)
  vim.cmd("runtime! plugin/wsp.lua")
  vim.cmd("filetype on")
  check(vim.fn.exists(":WspBuildParser") == 2, ":WspBuildParser is not defined")

  local deprecated = {}
  vim.deprecate = function(name)
    table.insert(deprecated, name)
  end
  local messages = {}
  vim.notify = function(msg, level)
    table.insert(messages, { msg = msg, level = level })
  end
  local function said(text)
    for _, m in ipairs(messages) do
      if m.msg:find(text, 1, true) then
        return true
      end
    end
    return false
  end

  -- A file opened before setup() is taken in by it.
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/src/clean.wsp"))
  local early = vim.api.nvim_get_current_buf()
  check(vim.bo[early].filetype == "wsp", "filetype: " .. vim.bo[early].filetype)
  check(#(vim.lsp.get_clients or vim.lsp.get_active_clients)() == 0, "a client before setup()")

  local wsp = require("wsp")
  local grammar = copy and (repo .. "/syntax/tree-sitter-wsp") or nil
  wsp.setup({ cmd = { bin, "lsp" }, targets = { "cpu_sim" }, parser_dir = parser_dir, grammar = grammar })
  check(vim.bo[early].shiftwidth == 4, "setup() left the open buffer alone")
  -- The client: one per root (the folder of wsp.toml), with the targets as init options.
  local id = wsp.clients()[root]
  check(id, "no client for root " .. root .. ": " .. vim.inspect(wsp.clients()))
  check(vim.lsp.buf_is_attached(early, id), "the buffer open before setup() is not attached")
  local client = vim.lsp.get_client_by_id(id)
  check(client and client.name == "wsp", "client: " .. vim.inspect(client and client.name))
  check(vim.deep_equal(client.config.init_options, { targets = { "cpu_sim" } }),
    "init_options: " .. vim.inspect(client.config.init_options))

  -- A file opened after setup(), under the same root, joins the same client.
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  check(vim.bo[buf].filetype == "wsp", "filetype: " .. vim.bo[buf].filetype)
  check(wsp.clients()[root] == id and vim.tbl_count(wsp.clients()) == 1, "second buffer: " .. vim.inspect(wsp.clients()))
  check(vim.lsp.buf_is_attached(buf, id), "the buffer opened after setup() is not attached to client " .. id)
  check(vim.bo[buf].shiftwidth == 4 and vim.bo[buf].expandtab, "indent options not set")
  check(vim.bo[buf].commentstring == "# %s", "commentstring: " .. vim.bo[buf].commentstring)

  -- No parser yet: one message saying how to build it, and Vim's Python syntax meanwhile.
  vim.wait(1000, function()
    return said(":WspBuildParser")
  end, 10)
  check(said(":WspBuildParser"), "no message on how to build the parser: " .. vim.inspect(messages))
  check(vim.bo[buf].syntax == "python", "fallback syntax: " .. vim.bo[buf].syntax)
  check(not vim.treesitter.highlighter.active[buf], "highlighting without a parser")

  -- :WspBuildParser compiles the grammar and turns highlighting on in the open buffer.
  local started = vim.loop.hrtime()
  local before = #messages
  vim.cmd("WspBuildParser")
  local built = vim.wait(BUILD_TIMEOUT_MS, function()
    for i = before + 1, #messages do
      if messages[i].level >= vim.log.levels.WARN then
        return true
      end
    end
    return vim.treesitter.highlighter.active[buf] ~= nil
  end, 50)
  check(built and vim.treesitter.highlighter.active[buf], "highlighting did not start: " .. vim.inspect(messages))
  io.stdout:write(string.format("parser built in %.1f s\n", (vim.loop.hrtime() - started) / 1e9))
  check(vim.loop.fs_stat(parser_dir .. "/wsp.so"), "no " .. parser_dir .. "/wsp.so")
  check(vim.bo[buf].syntax == "", "Vim syntax still on beside tree-sitter: " .. vim.bo[buf].syntax)
  local queries = repo .. "/syntax/tree-sitter-wsp/queries"
  if copy then
    -- Read from the grammar folder setup() was given.
    local info = table.concat(wsp.info(), "\n")
    check(info:find("queries: " .. queries, 1, true), ":WspInfo does not name " .. queries .. ": " .. info)
  else
    local query_file = vim.api.nvim_get_runtime_file("queries/wsp/highlights.scm", false)[1]
    check(query_file and vim.loop.fs_realpath(query_file) == vim.loop.fs_realpath(queries .. "/highlights.scm"),
      "queries/wsp is not the grammar's queries: " .. tostring(query_file))
  end

  -- Captures at known places of hello_add.wsp (0-based rows and columns); the last one wins.
  local expect = {
    { 13, 0, "keyword.function", "def" },
    { 13, 4, "function", "add_kernel" },
    { 13, 18, "type.builtin", "In" },
    { 14, 8, "module", "pto" },
    { 14, 12, "function.builtin", "load" },
    { 21, 4, "keyword.repeat", "for" },
    { 21, 10, "keyword.repeat", "in" },
    { 21, 13, "function.builtin", "P" },
    { 22, 8, "function.call", "add_kernel (a task)" },
    { 22, 22, "variable.parameter", "a=" },
    { 12, 0, "attribute", "@kernel" },
    { 7, 0, "constant", "A" },
    { 0, 0, "string.documentation", "docstring" },
  }
  for _, e in ipairs(expect) do
    local names = captures_at(buf, e[1], e[2])
    check(names[#names] == e[3], string.format("%s at %d:%d: want @%s last, got %s", e[4], e[1] + 1, e[2] + 1, e[3], vim.inspect(names)))
  end
  -- `def` lands on a keyword group on this Neovim, not on nothing.
  local def_group = group_of("keyword.function")
  check(def_group == "Keyword" or def_group == "Statement", "@keyword.function is shown as " .. tostring(def_group))
  if vim.fn.has("nvim-0.8") == 0 then
    check(group_of("module") == "Structure", "0.7 hl_map has no @module: " .. tostring(group_of("module")))
  end

  local function diagnostics_of(b, client_id)
    local ns = vim.lsp.diagnostic.get_namespace(client_id)
    local got = {}
    for _, d in ipairs(vim.diagnostic.get(b, { namespace = ns })) do
      check(d.source == "wsp", "source: " .. vim.inspect(d))
      table.insert(got, string.format("%d:%d %s", d.lnum + 1, d.col + 1, d.code))
    end
    table.sort(got)
    return got
  end
  local want = { "17:18 WSP201", "23:41 WSP206" }
  local arrived = vim.wait(TIMEOUT_MS, function()
    return #diagnostics_of(buf, id) >= 2
  end, 20)
  check(arrived, "no diagnostics arrived: " .. vim.inspect(messages))
  check(vim.deep_equal(diagnostics_of(buf, id), want), "diagnostics: " .. vim.inspect(diagnostics_of(buf, id)))

  local function request(method, row, col)
    vim.api.nvim_win_set_cursor(0, { row + 1, col })
    local params = vim.lsp.util.make_position_params(0, "utf-16")
    local replies = vim.lsp.buf_request_sync(buf, method, params, TIMEOUT_MS)
    check(replies and replies[id], "no " .. method .. " reply")
    check(replies[id].err == nil, method .. " failed: " .. vim.inspect(replies[id].err))
    return replies[id].result
  end

  -- Hover on `x` in `pto.store(c, pto.add(x, y))`: its tile type.
  local hover = request("textDocument/hover", 16, 25)
  local text = hover and hover.contents and hover.contents.value or ""
  check(text:find("Tile[", 1, true), "hover on x has no tile type: " .. vim.inspect(hover))

  -- Completion right after `pto.` in the same line: the ops, add among them.
  local completion = request("textDocument/completion", 16, 21)
  local items = completion and (completion.items or completion) or {}
  local labels = {}
  for _, item in ipairs(items) do
    table.insert(labels, item.label)
  end
  check(contains(labels, "add") and contains(labels, "load"), "completion after pto.: " .. vim.inspect(labels))

  check(vim.treesitter.highlighter.active[early], ":WspBuildParser did not highlight the other open buffer")

  local info = table.concat(wsp.info(), "\n")
  check(info:find("client " .. id .. ": running", 1, true) and info:find("(loaded, ABI 14)", 1, true)
    and info:find("grammar src/ 14", 1, true), ":WspInfo: " .. info)

  -- :WspRestart: a new client for the root, attached to both buffers, diagnostics again.
  vim.cmd("WspRestart")
  local new = wsp.clients()[root]
  check(new and new ~= id, "restart kept client " .. tostring(id))
  local again = vim.wait(TIMEOUT_MS, function()
    return #diagnostics_of(buf, new) >= 2 and vim.lsp.get_client_by_id(id) == nil
  end, 20)
  check(again, "after :WspRestart: " .. vim.inspect(diagnostics_of(buf, new)) .. ", old client alive: "
    .. tostring(vim.lsp.get_client_by_id(id) ~= nil))
  check(vim.lsp.buf_is_attached(early, new), "the other buffer is not attached after restart")
  check(vim.deep_equal(diagnostics_of(buf, new), want), "diagnostics after restart: " .. vim.inspect(diagnostics_of(buf, new)))

  -- 0.11+: the plugin's lsp/wsp.lua gives vim.lsp.enable("wsp") the same server.
  if vim.lsp.config then
    local conf = vim.lsp.config.wsp
    check(conf and vim.deep_equal(conf.cmd, { "wsp", "lsp" }) and vim.deep_equal(conf.filetypes, { "wsp" }),
      "vim.lsp.config.wsp: " .. vim.inspect(conf))
  end

  -- Nothing the plugin calls is deprecated on this Neovim.
  check(#deprecated == 0, "deprecated calls: " .. vim.inspect(deprecated))

  vim.lsp.stop_client(new)
  vim.wait(TIMEOUT_MS, function()
    return vim.lsp.get_client_by_id(new) == nil
  end, 20)
end

local ok, err = pcall(test)
if ok then
  io.stdout:write("neovim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor)
    .. ": wsp plugin" .. (os.getenv("WSP_PLUGIN_COPY") == "1" and ", a copy outside the repository" or "")
    .. " (filetype, parser build, highlighting, diagnostics, hover, completion, restart)\n")
  vim.cmd("qall!")
else
  io.stderr:write("neovim plugin test failed: " .. tostring(err) .. "\n")
  vim.cmd("cquit 1")
end
