//! `SyntaxKind`: one flat enum for every token and node, and the logos lexer rules of the tokens.
//!
//! Token kinds come first (they must stay below 128 so that `TokenSet` fits a `u128`), then node
//! kinds. The logos attributes on the token variants are the lexical grammar; `lexer.rs` adds what
//! a regular language cannot say (triple-quoted strings, identifier validity, indentation).

use logos::Logos;

/// What went wrong while lexing one token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LexError {
    #[default]
    UnexpectedCharacter,
    UnterminatedString,
    UnterminatedTripleString,
    InvalidNumber,
}

impl LexError {
    pub fn message(self) -> &'static str {
        match self {
            LexError::UnexpectedCharacter => "invalid character",
            LexError::UnterminatedString => {
                "unterminated string literal: a quoted string must close on the line it starts \
                 (use a triple-quoted string for several lines)"
            }
            LexError::UnterminatedTripleString => {
                "unterminated triple-quoted string literal: no closing quotes before the end of the file"
            }
            LexError::InvalidNumber => "invalid number literal",
        }
    }
}

/// Finds the end of a triple-quoted string whose opening quotes were just matched.
fn triple_quoted(lex: &mut logos::Lexer<'_, SyntaxKind>) -> Result<(), LexError> {
    let quote = lex.slice().as_bytes()[lex.slice().len() - 1];
    let rest = lex.remainder().as_bytes();
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            b'\\' => i += 2,
            c if c == quote && rest[i..].starts_with(&[quote, quote, quote]) => {
                lex.bump(i + 3);
                return Ok(());
            }
            _ => i += 1,
        }
    }
    lex.bump(rest.len());
    Err(LexError::UnterminatedTripleString)
}

fn unterminated_string(_: &mut logos::Lexer<'_, SyntaxKind>) -> Result<(), LexError> {
    Err(LexError::UnterminatedString)
}

fn invalid_number(_: &mut logos::Lexer<'_, SyntaxKind>) -> Result<(), LexError> {
    Err(LexError::InvalidNumber)
}

#[allow(non_camel_case_types)]
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[logos(error = LexError)]
#[repr(u16)]
pub enum SyntaxKind {
    // ---- trivia ----
    #[regex(r"[ \t\x0C]+")]
    WHITESPACE = 0,
    #[regex(r"#[^\r\n]*", allow_greedy = true)]
    COMMENT,
    /// A backslash that joins this physical line with the next.
    #[regex(r"\\(\r\n|\n|\r)")]
    LINE_CONTINUATION,
    /// A line break that does not end a logical line (inside brackets, or a blank line).
    NL,

    // ---- layout tokens; NEWLINE is lexed, INDENT/DEDENT/EOF are synthesized ----
    #[regex(r"\r\n|\n|\r")]
    NEWLINE,
    INDENT,
    DEDENT,
    EOF,

