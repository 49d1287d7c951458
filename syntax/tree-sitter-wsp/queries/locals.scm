; Scopes, definitions and references, for highlighting uses of the same name.
[
  (module)
  (function_definition)
  (lambda)
] @local.scope

(function_definition
  name: (identifier) @local.definition.function)

(parameter
  name: (identifier) @local.definition.parameter)

(list_splat_pattern
  (identifier) @local.definition.parameter)

(dictionary_splat_pattern
  (identifier) @local.definition.parameter)

(for_statement
  left: (identifier) @local.definition.var)

(for_statement
  left: (pattern_list
    (identifier) @local.definition.var))

(with_item
  alias: (identifier) @local.definition.var)

(assignment
  left: (identifier) @local.definition.var)

(identifier) @local.reference
