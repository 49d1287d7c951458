//! Typed AST: thin newtypes over `SyntaxNode` with `Option`-returning accessors, so that a broken
//! tree is still walkable. Nothing here allocates or copies the tree.

mod expressions;
mod statements;

pub use expressions::*;
pub use statements::*;

use crate::{SyntaxKind, SyntaxNode, SyntaxToken};

pub trait AstNode: Sized {
    fn can_cast(kind: SyntaxKind) -> bool;
    fn cast(node: SyntaxNode) -> Option<Self>;
    fn syntax(&self) -> &SyntaxNode;
}

/// Declares a node type for one `SyntaxKind`.
macro_rules! ast_node {
    ($(#[$meta:meta])* $name:ident, $kind:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct $name {
            pub(crate) syntax: $crate::SyntaxNode,
        }
        impl $crate::ast::AstNode for $name {
            fn can_cast(kind: $crate::SyntaxKind) -> bool {
                kind == $crate::SyntaxKind::$kind
            }
            fn cast(node: $crate::SyntaxNode) -> Option<Self> {
                Self::can_cast(node.kind()).then(|| $name { syntax: node })
            }
            fn syntax(&self) -> &$crate::SyntaxNode {
                &self.syntax
            }
        }
    };
}

/// Declares an enum over node types, one variant per kind.
macro_rules! ast_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant($variant),)*
        }
        impl $crate::ast::AstNode for $name {
            fn can_cast(kind: $crate::SyntaxKind) -> bool {
                $(<$variant as $crate::ast::AstNode>::can_cast(kind))||*
            }
            fn cast(node: $crate::SyntaxNode) -> Option<Self> {
                $(if <$variant as $crate::ast::AstNode>::can_cast(node.kind()) {
                    return Some($name::$variant($variant { syntax: node }));
                })*
                None
            }
            fn syntax(&self) -> &$crate::SyntaxNode {
                match self {
                    $($name::$variant(it) => &it.syntax,)*
                }
            }
        }
    };
}
pub(crate) use {ast_enum, ast_node};

/// The first child node of type `N`.
pub(crate) fn child<N: AstNode>(parent: &SyntaxNode) -> Option<N> {
    parent.children().find_map(N::cast)
}

/// The child nodes of type `N`.
pub(crate) fn children<N: AstNode>(parent: &SyntaxNode) -> impl Iterator<Item = N> + use<N> {
    parent.children().filter_map(N::cast)
}

/// The first child token of `kind`.
pub(crate) fn token(parent: &SyntaxNode, kind: SyntaxKind) -> Option<SyntaxToken> {
    parent
        .children_with_tokens()
        .filter_map(|e| e.into_token())
        .find(|t| t.kind() == kind)
}

/// The first non-trivia child token (an operator, a keyword).
pub(crate) fn first_token(parent: &SyntaxNode) -> Option<SyntaxToken> {
    parent
        .children_with_tokens()
        .filter_map(|e| e.into_token())
        .find(|t| !t.kind().is_trivia())
}
