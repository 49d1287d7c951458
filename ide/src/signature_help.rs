//! Signature help: the parameters of the kernel, workload or builtin a call names, and the
//! one the cursor is in.

use crate::completion::callee_item;
use wsp_analysis::semantic::{
    Item, ItemKind, Param, Value, item_at, kernel_signature, value_of, workload_params,
};
use wsp_analysis::{File, ops};
use wsp_syntax::ast::{self, AstNode, Expr};
use wsp_syntax::{SyntaxKind, TextSize, TokenAtOffset};

/// The signature of the call around the cursor, and which parameter the cursor is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureHelp {
    pub label: String,
    /// Each parameter's place in `label` (byte offsets).
    pub params: Vec<(usize, usize)>,
    pub active: Option<usize>,
    /// Markdown.
    pub doc: String,
}

pub fn signature_help(
    db: &dyn salsa::Database,
    file: File,
    offset: TextSize,
) -> Option<SignatureHelp> {
    let (item, base) = item_at(db, file, offset)?;
    let local = offset - base;
    let root = item.syntax(db);
    // The innermost call whose parentheses hold the cursor.
    let token = match root.token_at_offset(local) {
        TokenAtOffset::Between(l, _) => l,
        TokenAtOffset::Single(t) => t,
        TokenAtOffset::None => return None,
    };
    let (call, list) = token.parent_ancestors().find_map(|n| {
        let list = ast::ArgList::cast(n)?;
        let open = list.syntax().first_token()?;
        let inside = open.kind() == SyntaxKind::L_PAREN
            && open.text_range().end() <= local
            && list
                .syntax()
                .last_token()
                .is_none_or(|t| t.kind() != SyntaxKind::R_PAREN || local <= t.text_range().start());
        let call = ast::CallExpr::cast(list.syntax().parent()?)?;
        inside.then_some((call, list))
    })?;
    let Signature { label, params, doc } = signature_of(db, item, &call)?;
    let names: Vec<&str> = params
        .iter()
        .map(|&(a, b)| param_name(&label[a..b]))
        .collect();
    // The argument the cursor is in: by keyword, else by position.
    let args: Vec<ast::Arg> = list.args().collect();
    let index = args
        .iter()
        .position(|a| local <= a.syntax().text_range().end())
        .unwrap_or(args.len());
    let active = match args.get(index).and_then(|a| a.keyword()) {
        Some(k) => names.iter().position(|n| *n == k.text()),
        // After keywords: the first parameter not given yet.
        None if args.iter().any(|a| a.keyword().is_some()) => {
            let given: Vec<String> = args
                .iter()
                .filter_map(|a| a.keyword().map(|k| k.text().to_string()))
                .collect();
            names.iter().position(|n| !given.iter().any(|g| g == n))
        }
        None => (index < names.len()).then_some(index),
    };
    Some(SignatureHelp {
        label,
        params,
        active,
        doc,
    })
}

struct Signature {
    label: String,
    params: Vec<(usize, usize)>,
    doc: String,
}

impl Signature {
    /// `name(p1, p2)` from the parts of each parameter.
    fn new(name: &str, params: impl IntoIterator<Item = String>, doc: String) -> Signature {
        let mut label = format!("{name}(");
        let mut spans = Vec::new();
        for (i, p) in params.into_iter().enumerate() {
            if i > 0 {
                label.push_str(", ");
            }
            spans.push((label.len(), label.len() + p.len()));
            label.push_str(&p);
        }
        label.push(')');
        Signature {
            label,
            params: spans,
            doc,
        }
    }
}

/// `eps: Scalar[F32] = 1e-6` → `eps`.
fn param_name(p: &str) -> &str {
    p.split([':', '=']).next().unwrap_or(p).trim()
}

/// The signature of the op, kernel, workload or builtin a call names.
fn signature_of(
    db: &dyn salsa::Database,
    item: Item<'_>,
    call: &ast::CallExpr,
) -> Option<Signature> {
    let callee = call.callee()?;
    if let Expr::AttributeExpr(a) = &callee
        && let Some(Expr::NameExpr(ns)) = a.receiver()
        && matches!(ns.text().as_str(), "pto" | "tl")
    {
        let op = ops::lookup(a.attr()?.text())?;
        let params = op.params.iter().map(|p| match p.optional {
            true => format!("{}=None", p.name),
            false => p.name.to_string(),
        });
        return Some(Signature::new(
            &format!("pto.{}", op.name),
            params,
            op.doc.to_string(),
        ));
    }
    if let Some(target) = callee_item(db, item, call) {
        let name = target.name(db);
        return Some(match target.kind(db) {
            ItemKind::Kernel => {
                let params = kernel_signature(db, target).params.iter();
                Signature::new(
                    &format!("{name}[...]"),
                    params.map(|p| format!("{}: {}", p.name, p.ty)),
                    "A task of this kernel: its arguments are given by keyword.".into(),
                )
            }
            _ => {
                let params = workload_params(db, target).0.iter();
                Signature::new(name, params.map(|p| p.name.clone()), String::new())
            }
        });
    }
    // A builtin or a namespace member: its row of the builtin table.
    let (label, params, description) = match value_of(db, item, &callee) {
        Value::Builtin(b) => (b.name().to_string(), b.params()?, b.description()),
        Value::Member(b, m) => {
            let row = b.member(m)?;
            (format!("{}.{m}", b.name()), row.params?, row.doc)
        }
        _ => return None,
    };
    let mut doc = description.to_string();
    for p in params {
        doc.push_str(&format!("\n- `{}`", p.detail()));
    }
    Some(Signature::new(&label, params.iter().map(Param::label), doc))
}
