-- wsp.nvim: the `wsp lsp` client, tree-sitter highlighting and buffer options for .wsp files.
--
-- require("wsp").setup({ cmd = { "wsp", "lsp" }, targets = { "ascend_npu" } })
-- Works on Neovim 0.7 (vim.lsp.start_client, vim.treesitter.highlighter) and on current Neovim
-- (vim.lsp.start, vim.treesitter.start); each branch is chosen by what the API offers, not by
-- version numbers, so 0.8-0.10 take whichever exists.

local M = {}

local uv = vim.loop

local VALID_TARGETS = { cpu_sim = true, ascend_npu = true }

local defaults = {
  -- The server command; `wsp lsp` speaks LSP over stdio.
  cmd = { "wsp", "lsp" },
  -- Targets to check programs against, sent as initializationOptions.targets; nil lets the
  -- server use each folder's wsp.toml.
  targets = nil,
  -- A file's root is the nearest folder holding one of these, else the file's folder.
  root_markers = { "wsp.toml", ".git" },
  lsp = true,
  highlight = true,
  -- The tree-sitter grammar (its src/ is compiled by :WspBuildParser); default: the
  -- syntax/tree-sitter-wsp of the repository this plugin lives in.
  grammar = nil,
  -- Where :WspBuildParser writes wsp.so and the only place it is loaded from when set; default:
  -- <plugin>/parser, then any parser/wsp.so on 'runtimepath'.
  parser_dir = nil,
  -- Vim syntax used while the parser is not built (WSP is Python syntax).
  fallback_syntax = "python",
  buffer_options = true,
  -- K for hover where Neovim has no default for it (before 0.10).
  keymaps = true,
  on_attach = nil,
  capabilities = nil,
}

M.config = vim.deepcopy(defaults)

-- root folder -> client id; one client per root, reused by every buffer under it.
local clients = {}
local notified = {}
local parser_loaded = false

local function notify_once(key, msg, level)
  if notified[key] then
    return
  end
  notified[key] = true
  vim.schedule(function()
    vim.notify(msg, level or vim.log.levels.WARN, { title = "wsp" })
  end)
end

local function exists(path)
  return path ~= nil and uv.fs_stat(path) ~= nil
end

local function join(...)
  return table.concat({ ... }, "/")
end

--- The plugin's folder (editors/nvim), symlinks resolved so ../../syntax finds the grammar.
function M.plugin_root()
  local source = debug.getinfo(1, "S").source:sub(2)
  local real = uv.fs_realpath(source) or source
  return vim.fn.fnamemodify(real, ":p:h:h:h")
end

function M.grammar_dir()
  local dir = M.config.grammar or join(M.plugin_root(), "..", "..", "syntax", "tree-sitter-wsp")
  return uv.fs_realpath(dir) or dir
end

function M.parser_dir()
  return M.config.parser_dir or join(M.plugin_root(), "parser")
end

--- The wsp.so to load, or nil when none is built.
function M.parser_path()
  local own = join(M.parser_dir(), "wsp.so")
  if exists(own) or M.config.parser_dir then
    return exists(own) and own or nil
  end
  return vim.api.nvim_get_runtime_file("parser/wsp.so", false)[1]
end

--- The nearest folder above `file` holding a root marker, else the file's folder.
function M.root_dir(file)
  if file == nil or file == "" then
    return uv.cwd()
  end
  local start = vim.fn.fnamemodify(file, ":p:h")
  local dir = start
  while dir do
    for _, marker in ipairs(M.config.root_markers) do
      if exists(join(dir, marker)) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      break
    end
    dir = parent
  end
  return start
end