    // ---- names and literals ----
    #[regex(r"([A-Za-z_]|[^\x00-\x7F])([A-Za-z0-9_]|[^\x00-\x7F])*")]
    NAME,
    #[regex(r"[1-9](_?[0-9])*|0(_?0)*")]
    #[regex(r"0[xX](_?[0-9a-fA-F])+")]
    #[regex(r"0[oO](_?[0-7])+")]
    #[regex(r"0[bB](_?[01])+")]
    INT_NUMBER,
    #[regex(r"([0-9](_?[0-9])*)?\.[0-9](_?[0-9])*([eE][+-]?[0-9](_?[0-9])*)?")]
    #[regex(r"[0-9](_?[0-9])*\.([eE][+-]?[0-9](_?[0-9])*)?")]
    #[regex(r"[0-9](_?[0-9])*[eE][+-]?[0-9](_?[0-9])*")]
    FLOAT_NUMBER,
    #[regex(r"([0-9](_?[0-9])*|([0-9](_?[0-9])*)?\.[0-9](_?[0-9])*|[0-9](_?[0-9])*\.)([eE][+-]?[0-9](_?[0-9])*)?[jJ]")]
    IMAG_NUMBER,
    #[regex(r#"([rRuUfFbB]|[rR][fFbB]|[fFbB][rR])?'([^'\\\r\n]|\\(.|\r\n|\n|\r))*'"#)]
    #[regex(r#"([rRuUfFbB]|[rR][fFbB]|[fFbB][rR])?"([^"\\\r\n]|\\(.|\r\n|\n|\r))*""#)]
    #[regex(r#"([rRuUfFbB]|[rR][fFbB]|[fFbB][rR])?'''"#, triple_quoted)]
    #[regex(r#"([rRuUfFbB]|[rR][fFbB]|[fFbB][rR])?""""#, triple_quoted)]
    #[regex(
        r#"([rRuUfFbB]|[rR][fFbB]|[fFbB][rR])?'([^'\\\r\n]|\\(.|\r\n|\n|\r))*"#,
        unterminated_string
    )]
    #[regex(
        r#"([rRuUfFbB]|[rR][fFbB]|[fFbB][rR])?"([^"\\\r\n]|\\(.|\r\n|\n|\r))*"#,
        unterminated_string
    )]
    STRING,
    /// A digit run glued to letters or underscores that no number rule accepts (`08`, `1_`, `0x`).
    #[regex(r"[0-9][0-9A-Za-z_]*", invalid_number, priority = 1)]
    MALFORMED_NUMBER,

    // ---- keywords ----
    #[token("False")]
    FALSE_KW,
    #[token("None")]
    NONE_KW,
    #[token("True")]
    TRUE_KW,
    #[token("and")]
    AND_KW,
    #[token("as")]
    AS_KW,
    #[token("assert")]
    ASSERT_KW,
    #[token("async")]
    ASYNC_KW,
    #[token("await")]
    AWAIT_KW,
    #[token("break")]
    BREAK_KW,
    #[token("class")]
    CLASS_KW,
    #[token("continue")]
    CONTINUE_KW,
    #[token("def")]
    DEF_KW,
    #[token("del")]
    DEL_KW,
    #[token("elif")]
    ELIF_KW,
    #[token("else")]
    ELSE_KW,
    #[token("except")]
    EXCEPT_KW,
    #[token("finally")]
    FINALLY_KW,
    #[token("for")]
    FOR_KW,
    #[token("from")]
    FROM_KW,
    #[token("global")]
    GLOBAL_KW,
    #[token("if")]
    IF_KW,
    #[token("import")]
    IMPORT_KW,
    #[token("in")]
    IN_KW,
    #[token("is")]
    IS_KW,
    #[token("lambda")]
    LAMBDA_KW,
    #[token("nonlocal")]
    NONLOCAL_KW,
    #[token("not")]
    NOT_KW,
    #[token("or")]
    OR_KW,
    #[token("pass")]
    PASS_KW,
    #[token("raise")]
    RAISE_KW,
    #[token("return")]
    RETURN_KW,
    #[token("try")]
    TRY_KW,
    #[token("while")]
    WHILE_KW,
    #[token("with")]
    WITH_KW,
    #[token("yield")]
    YIELD_KW,

    // ---- punctuation ----
    #[token("(")]
    L_PAREN,
    #[token(")")]
    R_PAREN,
    #[token("[")]
    L_BRACK,
    #[token("]")]
    R_BRACK,
    #[token("{")]
    L_CURLY,
    #[token("}")]
    R_CURLY,
    #[token(":")]
    COLON,
    #[token(",")]
    COMMA,
    #[token(";")]
    SEMICOLON,
    #[token(".")]
    DOT,
    #[token("...")]
    ELLIPSIS,
    #[token("->")]
    ARROW,
    #[token("@")]
    AT,
    #[token("=")]
    EQ,
    #[token(":=")]
    COLON_EQ,
    #[token("+")]
    PLUS,
    #[token("-")]
    MINUS,
    #[token("*")]
    STAR,
    #[token("/")]
    SLASH,
    #[token("//")]
    DOUBLE_SLASH,
    #[token("%")]
    PERCENT,
    #[token("**")]
    DOUBLE_STAR,
    #[token("~")]
    TILDE,
    #[token("&")]
    AMP,
    #[token("|")]
    PIPE,
    #[token("^")]
    CARET,
    #[token("<<")]
    SHL,
    #[token(">>")]
    SHR,
    #[token("<")]
    LT,
    #[token(">")]
    GT,
    #[token("<=")]
    LT_EQ,
    #[token(">=")]
    GT_EQ,
    #[token("==")]
    EQ_EQ,
    #[token("!=")]
    NOT_EQ,
    #[token("+=")]
    PLUS_EQ,
    #[token("-=")]
    MINUS_EQ,
    #[token("*=")]
    STAR_EQ,
    #[token("/=")]
    SLASH_EQ,
    #[token("//=")]
    DOUBLE_SLASH_EQ,
    #[token("%=")]
    PERCENT_EQ,
    #[token("**=")]
    DOUBLE_STAR_EQ,
    #[token("@=")]
    AT_EQ,
    #[token("&=")]
    AMP_EQ,
    #[token("|=")]
    PIPE_EQ,
    #[token("^=")]
    CARET_EQ,
    #[token("<<=")]
    SHL_EQ,
    #[token(">>=")]
    SHR_EQ,
    /// Text no token rule accepts; the lexer records why.
    ERROR_TOKEN,

    // ---- nodes ----
    SOURCE_FILE,
    ERROR,
    // statements
    FUNCTION_DEF,
    DECORATOR,
    PARAM_LIST,
    PARAM,
    RETURN_TYPE,
    BLOCK,
    FOR_STMT,
    WITH_STMT,
    WITH_ITEM,
    IF_STMT,
    ELIF_CLAUSE,
    ELSE_CLAUSE,
    WHILE_STMT,
    TRY_STMT,
    EXCEPT_CLAUSE,
    FINALLY_CLAUSE,
    CLASS_DEF,
    PASS_STMT,
    BREAK_STMT,
    CONTINUE_STMT,
    RETURN_STMT,
    IMPORT_STMT,
    FROM_IMPORT_STMT,
    IMPORT_ALIAS,
    DOTTED_NAME,
    GLOBAL_STMT,
    NONLOCAL_STMT,
    DEL_STMT,
    ASSERT_STMT,
    RAISE_STMT,
    EXPR_STMT,
    ASSIGN_STMT,
    AUG_ASSIGN_STMT,
    ANN_ASSIGN_STMT,
    MATCH_STMT,
    CASE_CLAUSE,
    GUARD,
    // expressions
    NAME_EXPR,
    LITERAL,
    ATTRIBUTE_EXPR,
    CALL_EXPR,
    ARG_LIST,
    ARG,
    SUBSCRIPT_EXPR,
    SLICE,
    TUPLE_EXPR,
    PAREN_EXPR,
    LIST_EXPR,
    DICT_EXPR,
    DICT_ENTRY,
    SET_EXPR,
    LIST_COMP,
    SET_COMP,
    DICT_COMP,
    GENERATOR_EXPR,
    COMP_FOR,
    COMP_IF,
    BIN_EXPR,
    UNARY_EXPR,
    BOOL_EXPR,
    COMPARE_EXPR,
    COND_EXPR,
    LAMBDA_EXPR,
    STARRED_EXPR,
    NAMED_EXPR,
    YIELD_EXPR,
    AWAIT_EXPR,
    // patterns of `case` clauses
    AS_PATTERN,
    OR_PATTERN,
    LITERAL_PATTERN,
    CAPTURE_PATTERN,
    WILDCARD_PATTERN,
    VALUE_PATTERN,
    GROUP_PATTERN,
    SEQUENCE_PATTERN,
    STAR_PATTERN,
    MAPPING_PATTERN,
    KEY_VALUE_PATTERN,
    DOUBLE_STAR_PATTERN,
    CLASS_PATTERN,
    PATTERN_ARGS,
    KEYWORD_PATTERN,

    #[doc(hidden)]
    __LAST,
}

