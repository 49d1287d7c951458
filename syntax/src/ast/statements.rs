//! Statement nodes: the module, definitions, loops, `with`, imports, assignments.

use super::{AstNode, Expr, ParamList, ast_enum, ast_node, child, children, first_token, token};
use crate::SyntaxKind::{self, *};
use crate::{SyntaxNode, SyntaxToken};

ast_node!(SourceFile, SOURCE_FILE);
ast_node!(Block, BLOCK);
ast_node!(FunctionDef, FUNCTION_DEF);
ast_node!(Decorator, DECORATOR);
ast_node!(ReturnType, RETURN_TYPE);
ast_node!(ClassDef, CLASS_DEF);
ast_node!(ForStmt, FOR_STMT);
ast_node!(WithStmt, WITH_STMT);
ast_node!(WithItem, WITH_ITEM);
ast_node!(IfStmt, IF_STMT);
ast_node!(ElifClause, ELIF_CLAUSE);
ast_node!(ElseClause, ELSE_CLAUSE);
ast_node!(WhileStmt, WHILE_STMT);
ast_node!(TryStmt, TRY_STMT);
ast_node!(ExceptClause, EXCEPT_CLAUSE);
ast_node!(FinallyClause, FINALLY_CLAUSE);
ast_node!(PassStmt, PASS_STMT);
ast_node!(BreakStmt, BREAK_STMT);
ast_node!(ContinueStmt, CONTINUE_STMT);
ast_node!(ReturnStmt, RETURN_STMT);
ast_node!(ImportStmt, IMPORT_STMT);
ast_node!(FromImportStmt, FROM_IMPORT_STMT);
ast_node!(ImportAlias, IMPORT_ALIAS);
ast_node!(DottedName, DOTTED_NAME);
ast_node!(GlobalStmt, GLOBAL_STMT);
ast_node!(NonlocalStmt, NONLOCAL_STMT);
ast_node!(DelStmt, DEL_STMT);
ast_node!(AssertStmt, ASSERT_STMT);
ast_node!(RaiseStmt, RAISE_STMT);
ast_node!(ExprStmt, EXPR_STMT);
ast_node!(AssignStmt, ASSIGN_STMT);
ast_node!(AugAssignStmt, AUG_ASSIGN_STMT);
ast_node!(AnnAssignStmt, ANN_ASSIGN_STMT);
ast_node!(MatchStmt, MATCH_STMT);
ast_node!(CaseClause, CASE_CLAUSE);

ast_enum!(
    /// Any statement. The subset's are first; the rest parse so they can be reported (WSP002).
    Stmt {
        FunctionDef,
        ForStmt,
        WithStmt,
        AssignStmt,
        AnnAssignStmt,
        ExprStmt,
        PassStmt,
        ImportStmt,
        FromImportStmt,
        ReturnStmt,
        AugAssignStmt,
        ClassDef,
        IfStmt,
        WhileStmt,
        TryStmt,
        BreakStmt,
        ContinueStmt,
        GlobalStmt,
        NonlocalStmt,
        DelStmt,
        AssertStmt,
        RaiseStmt,
        MatchStmt,
    }
);

impl SourceFile {
    pub fn statements(&self) -> impl Iterator<Item = Stmt> + use<> {
        children(&self.syntax)
    }
}

impl MatchStmt {
    pub fn cases(&self) -> impl Iterator<Item = CaseClause> + use<> {
        children(&self.syntax)
    }
}

