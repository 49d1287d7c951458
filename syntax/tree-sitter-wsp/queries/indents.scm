; Indentation (nvim-treesitter conventions): a block header or an open bracket indents what follows.
[
  (function_definition)
  (class_definition)
  (for_statement)
  (with_statement)
  (if_statement)
  (elif_clause)
  (else_clause)
  (while_statement)
  (try_statement)
  (except_clause)
  (finally_clause)
  (argument_list)
  (parameters)
  (list)
  (dictionary)
  (set)
  (tuple)
  (parenthesized_expression)
] @indent.begin

[
  ")"
  "]"
  "}"
] @indent.branch @indent.end

[
  (return_statement)
  (pass_statement)
  (break_statement)
  (continue_statement)
  (raise_statement)
] @indent.dedent

(string) @indent.auto
