/**
 * Tree-sitter grammar of the WSP language, for editors (highlighting, folding, indentation).
 *
 * WSP files are Python 3 syntax; this grammar covers the statically checked subset and parses
 * the rest of Python's statements and expressions too, so that a file being edited highlights
 * the same way whatever it contains. Indentation, newlines and dedents come from the external
 * scanner in src/scanner.c, as in tree-sitter-python. After editing this file run
 * `cargo xtask tree-sitter` (it regenerates src/ and records the grammar hash).
 */

const PREC = {
  lambda: -2,
  conditional: -1,
  named: 1,
  or: 10,
  and: 11,
  not: 12,
  compare: 13,
  bitwise_or: 14,
  bitwise_xor: 15,
  bitwise_and: 16,
  shift: 17,
  plus: 18,
  times: 19,
  unary: 20,
  power: 21,
  await: 22,
  call: 23,
};

const commaSep1 = (rule) => seq(rule, repeat(seq(',', rule)));
const sep1 = (rule, separator) => seq(rule, repeat(seq(separator, rule)));

module.exports = grammar({
  name: 'wsp',

  externals: ($) => [$._newline, $._indent, $._dedent, $._error_sentinel, ']', ')', '}'],

  extras: ($) => [$.comment, /[\s\f\uFEFF\u2060\u200B]|\\\r?\n/],

  word: ($) => $.identifier,

  conflicts: ($) => [
    [$.tuple, $.with_item],
  ],

  supertypes: ($) => [$._simple_statement, $._compound_statement, $._expression, $._primary_expression],

  rules: {
    module: ($) => repeat($._statement),

    _statement: ($) => choice($._simple_statements, $._compound_statement),

    _simple_statements: ($) => seq(sep1($._simple_statement, ';'), optional(';'), $._newline),

    _simple_statement: ($) =>
      choice(
        $.import_statement,
        $.import_from_statement,
        $.pass_statement,
        $.break_statement,
        $.continue_statement,
        $.return_statement,
        $.global_statement,
        $.nonlocal_statement,
        $.delete_statement,
        $.assert_statement,
        $.raise_statement,
        $.expression_statement,
      ),

    import_statement: ($) => seq('import', commaSep1(choice($.dotted_name, $.aliased_import))),

    import_from_statement: ($) =>
      seq(
        'from',
        field('module_name', choice($.relative_import, $.dotted_name)),
        'import',
        choice($.wildcard_import, seq('(', $._import_list, ')'), $._import_list),
      ),

    _import_list: ($) => seq(commaSep1(field('name', choice($.dotted_name, $.aliased_import))), optional(',')),

    relative_import: ($) => seq($.import_prefix, optional($.dotted_name)),
    import_prefix: (_) => repeat1(choice('.', '...')),
    aliased_import: ($) => seq(field('name', $.dotted_name), 'as', field('alias', $.identifier)),
    wildcard_import: (_) => '*',
    dotted_name: ($) => prec(1, sep1($.identifier, '.')),

    pass_statement: (_) => 'pass',
    break_statement: (_) => 'break',
    continue_statement: (_) => 'continue',
    return_statement: ($) => seq('return', optional($._expressions)),
    global_statement: ($) => seq('global', commaSep1($.identifier)),
    nonlocal_statement: ($) => seq('nonlocal', commaSep1($.identifier)),
    delete_statement: ($) => seq('del', $._expressions),
    assert_statement: ($) => seq('assert', commaSep1($._expression)),
    raise_statement: ($) => seq('raise', optional(seq($._expression, optional(seq('from', $._expression))))),

    expression_statement: ($) => choice($._expressions, $.assignment, $.augmented_assignment, $.yield),

    assignment: ($) =>
      seq(
        field('left', $._expressions),
        choice(
          seq('=', field('right', $._right_hand_side)),
          seq(':', field('type', $._expression)),
          seq(':', field('type', $._expression), '=', field('right', $._right_hand_side)),
        ),
      ),

    augmented_assignment: ($) =>
      seq(
        field('left', $._expression),
        field('operator', choice('+=', '-=', '*=', '/=', '@=', '//=', '%=', '**=', '>>=', '<<=', '&=', '^=', '|=')),
        field('right', $._right_hand_side),
      ),

    _right_hand_side: ($) => choice($._expressions, $.assignment, $.yield),

    yield: ($) => prec.right(seq('yield', optional(choice(seq('from', $._expression), $._expressions)))),

    _compound_statement: ($) =>
      choice(
        $.function_definition,
        $.decorated_definition,
        $.for_statement,
        $.with_statement,
        $.if_statement,
        $.while_statement,
        $.try_statement,
        $.class_definition,
      ),

    decorated_definition: ($) =>
      seq(repeat1($.decorator), field('definition', choice($.function_definition, $.class_definition))),

    decorator: ($) => seq('@', $._expression, $._newline),

    function_definition: ($) =>
      seq(
        optional('async'),
        'def',
        field('name', $.identifier),
        field('parameters', $.parameters),
        optional(seq('->', field('return_type', $._expression))),
        ':',
        field('body', $.block),
      ),

    parameters: ($) => seq('(', optional(seq(commaSep1($._parameter), optional(','))), ')'),

    lambda_parameters: ($) => seq(commaSep1($._lambda_parameter), optional(',')),

    _lambda_parameter: ($) =>
      choice(
        alias($.lambda_parameter, $.parameter),
        alias(seq('*', $.identifier), $.list_splat_pattern),
        alias(seq('**', $.identifier), $.dictionary_splat_pattern),
        $.positional_separator,
        $.keyword_separator,
      ),

    lambda_parameter: ($) => seq(field('name', $.identifier), optional(seq('=', field('value', $._expression)))),

    _parameter: ($) => choice($.parameter, $.list_splat_pattern, $.dictionary_splat_pattern, $.positional_separator, $.keyword_separator),

    parameter: ($) =>
      seq(
        field('name', $.identifier),
        optional(seq(':', field('type', $._expression))),
        optional(seq('=', field('value', $._expression))),
      ),

    list_splat_pattern: ($) => seq('*', $.identifier, optional(seq(':', field('type', $._expression)))),
    dictionary_splat_pattern: ($) => seq('**', $.identifier, optional(seq(':', field('type', $._expression)))),
    positional_separator: (_) => '/',
    keyword_separator: (_) => '*',

    class_definition: ($) =>
      seq('class', field('name', $.identifier), optional(field('superclasses', $.argument_list)), ':', field('body', $.block)),

    for_statement: ($) =>
      seq(
        optional('async'),
        'for',
        field('left', $._targets),
        'in',
        field('right', $._expressions),
        ':',
        field('body', $.block),
        optional(field('alternative', $.else_clause)),
      ),

    with_statement: ($) =>
      seq(optional('async'), 'with', choice($._with_items_parenthesized, commaSep1($.with_item)), ':', field('body', $.block)),

    _with_items_parenthesized: ($) => seq('(', commaSep1($.with_item), optional(','), ')'),

    with_item: ($) => prec.dynamic(1, seq(field('value', $._expression), optional(seq('as', field('alias', $._target))))),

    if_statement: ($) =>
      seq(
        'if',
        field('condition', $._expression),
        ':',
        field('consequence', $.block),
        repeat(field('alternative', $.elif_clause)),
        optional(field('alternative', $.else_clause)),
      ),

    elif_clause: ($) => seq('elif', field('condition', $._expression), ':', field('consequence', $.block)),
    else_clause: ($) => seq('else', ':', field('body', $.block)),

    while_statement: ($) =>
      seq('while', field('condition', $._expression), ':', field('body', $.block), optional(field('alternative', $.else_clause))),

    try_statement: ($) =>
      seq(
        'try',
        ':',
        field('body', $.block),
        choice(
          seq(repeat1($.except_clause), optional($.else_clause), optional($.finally_clause)),
          $.finally_clause,
        ),
      ),

    except_clause: ($) =>
      seq('except', optional('*'), optional(seq($._expression, optional(seq('as', $.identifier)))), ':', $.block),

    finally_clause: ($) => seq('finally', ':', $.block),

    block: ($) => choice(seq($._newline, $._indent, repeat($._statement), $._dedent), $._simple_statements),

    // ---- expressions ----

    _expressions: ($) => choice($._expression, $.expression_list),

    expression_list: ($) => prec.right(seq($._expression, choice(',', seq(repeat1(seq(',', $._expression)), optional(','))))),

    _targets: ($) => choice($._target, alias($._target_list, $.pattern_list)),
    _target_list: ($) => prec.right(seq($._target, choice(',', seq(repeat1(seq(',', $._target)), optional(','))))),
    _target: ($) => choice($._primary_expression, $.list_splat),

    _expression: ($) =>
      choice(
        $.comparison_operator,
        $.not_operator,
        $.boolean_operator,
        $.lambda,
        $._primary_expression,
        $.conditional_expression,
        $.named_expression,
        $.list_splat,
      ),

    _primary_expression: ($) =>
      choice(
        $.binary_operator,
        $.identifier,
        $.string,
        $.concatenated_string,
        $.integer,
        $.float,
        $.true,
        $.false,
        $.none,
        $.ellipsis,
        $.unary_operator,
        $.attribute,
        $.subscript,
        $.call,
        $.list,
        $.list_comprehension,
        $.dictionary,
        $.dictionary_comprehension,
        $.set,
        $.set_comprehension,
        $.tuple,
        $.parenthesized_expression,
        $.generator_expression,
        $.await,
      ),

    named_expression: ($) => prec(PREC.named, seq(field('name', $.identifier), ':=', field('value', $._expression))),

    list_splat: ($) => prec(PREC.unary, seq('*', $._primary_expression)),
    dictionary_splat: ($) => seq('**', $._primary_expression),

    not_operator: ($) => prec(PREC.not, seq('not', field('argument', $._expression))),

    boolean_operator: ($) =>
      choice(
        prec.left(PREC.and, seq(field('left', $._expression), field('operator', 'and'), field('right', $._expression))),
        prec.left(PREC.or, seq(field('left', $._expression), field('operator', 'or'), field('right', $._expression))),
      ),

    binary_operator: ($) => {
      const table = [
        [prec.left, '+', PREC.plus],
        [prec.left, '-', PREC.plus],
        [prec.left, '*', PREC.times],
        [prec.left, '@', PREC.times],
        [prec.left, '/', PREC.times],
        [prec.left, '%', PREC.times],
        [prec.left, '//', PREC.times],
        [prec.right, '**', PREC.power],
        [prec.left, '|', PREC.bitwise_or],
        [prec.left, '&', PREC.bitwise_and],
        [prec.left, '^', PREC.bitwise_xor],
        [prec.left, '<<', PREC.shift],
        [prec.left, '>>', PREC.shift],
      ];
      return choice(
        ...table.map(([fn, operator, precedence]) =>
          fn(precedence, seq(field('left', $._primary_expression), field('operator', operator), field('right', $._primary_expression))),
        ),
      );
    },

    unary_operator: ($) => prec(PREC.unary, seq(field('operator', choice('+', '-', '~')), field('argument', $._primary_expression))),

    comparison_operator: ($) =>
      prec.left(
        PREC.compare,
        seq(
          $._primary_expression,
          repeat1(
            seq(
              field('operators', choice('<', '<=', '==', '!=', '>=', '>', 'in', alias(seq('not', 'in'), 'not in'), 'is', alias(seq('is', 'not'), 'is not'))),
              $._primary_expression,
            ),
          ),
        ),
      ),

    lambda: ($) =>
      prec(PREC.lambda, seq('lambda', field('parameters', optional($.lambda_parameters)), ':', field('body', $._expression))),

    conditional_expression: ($) =>
      prec.right(PREC.conditional, seq($._expression, 'if', $._expression, 'else', $._expression)),

    await: ($) => prec(PREC.await, seq('await', $._primary_expression)),

    attribute: ($) => prec(PREC.call, seq(field('object', $._primary_expression), '.', field('attribute', $.identifier))),

    subscript: ($) =>
      prec(
        PREC.call,
        seq(
          field('value', $._primary_expression),
          '[',
          commaSep1(field('subscript', choice($._expression, $.slice))),
          optional(','),
          ']',
        ),
      ),

    slice: ($) => seq(optional($._expression), ':', optional($._expression), optional(seq(':', optional($._expression)))),

    call: ($) => prec(PREC.call, seq(field('function', $._primary_expression), field('arguments', choice($.generator_expression, $.argument_list)))),

    argument_list: ($) =>
      seq('(', optional(commaSep1(choice($._expression, $.dictionary_splat, $.keyword_argument))), optional(','), ')'),

    keyword_argument: ($) => seq(field('name', $.identifier), '=', field('value', $._expression)),

    list: ($) => seq('[', optional(seq(commaSep1($._expression), optional(','))), ']'),
    set: ($) => seq('{', commaSep1($._expression), optional(','), '}'),
    tuple: ($) => seq('(', optional(seq(commaSep1($._expression), optional(','))), ')'),
    dictionary: ($) => seq('{', optional(seq(commaSep1(choice($.pair, $.dictionary_splat)), optional(','))), '}'),
    pair: ($) => seq(field('key', $._expression), ':', field('value', $._expression)),
    parenthesized_expression: ($) => prec(PREC.call + 1, seq('(', choice($._expression, $.yield), ')')),

    list_comprehension: ($) => seq('[', field('body', $._expression), $._comprehension_clauses, ']'),
    dictionary_comprehension: ($) => seq('{', field('body', $.pair), $._comprehension_clauses, '}'),
    set_comprehension: ($) => seq('{', field('body', $._expression), $._comprehension_clauses, '}'),
    generator_expression: ($) => seq('(', field('body', $._expression), $._comprehension_clauses, ')'),

    _comprehension_clauses: ($) => seq($.for_in_clause, repeat(choice($.for_in_clause, $.if_clause))),
    for_in_clause: ($) =>
      prec.left(seq(optional('async'), 'for', field('left', $._targets), 'in', field('right', commaSep1($._expression)))),
    if_clause: ($) => seq('if', $._expression),

    // ---- literals ----

    identifier: (_) => /[_\p{XID_Start}][_\p{XID_Continue}]*/,
    integer: (_) => token(choice(/0[xX](_?[0-9a-fA-F])+/, /0[oO](_?[0-7])+/, /0[bB](_?[01])+/, /[0-9](_?[0-9])*[jJ]?/)),
    float: (_) => {
      const digits = /[0-9](_?[0-9])*/;
      const exponent = seq(/[eE][+-]?/, digits);
      return token(
        seq(
          choice(seq(digits, '.', optional(digits), optional(exponent)), seq('.', digits, optional(exponent)), seq(digits, exponent)),
          optional(/[jJ]/),
        ),
      );
    },
    string: (_) => {
      const prefix = /[rRuUfFbB]|[rR][fFbB]|[fFbB][rR]/;
      return token(
        seq(
          optional(prefix),
          choice(
            seq('"""', repeat(choice(/[^"\\]/, /\\(.|\r?\n)/, /"[^"\\]/, /""[^"\\]/, /"\\(.|\r?\n)/, /""\\(.|\r?\n)/)), '"""'),
            seq("'''", repeat(choice(/[^'\\]/, /\\(.|\r?\n)/, /'[^'\\]/, /''[^'\\]/, /'\\(.|\r?\n)/, /''\\(.|\r?\n)/)), "'''"),
            seq('"', repeat(choice(/[^"\\\r\n]/, /\\(.|\r?\n)/)), '"'),
            seq("'", repeat(choice(/[^'\\\r\n]/, /\\(.|\r?\n)/)), "'"),
          ),
        ),
      );
    },
    concatenated_string: ($) => seq($.string, repeat1($.string)),
    true: (_) => 'True',
    false: (_) => 'False',
    none: (_) => 'None',
    ellipsis: (_) => '...',
    comment: (_) => token(seq('#', /.*/)),
  },
});
