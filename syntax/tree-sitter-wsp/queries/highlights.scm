; Highlights for WSP. Specific patterns come first: tree-sitter-highlight keeps the first match.

(comment) @comment

(string) @string

[
  (integer)
  (float)
] @number

[
  (true)
  (false)
  (none)
  (ellipsis)
] @constant.builtin

; @kernel, @workload, @kernel(cpp_src=...)
(decorator
  "@" @attribute
  (identifier) @attribute)

(decorator
  "@" @attribute
  (call
    function: (identifier) @attribute))

(function_definition
  name: (identifier) @function)

(class_definition
  name: (identifier) @type)

; pto.add(...), and the deprecated tl.add(...)
(call
  function: (attribute
    object: (identifier) @module
    attribute: (identifier) @function.builtin)
  (#any-of? @module "pto" "tl"))

; P.seq(...), P.sel(...), P.when(...)
(call
  function: (attribute
    object: (identifier) @function.builtin
    attribute: (identifier) @function.builtin)
  (#eq? @function.builtin "P"))

; A task: kernel[b, h](...)
(call
  function: (subscript
    value: (identifier) @function.call))

(call
  function: (identifier) @function.builtin
  (#any-of? @function.builtin
    "P" "send" "consume" "combine" "sequential" "relayout" "allreduce" "allgather" "reduce_scatter"
    "slot_load_u64" "slot_set_u64" "slot_u64" "save_npy" "load_npy" "randn" "zeros" "ones" "arange" "full"
    "print"))

(call
  function: (identifier) @function.call)

(call
  function: (attribute
    attribute: (identifier) @function.method.call))

((identifier) @type.builtin
  (#any-of? @type.builtin
    "Tile" "Tensor" "Scalar" "Constexpr" "In" "Out" "InOut" "Dense" "DenseDyn" "Ragged" "Sparse" "DType"
    "Channel" "Event" "TensorLayout" "TensorShard" "TensorReplicate" "MemLayout" "DispatchPolicy"
    "TimingPolicy" "TaskWindow" "WindowMode"))

(parameter
  name: (identifier) @variable.parameter)

(keyword_argument
  name: (identifier) @variable.parameter)

(attribute
  attribute: (identifier) @property)

((identifier) @constant
  (#match? @constant "^[A-Z][A-Z_0-9]*$"))

(identifier) @variable

[
  "def"
  "class"
  "lambda"
] @keyword.function

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
  "with"
  (pass_statement)
  "del"
  "global"
  "nonlocal"
  "assert"
  "async"
  "await"
] @keyword

[
  "and"
  "or"
  "not"
  "in"
  "is"
] @keyword.operator

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
