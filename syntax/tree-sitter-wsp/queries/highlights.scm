; Highlights for WSP, with Neovim's capture names (`:help treesitter-highlight-groups`).
; Neovim applies every match and, at equal priority, the LAST pattern wins, so general patterns
; come first and specific ones after them (tree-sitter-highlight, which keeps the first match,
; would show the general ones). Only `#eq?`, `#any-of?` and `#match?` (with a regex that Vim's and
; Rust's engines read alike) are used: Neovim 0.7 and current Neovim both run them. On 0.7 a
; dotted name falls back to its first component (`@keyword.function` -> `keyword` -> Keyword);
; editors/nvim adds the names 0.7 has no entry for (`@module`, `@attribute`, ...).

(identifier) @variable

; Attributes: `x.shape`, `DType.F32` (made a constant below).
(attribute
  attribute: (identifier) @variable.member)

; ALL_CAPS names: tensors A, B, C and dtypes F32, BF16.
((identifier) @constant
  (#match? @constant "^[A-Z][A-Z_0-9]*$"))

(parameter
  name: (identifier) @variable.parameter)

(keyword_argument
  name: (identifier) @variable.parameter)

((identifier) @type.builtin
  (#any-of? @type.builtin
    "Tile" "Tensor" "Scalar" "Constexpr" "In" "Out" "InOut" "Dense" "DenseDyn" "Ragged" "Sparse" "DType"
    "Channel" "Event" "TensorLayout" "TensorShard" "TensorReplicate" "MemLayout" "DispatchPolicy"
    "TimingPolicy" "TaskWindow" "WindowMode" "StartPolicy" "TracePolicy" "Program" "Workload"
    "SearchSpace" "AutoScheduler" "ScheduleConfig" "ExplorationSummary" "ExplorationResult"))

(call
  function: (identifier) @function.call)

(call
  function: (attribute
    attribute: (identifier) @function.method.call))

; A task: kernel[b, h](...)
(call
  function: (subscript
    value: (identifier) @function.call))

(call
  function: (identifier) @function.builtin
  (#any-of? @function.builtin
    "P" "send" "consume" "process" "for_each" "task" "connect" "replicate" "combine" "sequential" "relayout" "allreduce" "allgather" "reduce_scatter"
    "auto_schedule" "slot_load_u64" "slot_set_u64" "slot_u64" "slot_i64" "symbol_u64" "axis" "Symbol" "cond" "save_npy" "load_npy" "randn" "zeros" "ones" "arange" "full"
    "print" "len" "open"))

; pto.add(...), the deprecated tl.add(...), the axis builders P.seq(...), P.sel(...), P.when(...),
; math.sqrt(...) and json.dump(...)
(call
  function: (attribute
    object: (identifier) @module
    attribute: (identifier) @function.builtin)
  (#any-of? @module "pto" "tl" "P" "math" "json"))

(function_definition
  name: (identifier) @function)

(class_definition
  name: (identifier) @type)

(comment) @comment

(string) @string

; Docstrings: the first statement of a module, def or class when it is a string.
(module
  .
  (expression_statement
    (string) @string.documentation))

(function_definition
  body: (block
    .
    (expression_statement
      (string) @string.documentation)))

(class_definition
  body: (block
    .
    (expression_statement
      (string) @string.documentation)))

[
  (integer)
  (float)
] @number

[
  (true)
  (false)
] @boolean

[
  (none)
  (ellipsis)
] @constant.builtin

[
  "def"
  "lambda"
] @keyword.function

"class" @keyword.type

[
  "return"
  "yield"
] @keyword.return

[
  "import"
  "from"
  "as"
] @keyword.import

[
  "for"
  "while"
  (break_statement)
  (continue_statement)
] @keyword.repeat

[
  "if"
  "elif"
  "else"
] @keyword.conditional

[
  "try"
  "except"
  "finally"
  "raise"
] @keyword.exception

[
  "async"
  "await"
] @keyword.coroutine

[
  "with"
  (pass_statement)
  "del"
  "global"
  "nonlocal"
  "assert"
] @keyword

[
  "and"
  "or"
  "not"
  "in"
  "is"
  "is not"
  "not in"
] @keyword.operator

; The `in` of a loop header belongs to the loop.
(for_statement
  "in" @keyword.repeat)

(for_in_clause
  "in" @keyword.repeat)

[
  "+" "-" "*" "/" "//" "%" "**" "@" "|" "&" "^" "~" "<<" ">>"
  "<" "<=" "==" "!=" ">=" ">" "=" ":=" "->"
  "+=" "-=" "*=" "/=" "//=" "%=" "**=" "@=" "|=" "&=" "^=" "<<=" ">>="
] @operator

[
  "(" ")" "[" "]" "{" "}"
] @punctuation.bracket

[
  "," "." ":" ";"
] @punctuation.delimiter

; @kernel, @workload, @kernel(cpp_src=...): after the operators, so `@` is the decorator's.
(decorator
  "@" @attribute
  (identifier) @attribute)

(decorator
  "@" @attribute
  (call
    function: (identifier) @attribute))