use SyntaxKind::*;

impl SyntaxKind {
    pub fn is_trivia(self) -> bool {
        matches!(self, WHITESPACE | COMMENT | LINE_CONTINUATION | NL)
    }

    pub fn is_keyword(self) -> bool {
        (FALSE_KW as u16..=YIELD_KW as u16).contains(&(self as u16))
    }

    pub fn is_token(self) -> bool {
        (self as u16) <= ERROR_TOKEN as u16
    }

    /// How this token is written in messages: "`)`", "newline", "name".
    pub fn describe(self) -> &'static str {
        match self {
            NEWLINE => "newline",
            INDENT => "indent",
            DEDENT => "dedent",
            EOF => "end of file",
            NAME => "name",
            INT_NUMBER | FLOAT_NUMBER | IMAG_NUMBER | MALFORMED_NUMBER => "number",
            STRING => "string",
            ERROR_TOKEN => "invalid character",
            _ => match self.text() {
                Some(t) => t,
                None => "syntax node",
            },
        }
    }

    /// The fixed text of a keyword or punctuation token.
    pub fn text(self) -> Option<&'static str> {
        Some(match self {
            FALSE_KW => "`False`",
            NONE_KW => "`None`",
            TRUE_KW => "`True`",
            AND_KW => "`and`",
            AS_KW => "`as`",
            ASSERT_KW => "`assert`",
            ASYNC_KW => "`async`",
            AWAIT_KW => "`await`",
            BREAK_KW => "`break`",
            CLASS_KW => "`class`",
            CONTINUE_KW => "`continue`",
            DEF_KW => "`def`",
            DEL_KW => "`del`",
            ELIF_KW => "`elif`",
            ELSE_KW => "`else`",
            EXCEPT_KW => "`except`",
            FINALLY_KW => "`finally`",
            FOR_KW => "`for`",
            FROM_KW => "`from`",
            GLOBAL_KW => "`global`",
            IF_KW => "`if`",
            IMPORT_KW => "`import`",
            IN_KW => "`in`",
            IS_KW => "`is`",
            LAMBDA_KW => "`lambda`",
            NONLOCAL_KW => "`nonlocal`",
            NOT_KW => "`not`",
            OR_KW => "`or`",
            PASS_KW => "`pass`",
            RAISE_KW => "`raise`",
            RETURN_KW => "`return`",
            TRY_KW => "`try`",
            WHILE_KW => "`while`",
            WITH_KW => "`with`",
            YIELD_KW => "`yield`",
            L_PAREN => "`(`",
            R_PAREN => "`)`",
            L_BRACK => "`[`",
            R_BRACK => "`]`",
            L_CURLY => "`{`",
            R_CURLY => "`}`",
            COLON => "`:`",
            COMMA => "`,`",
            SEMICOLON => "`;`",
            DOT => "`.`",
            ELLIPSIS => "`...`",
            ARROW => "`->`",
            AT => "`@`",
            EQ => "`=`",
            COLON_EQ => "`:=`",
            PLUS => "`+`",
            MINUS => "`-`",
            STAR => "`*`",
            SLASH => "`/`",
            DOUBLE_SLASH => "`//`",
            PERCENT => "`%`",
            DOUBLE_STAR => "`**`",
            TILDE => "`~`",
            AMP => "`&`",
            PIPE => "`|`",
            CARET => "`^`",
            SHL => "`<<`",
            SHR => "`>>`",
            LT => "`<`",
            GT => "`>`",
            LT_EQ => "`<=`",
            GT_EQ => "`>=`",
            EQ_EQ => "`==`",
            NOT_EQ => "`!=`",
            PLUS_EQ => "`+=`",
            MINUS_EQ => "`-=`",
            STAR_EQ => "`*=`",
            SLASH_EQ => "`/=`",
            DOUBLE_SLASH_EQ => "`//=`",
            PERCENT_EQ => "`%=`",
            DOUBLE_STAR_EQ => "`**=`",
            AT_EQ => "`@=`",
            AMP_EQ => "`&=`",
            PIPE_EQ => "`|=`",
            CARET_EQ => "`^=`",
            SHL_EQ => "`<<=`",
            SHR_EQ => "`>>=`",
            _ => return None,
        })
    }

    pub(crate) fn from_raw(raw: u16) -> SyntaxKind {
        assert!(raw < __LAST as u16, "invalid SyntaxKind {raw}");
        // SAFETY: `SyntaxKind` is `repr(u16)` with contiguous discriminants below `__LAST`.
        unsafe { std::mem::transmute::<u16, SyntaxKind>(raw) }
    }
}

const _: () = assert!(
    (ERROR_TOKEN as u16) < 128,
    "token kinds must fit a TokenSet"
);

/// The rowan language tag of WSP trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WspLanguage {}

impl rowan::Language for WspLanguage {
    type Kind = SyntaxKind;
    fn kind_from_raw(raw: rowan::SyntaxKind) -> SyntaxKind {
        SyntaxKind::from_raw(raw.0)
    }
    fn kind_to_raw(kind: SyntaxKind) -> rowan::SyntaxKind {
        rowan::SyntaxKind(kind as u16)
    }
}

impl From<SyntaxKind> for rowan::SyntaxKind {
    fn from(kind: SyntaxKind) -> Self {
        rowan::SyntaxKind(kind as u16)
    }
}

pub type SyntaxNode = rowan::SyntaxNode<WspLanguage>;
pub type SyntaxToken = rowan::SyntaxToken<WspLanguage>;
pub type SyntaxElement = rowan::SyntaxElement<WspLanguage>;