-- Neovim 0.7 maps capture names through hl_map, falling back to the name's first component;
-- these names of current Neovim have no entry there, so they get the groups current Neovim
-- links them to. Existing entries (nvim-treesitter's, the user's) are kept.
local function extend_legacy_hl_map()
  local hl = vim.treesitter.highlighter
  local map = hl and hl.hl_map
  if not map then
    return
  end
  for name, group in pairs({
    ["variable.member"] = "Identifier",
    ["variable.parameter"] = "Identifier",
    ["module"] = "Structure",
    ["attribute"] = "Macro",
    ["keyword.operator"] = "Operator",
    ["keyword.repeat"] = "Repeat",
    ["keyword.conditional"] = "Conditional",
    ["keyword.exception"] = "Exception",
    ["keyword.import"] = "Include",
  }) do
    local cur = rawget(map, name)
    if cur == nil or cur == "__notfound" then
      rawset(map, name, group)
    end
  end
end

--- Loads the wsp language into Neovim. Returns true, or false and why not.
function M.load_parser()
  if parser_loaded then
    return true
  end
  local path = M.parser_path()
  if not path then
    return false, "not built"
  end
  local ok, res, msg
  if vim.treesitter.language.add then
    -- 0.9/0.10 raise on failure, 0.11+ return nil and the message.
    ok, res, msg = pcall(vim.treesitter.language.add, "wsp", { path = path })
    if ok and res == nil and msg then
      ok, res = false, msg
    end
  else
    ok, res = pcall(vim.treesitter.require_language, "wsp", path)
  end
  if not ok then
    return false, string.format("%s: %s", path, tostring(res))
  end
  parser_loaded = true
  return true
end

local QUERIES = { "highlights", "folds", "indents", "locals" }