impl CaseClause {
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl Block {
    pub fn statements(&self) -> impl Iterator<Item = Stmt> + use<> {
        children(&self.syntax)
    }
}

fn name_token(node: &SyntaxNode) -> Option<SyntaxToken> {
    token(node, NAME)
}

fn keyword(node: &SyntaxNode, kind: SyntaxKind) -> bool {
    token(node, kind).is_some()
}

impl FunctionDef {
    pub fn decorators(&self) -> impl Iterator<Item = Decorator> + use<> {
        children(&self.syntax)
    }
    pub fn is_async(&self) -> bool {
        keyword(&self.syntax, ASYNC_KW)
    }
    pub fn name(&self) -> Option<SyntaxToken> {
        name_token(&self.syntax)
    }
    pub fn param_list(&self) -> Option<ParamList> {
        child(&self.syntax)
    }
    pub fn return_type(&self) -> Option<Expr> {
        child::<ReturnType>(&self.syntax).and_then(|r| child(&r.syntax))
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl Decorator {
    /// `kernel` in `@kernel`, `kernel(cpp_src=...)` in `@kernel(cpp_src=...)`.
    pub fn expr(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl ClassDef {
    pub fn name(&self) -> Option<SyntaxToken> {
        name_token(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl ForStmt {
    pub fn is_async(&self) -> bool {
        keyword(&self.syntax, ASYNC_KW)
    }
    /// `b` or `b, h` (a TupleExpr) in `for b, h in P(batch, heads):`.
    pub fn target(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn iterable(&self) -> Option<Expr> {
        children(&self.syntax).nth(1)
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
    pub fn else_clause(&self) -> Option<ElseClause> {
        child(&self.syntax)
    }
}

impl WithStmt {
    pub fn is_async(&self) -> bool {
        keyword(&self.syntax, ASYNC_KW)
    }
    pub fn items(&self) -> impl Iterator<Item = WithItem> + use<> {
        children(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl WithItem {
    pub fn expr(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    /// `t` in `with consume(ch) as t:`.
    pub fn target(&self) -> Option<Expr> {
        children(&self.syntax).nth(1)
    }
}

impl IfStmt {
    pub fn condition(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
    pub fn elif_clauses(&self) -> impl Iterator<Item = ElifClause> + use<> {
        children(&self.syntax)
    }
    pub fn else_clause(&self) -> Option<ElseClause> {
        child(&self.syntax)
    }
}

impl ElifClause {
    pub fn condition(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl ElseClause {
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl WhileStmt {
    pub fn condition(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl TryStmt {
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
    pub fn handlers(&self) -> impl Iterator<Item = ExceptClause> + use<> {
        children(&self.syntax)
    }
    pub fn finally_clause(&self) -> Option<FinallyClause> {
        child(&self.syntax)
    }
}

impl ReturnStmt {
    pub fn value(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl ImportStmt {
    pub fn aliases(&self) -> impl Iterator<Item = ImportAlias> + use<> {
        children(&self.syntax)
    }
}

impl FromImportStmt {
    /// Leading dots of a relative import (`from ..x import y` has 2).
    pub fn level(&self) -> usize {
        self.syntax
            .children_with_tokens()
            .filter_map(|e| e.into_token())
            .map(|t| match t.kind() {
                DOT => 1,
                ELLIPSIS => 3,
                _ => 0,
            })
            .sum()
    }
    pub fn module(&self) -> Option<DottedName> {
        child(&self.syntax)
    }
    /// `from m import *`
    pub fn is_star(&self) -> bool {
        keyword(&self.syntax, STAR)
    }
    pub fn names(&self) -> impl Iterator<Item = ImportAlias> + use<> {
        children(&self.syntax)
    }
}

impl ImportAlias {
    /// The imported path as written: `a.b` in `import a.b as c`, `x` in `from m import x as y`.
    pub fn path(&self) -> Option<String> {
        match child::<DottedName>(&self.syntax) {
            Some(d) => Some(d.text()),
            None => name_token(&self.syntax).map(|t| t.text().to_string()),
        }
    }
    /// The range of the imported path.
    pub fn path_range(&self) -> Option<crate::TextRange> {
        match child::<DottedName>(&self.syntax) {
            Some(d) => Some(d.syntax.text_range()),
            None => name_token(&self.syntax).map(|t| t.text_range()),
        }
    }
    /// `c` in `import a.b as c`.
    pub fn alias(&self) -> Option<SyntaxToken> {
        let mut after_as = false;
        for t in self
            .syntax
            .children_with_tokens()
            .filter_map(|e| e.into_token())
        {
            if after_as && t.kind() == NAME {
                return Some(t);
            }
            after_as |= t.kind() == AS_KW;
        }
        None
    }
}

impl DottedName {
    pub fn segments(&self) -> impl Iterator<Item = SyntaxToken> + use<> {
        self.syntax
            .children_with_tokens()
            .filter_map(|e| e.into_token())
            .filter(|t| t.kind() == NAME)
    }
    pub fn text(&self) -> String {
        self.segments()
            .map(|t| t.text().to_string())
            .collect::<Vec<_>>()
            .join(".")
    }
}

impl ExprStmt {
    pub fn expr(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl AssignStmt {
    /// Every expression left of an `=`: `a` and `b` in `a = b = 1`.
    pub fn targets(&self) -> impl Iterator<Item = Expr> + use<> {
        let all: Vec<Expr> = children(&self.syntax).collect();
        let n = all.len().saturating_sub(1);
        all.into_iter().take(n)
    }
    pub fn value(&self) -> Option<Expr> {
        children(&self.syntax).last()
    }
}

impl AugAssignStmt {
    pub fn target(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    /// `+=`, `*=`, ...
    pub fn op(&self) -> Option<SyntaxToken> {
        self.syntax
            .children_with_tokens()
            .filter_map(|e| e.into_token())
            .find(|t| {
                t.kind()
                    .text()
                    .is_some_and(|s| s.len() > 3 && s.ends_with("=`"))
            })
    }
    pub fn value(&self) -> Option<Expr> {
        children(&self.syntax).nth(1)
    }
}

impl AnnAssignStmt {
    pub fn target(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn annotation(&self) -> Option<Expr> {
        children(&self.syntax).nth(1)
    }
    pub fn value(&self) -> Option<Expr> {
        children(&self.syntax).nth(2)
    }
}

impl Stmt {
    /// The statement's leading keyword, or its first token.
    pub fn first_token(&self) -> Option<SyntaxToken> {
        first_token(self.syntax())
    }
}