--- Where the queries come from: queries/wsp/ on 'runtimepath' (the plugin's symlink to the
--- grammar's), else the grammar's queries/ read and set here (a copy of the plugin, whose
--- symlink points nowhere). nil when neither has a highlights query.
local queries_from
local function ensure_queries()
  if queries_from then
    return queries_from
  end
  local found = vim.api.nvim_get_runtime_file("queries/wsp/highlights.scm", false)[1]
  if found then
    queries_from = vim.fn.fnamemodify(found, ":h")
    return queries_from
  end
  local dir = join(M.grammar_dir(), "queries")
  if not exists(join(dir, "highlights.scm")) then
    return nil
  end
  -- query.set from 0.9, query.set_query before (deprecated since).
  local set = vim.treesitter.query.set or vim.treesitter.query.set_query
  for _, name in ipairs(QUERIES) do
    local file = io.open(join(dir, name .. ".scm"), "r")
    if file then
      set("wsp", name, file:read("*a"))
      file:close()
    end
  end
  queries_from = dir
  return queries_from
end

--- Starts tree-sitter highlighting of `buf` if the parser loads.
function M.highlight(buf)
  local ok, why = M.load_parser()
  if not ok then
    if why == "not built" then
      notify_once(
        "parser",
        "wsp: no tree-sitter parser yet; run :WspBuildParser (needs a C compiler) or "
          .. "`make -C editors/nvim parser` for highlighting. Using Vim's "
          .. tostring(M.config.fallback_syntax)
          .. " syntax until then."
      )
    else
      local hint = "rebuild it with :WspBuildParser"
      if why:find("ABI", 1, true) then
        hint = "regenerate the grammar's src/ at an ABI this Neovim loads (`cargo xtask tree-sitter`), then :WspBuildParser"
      end
      notify_once("parser", "wsp: the tree-sitter parser does not load (" .. why .. "); " .. hint)
    end
    if M.config.fallback_syntax and vim.bo[buf].syntax == "" then
      vim.bo[buf].syntax = M.config.fallback_syntax
    end
    return false
  end
  if not ensure_queries() then
    notify_once(
      "queries",
      "wsp: no highlight query: neither queries/wsp/ on 'runtimepath' nor "
        .. join(M.grammar_dir(), "queries")
        .. " has highlights.scm; set require('wsp').setup({ grammar = '.../syntax/tree-sitter-wsp' })"
    )
    return false
  end
  if vim.treesitter.start then
    local started, err = pcall(vim.treesitter.start, buf, "wsp")
    if not started then
      notify_once("highlight", "wsp: tree-sitter highlighting failed: " .. tostring(err))
      return false
    end
  elseif not vim.treesitter.highlighter.active[buf] then
    extend_legacy_hl_map()
    vim.treesitter.highlighter.new(vim.treesitter.get_parser(buf, "wsp"))
  end
  return true
end

local function set_buffer_options(buf)
  local bo = vim.bo[buf]
  bo.commentstring = "# %s"
  bo.comments = "b:#,fb:-"
  bo.shiftwidth = 4
  bo.softtabstop = 4
  bo.expandtab = true
end

local function on_attach(client, buf)
  -- 0.7 sets neither; later versions set them only when empty, as here.
  if vim.bo[buf].omnifunc == "" then
    vim.bo[buf].omnifunc = "v:lua.vim.lsp.omnifunc"
  end
  if vim.bo[buf].tagfunc == "" then
    vim.bo[buf].tagfunc = "v:lua.vim.lsp.tagfunc"
  end
  if M.config.keymaps and vim.fn.has("nvim-0.10") == 0 and vim.fn.maparg("K", "n") == "" then
    vim.api.nvim_buf_set_keymap(buf, "n", "K", "<Cmd>lua vim.lsp.buf.hover()<CR>", { noremap = true, silent = true })
  end
  if M.config.on_attach then
    M.config.on_attach(client, buf)
  end
end

--- Starts the client of `buf`'s root, or attaches `buf` to the running one. Returns its id.
function M.start_lsp(buf)
  local root = M.root_dir(vim.api.nvim_buf_get_name(buf))
  local id = clients[root]
  if id and vim.lsp.get_client_by_id(id) then
    vim.lsp.buf_attach_client(buf, id)
    return id
  end
  local cmd = M.config.cmd
  if vim.fn.executable(cmd[1]) ~= 1 then
    notify_once("cmd", string.format(
      "wsp: the language server `%s` is not executable; build it (`cargo build -p wsp-cli --bin wsp`) "
        .. "and put it on PATH, or set require('wsp').setup({ cmd = { '/path/to/wsp', 'lsp' } })",
      cmd[1]), vim.log.levels.ERROR)
    return nil
  end
  local config = {
    name = "wsp",
    cmd = cmd,
    root_dir = root,
    capabilities = M.config.capabilities,
    on_attach = on_attach,
    on_exit = function(code, signal, client_id)
      if clients[root] == client_id then
        clients[root] = nil
      end
      if code ~= 0 and signal ~= 15 then
        vim.schedule(function()
          vim.notify(string.format("wsp: the language server for %s exited with %d", root, code), vim.log.levels.WARN)
        end)
      end
    end,
  }
  if M.config.targets then
    config.init_options = { targets = M.config.targets }
  end
  if vim.lsp.start then
    -- Reuse is decided above (per root, including clients being restarted), so never here.
    vim.api.nvim_buf_call(buf, function()
      id = vim.lsp.start(config, { bufnr = buf, reuse_client = function() return false end })
    end)
  else
    id = vim.lsp.start_client(config)
  end
  if not id then
    return nil
  end
  vim.lsp.buf_attach_client(buf, id)
  clients[root] = id
  return id
end

--- Everything the plugin does for one wsp buffer.
function M.attach(buf)
  if buf == 0 then
    buf = vim.api.nvim_get_current_buf()
  end
  if M.config.buffer_options then
    set_buffer_options(buf)
  end
  if M.config.highlight then
    M.highlight(buf)
  end
  if M.config.lsp and vim.bo[buf].buftype == "" then
    M.start_lsp(buf)
  end
end

local function wsp_buffers()
  local bufs = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].filetype == "wsp" then
      table.insert(bufs, buf)
    end
  end
  return bufs
end

--- Stops every client and starts them again for the open wsp buffers.
function M.restart()
  for root, id in pairs(clients) do
    clients[root] = nil
    vim.lsp.stop_client(id)
  end
  for _, buf in ipairs(wsp_buffers()) do
    if vim.bo[buf].buftype == "" then
      M.start_lsp(buf)
    end
  end
end

--- Ids of the running clients by root folder.
function M.clients()
  return vim.deepcopy(clients)
end

local function grammar_abi()
  local file = io.open(join(M.grammar_dir(), "src", "parser.c"), "r")
  if not file then
    return nil
  end
  for _ = 1, 40 do
    local line = file:read("*l")
    local abi = line and line:match("^#define LANGUAGE_VERSION (%d+)")
    if abi or not line then
      file:close()
      return abi and tonumber(abi)
    end
  end
  file:close()
end

--- The lines :WspInfo prints.
function M.info()
  local lines = {}
  local function add(fmt, ...)
    table.insert(lines, string.format(fmt, ...))
  end
  local cmd = M.config.cmd
  add("server: %s (%s)", table.concat(cmd, " "), vim.fn.executable(cmd[1]) == 1 and "executable" or "NOT executable")
  add("targets: %s", M.config.targets and table.concat(M.config.targets, ", ") or "none added (each folder's wsp.toml decides)")
  local any = false
  for root, id in pairs(clients) do
    local client = vim.lsp.get_client_by_id(id)
    if client then
      any = true
      local bufs = {}
      if client.attached_buffers then
        for b in pairs(client.attached_buffers) do
          table.insert(bufs, b)
        end
      else
        bufs = vim.lsp.get_buffers_by_client_id(id) -- 0.7
      end
      table.sort(bufs)
      local ready = client.initialized or (client.initialized == nil and client.server_capabilities ~= nil)
      add("client %d: %s, root %s, buffers %s", id, ready and "running" or "starting", root, table.concat(bufs, " "))
    end
  end
  if not any then
    add("client: none running")
  end
  local ts = vim.treesitter
  local newest = ts.language_version or vim.treesitter.language_version
  local oldest = ts.minimum_language_version
  local loaded = "not loaded"
  if parser_loaded then
    local inspect = ts.language.inspect or ts.language.inspect_language
    local ok, lang = pcall(inspect, "wsp")
    local abi = ok and (lang.abi_version or lang._abi_version)
    loaded = abi and ("loaded, ABI " .. abi) or "loaded"
  end
  add("parser: %s (%s)", M.parser_path() or "not built", loaded)
  add("parser ABI: grammar src/ %s, this Neovim loads %s-%s", tostring(grammar_abi()), tostring(oldest), tostring(newest))
  add("grammar: %s", M.grammar_dir())
  add("queries: %s", ensure_queries() or ("NOT FOUND on 'runtimepath' nor in " .. join(M.grammar_dir(), "queries")))
  local buf = vim.api.nvim_get_current_buf()
  if vim.bo[buf].filetype == "wsp" then
    local active = ts.highlighter and ts.highlighter.active and ts.highlighter.active[buf] ~= nil
    add("this buffer: tree-sitter highlighting %s", active and "on" or "off")
  end
  return lines
end

local function build_command(src, out)
  local cc = {}
  for word in (vim.env.CC or ""):gmatch("%S+") do
    table.insert(cc, word)
  end
  if #cc == 0 then
    for _, name in ipairs({ "cc", "gcc", "clang" }) do
      if vim.fn.executable(name) == 1 then
        cc = { name }
        break
      end
    end
  end
  if #cc == 0 then
    return nil
  end
  local args = vim.list_extend(cc, {
    "-o", out, "-shared", "-fPIC", "-O2", "-std=c11", "-w",
    "-I", src, join(src, "parser.c"), join(src, "scanner.c"),
  })
  return args
end

--- Compiles the grammar's src/parser.c and src/scanner.c into <parser_dir>/wsp.so.
--- `done(ok, message)` is called when the compiler finishes; with no `done` the call waits.
function M.build_parser(done)
  local src = join(M.grammar_dir(), "src")
  local function finish(ok, message)
    if done then
      done(ok, message)
    end
    return ok, message
  end
  if not exists(join(src, "parser.c")) then
    return finish(false, "no grammar at " .. M.grammar_dir() .. " (set require('wsp').setup({ grammar = '.../syntax/tree-sitter-wsp' }))")
  end
  local dir = M.parser_dir()
  vim.fn.mkdir(dir, "p")
  local out = join(dir, "wsp.so")
  -- Written beside and renamed: a running Neovim that mapped the old wsp.so keeps its copy.
  local tmp = string.format("%s.%d.tmp", out, uv.os_getpid())
  local args = build_command(src, tmp)
  if not args then
    return finish(false, "no C compiler: set $CC or install cc")
  end
  local output = {}
  local function collect(_, data)
    for _, line in ipairs(data or {}) do
      if line ~= "" then
        table.insert(output, line)
      end
    end
  end
  local result
  local job = vim.fn.jobstart(args, {
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = collect,
    on_stderr = collect,
    on_exit = function(_, code)
      if code ~= 0 then
        os.remove(tmp)
        result = { false, string.format("`%s` failed (exit %d):\n%s", table.concat(args, " "), code, table.concat(output, "\n")) }
      else
        local renamed, err = uv.fs_rename(tmp, out)
        if renamed then
          result = { true, out }
        else
          result = { false, "cannot write " .. out .. ": " .. tostring(err) }
        end
      end
      if done then
        done(result[1], result[2])
      end
    end,
  })
  if job <= 0 then
    return finish(false, "cannot run " .. args[1])
  end
  if not done then
    vim.fn.jobwait({ job })
    vim.wait(1000, function()
      return result ~= nil
    end, 10)
    return unpack(result or { false, "the compiler did not finish" })
  end
  return true, "started"
end

--- :WspBuildParser: build, then highlight the open wsp buffers if the parser is new here.
function M.build_parser_command()
  vim.notify("wsp: compiling the tree-sitter parser from " .. M.grammar_dir() .. " ...", vim.log.levels.INFO)
  M.build_parser(function(ok, message)
    vim.schedule(function()
      if not ok then
        vim.notify("wsp: building the parser failed: " .. message, vim.log.levels.ERROR)
        return
      end
      if parser_loaded then
        vim.notify("wsp: built " .. message .. "; restart Neovim to load the new parser", vim.log.levels.INFO)
        return
      end
      notified.parser = nil
      vim.notify("wsp: built " .. message, vim.log.levels.INFO)
      if M.config.highlight then
        for _, buf in ipairs(wsp_buffers()) do
          M.highlight(buf)
        end
      end
    end)
  end)
end

function M.setup(opts)
  opts = opts or {}
  local config = vim.tbl_extend("force", vim.deepcopy(defaults), opts)
  if type(config.cmd) == "string" then
    -- The path of the binary alone: the server is its `lsp` subcommand.
    config.cmd = { config.cmd, "lsp" }
  end
  assert(type(config.cmd) == "table" and type(config.cmd[1]) == "string", "wsp: cmd must be a list like { 'wsp', 'lsp' }")
  if type(config.targets) == "string" then
    config.targets = { config.targets }
  end
  for _, target in ipairs(config.targets or {}) do
    if not VALID_TARGETS[target] then
      vim.notify("wsp: unknown target `" .. tostring(target) .. "` (valid: cpu_sim, ascend_npu)", vim.log.levels.WARN)
    end
  end
  M.config = config

  require("wsp.commands").create()
  local group = vim.api.nvim_create_augroup("wsp", { clear = true })
  -- The same detection as ftdetect/wsp.vim, for a plugin put on the runtimepath after startup
  -- (ftdetect/ is only read by `filetype on`).
  vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
    group = group,
    pattern = "*.wsp",
    command = "setfiletype wsp",
  })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = "wsp",
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  -- Buffers opened before setup ran: .wsp files not detected yet get the filetype (and so the
  -- FileType autocmd); those already of filetype wsp are attached here.
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      if vim.bo[buf].filetype == "wsp" then
        M.attach(buf)
      elseif vim.bo[buf].filetype == "" and vim.api.nvim_buf_get_name(buf):match("%.wsp$") then
        vim.bo[buf].filetype = "wsp"
      end
    end
  end
end

return M
