//! Hover: what the analyzer knows about the text under the cursor, as Markdown. Every fact
//! comes from a query the checker already ran (tile types, plans, the op table, the
//! vocabulary); nothing here decides a rule of its own.

use std::fmt::Write;
use wsp_analysis::semantic::{
    Annotation, Applicability, Axis, AxisKind, Block, BlockKind, Builtin, Composite, Init,
    IntSource, Item, ItemKind, KernelSignature, LoopVar, PlanNode, TaskArg, Tensor, TensorOrigin,
    Value, applicability, first_call_plan, item_value, kernel_body, kernel_signature, module_scope,
    plan_nodes, shape_text, workload_generic, workload_params,
};
use wsp_analysis::{File, ops, semantic};
use wsp_syntax::ast::{self, AstNode, Expr};
use wsp_syntax::{SyntaxKind, SyntaxToken, TextRange, TextSize, TokenAtOffset};

/// What to show for a position: the range it describes (in the file) and Markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hover {
    pub range: TextRange,
    pub markdown: String,
}

/// The hover at `offset` in `file`, if the text there has something to say.
pub fn hover(db: &dyn salsa::Database, file: File, offset: TextSize) -> Option<Hover> {
    let (item, base) = semantic::item_at(db, file, offset)?;
    let local = offset - base;
    let root = item.syntax(db);
    let token = pick_token(root.token_at_offset(local))?;
    let found = match item.kind(db) {
        ItemKind::Kernel => kernel_hover(db, item, &token),
        ItemKind::Workload => workload_hover(db, item, &token),
        _ => None,
    }
    .or_else(|| name_hover(db, item, &token))?;
    Some(Hover {
        range: found.0 + base,
        markdown: found.1,
    })
}

/// The token the cursor is on: a name when one touches the offset.
fn pick_token(at: TokenAtOffset<SyntaxToken>) -> Option<SyntaxToken> {
    let useful = |t: &SyntaxToken| !t.kind().is_trivia();
    match at {
        TokenAtOffset::None => None,
        TokenAtOffset::Single(t) => useful(&t).then_some(t),
        TokenAtOffset::Between(l, r) => {
            if r.kind() == SyntaxKind::NAME {
                Some(r)
            } else if l.kind() == SyntaxKind::NAME || !useful(&r) {
                useful(&l).then_some(l)
            } else {
                Some(r)
            }
        }
    }
}

type Found = (TextRange, String);

fn code(text: &str) -> String {
    format!("```wsp\n{text}\n```")
}

/// A kernel loop's variable, at its header or a use inside the loop (the nearest header
/// before it that binds the name): the header, its iterations and its pipelining depth.
fn loop_variable(db: &dyn salsa::Database, item: Item<'_>, token: &SyntaxToken) -> Option<String> {
    let body = kernel_body(db, item);
    let at = token.text_range();
    let (l, header) = body
        .loops
        .iter()
        .zip(&body.loop_headers)
        .filter(|(l, h)| l.var == token.text() && h.start() <= at.start())
        .max_by_key(|(_, h)| h.start())?;
    let text = item.syntax(db).text();
    let header_text = (header.end() <= text.len()).then(|| text.slice(*header).to_string())?;
    let stages = match l.stages {
        Some(s) => format!("pipelined {s} deep (`num_stages={s}`)"),
        None => "its pipelining depth is the compiler's".to_string(),
    };
    Some(format!(
        "{}\n\nThe variable of `{header_text}`: {} iteration{}, {stages}. It places slices of the kernel's tensors.",
        code(&format!("{}: int", l.var)),
        l.trips,
        if l.trips == 1 { "" } else { "s" }
    ))
}

fn kernel_hover(db: &dyn salsa::Database, item: Item<'_>, token: &SyntaxToken) -> Option<Found> {
    let range = token.text_range();
    let signature = kernel_signature(db, item);
    let body = kernel_body(db, item);
    // `pto.add`: the op's signature and doc from the op table, and its type here.
    if let Some(attr) = token.parent().and_then(ast::AttributeExpr::cast)
        && attr.attr().is_some_and(|a| a == *token)
        && let Some(Expr::NameExpr(ns)) = attr.receiver()
        && matches!(ns.text().as_str(), "pto" | "tl")
        && let Some(op) = ops::lookup(token.text())
    {
        let mut md = format!("{}\n\n{}", code(&op.signature()), op.doc);
        let call = attr.syntax().parent().map(|c| c.text_range());
        if let Some((_, ty)) = body.types.iter().find(|(r, _)| Some(*r) == call) {
            let _ = write!(md, "\n\nHere: `{ty}`");
        }
        return Some((range, md));
    }
    if token.kind() == SyntaxKind::NAME
        && let Some(md) = loop_variable(db, item, token)
    {
        return Some((range, md));
    }
    if token.kind() == SyntaxKind::NAME {
        let parent = token.parent()?;
        // The def's name: the whole signature.
        if ast::FunctionDef::cast(parent.clone()).is_some() {
            return Some((range, code(&signature_text(signature))));
        }
        // A parameter's declaration; a JIT-style one's tile type at each task that binds it.
        if ast::Param::cast(parent).is_some()
            && let Some(p) = signature.param(token.text())
        {
            let mut md = code(&format!("{}: {}", p.name, p.ty));
            let bound = jit_bindings(db, item, &p.name);
            if !bound.is_empty() {
                md.push_str(
                    "

Bound by each task:",
                );
                for (ty, call) in bound {
                    let _ = write!(
                        md,
                        "
- `{ty}` in `{call}`"
                    );
                }
            }
            return Some((range, md));
        }
    }
    // Any typed expression: the innermost one around the token.
    let (r, ty) = body
        .types
        .iter()
        .filter(|(r, _)| r.contains_range(range))
        .min_by_key(|(r, _)| r.len())?;
    let text = if token.kind() == SyntaxKind::NAME && *r == range {
        format!("{}: {ty}", token.text())
    } else {
        ty.to_string()
    };
    Some((*r, code(&text)))
}

/// The tile types the tasks of the file's workloads bind a JIT-style parameter to, each with
/// the task call's text, once per distinct call.
fn jit_bindings(db: &dyn salsa::Database, kernel: Item<'_>, param: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for &w in semantic::module_items(db, kernel.file(db)) {
        if w.kind(db) != ItemKind::Workload {
            continue;
        }
        for node in plan_nodes(&first_call_plan(db, w).body) {
            let PlanNode::Task(t) = node else { continue };
            if t.kernel != kernel {
                continue;
            }
            let Some((_, ty)) = t.instance.tiles(db).iter().find(|(n, _)| n == param) else {
                continue;
            };
            let root = t.span.item.syntax(db);
            let call = root.text().slice(t.span.range).to_string();
            let ty = format!("Tile{} {}", shape_text(&ty.shape()), ty.dtype);
            if !out.iter().any(|(_, c)| *c == call) {
                out.push((ty, call));
            }
        }
    }
    out
}

fn workload_hover(db: &dyn salsa::Database, item: Item<'_>, token: &SyntaxToken) -> Option<Found> {
    let range = token.text_range();
    let plan = first_call_plan(db, item);
    // A loop or `with` header: the block's dependency kind.
    if let Some(b) = innermost(&plan.blocks, |b| b.header.contains_range(range))
        && !(token.kind() == SyntaxKind::NAME && b.vars.iter().any(|v| v.name == token.text()))
        && block_keyword(token)
    {
        return Some((b.header, block_text(b)));
    }
    if token.kind() != SyntaxKind::NAME {
        return None;
    }
    let name = token.text();
    // A loop variable, where it is bound or used.
    if let Some(b) = innermost(&plan.blocks, |b| {
        b.scope.contains_range(range) && b.vars.iter().any(|v| v.name == name)
    }) && let Some(v) = b.vars.iter().find(|v| v.name == name)
    {
        return Some((range, var_text(v, b)));
    }
    // A view passed to a task: its region, shape and the parameter it binds; a keyword: the
    // kernel's parameter.
    let keyword = token
        .parent()
        .and_then(ast::Arg::cast)
        .filter(|a| a.keyword().is_some_and(|k| k == *token));
    for node in plan_nodes(&plan.body) {
        let PlanNode::Task(t) = node else { continue };
        if keyword.is_some()
            && t.span.range.contains_range(range)
            && let Some(p) = kernel_signature(db, t.kernel).param(name)
        {
            let mut md = format!(
                "{}\n\nA parameter of `{}`.",
                code(&format!("{}: {}", p.name, p.ty)),
                t.kernel_name
            );
            if let Some((_, ty)) = t.instance.tiles(db).iter().find(|(n, _)| *n == p.name) {
                let _ = write!(
                    md,
                    " This task binds it to `Tile{} {}`.",
                    shape_text(&ty.shape()),
                    ty.dtype
                );
            }
            return Some((range, md));
        }
        for arg in &t.args {
            if let TaskArg::Tile {
                param,
                direction,
                view,
            } = arg
                && view.span.range.contains_range(range)
            {
                let md = format!(
                    "{}\n\nA view of `{}` {} {}, passed as `{param}` ({}) to `{}`.",
                    code(&format!(
                        "{}: {} {}",
                        view.text(),
                        shape_text(&view.shape()),
                        view.tensor.dtype
                    )),
                    view.tensor.name,
                    shape_text(&view.tensor.shape),
                    view.tensor.dtype,
                    direction.name(),
                    t.kernel_name,
                );
                return Some((view.span.range, md));
            }
        }
    }
    // A parameter of the workload.
    let params = &workload_params(db, item).0;
    if let Some(p) = params.iter().find(|p| p.name == name) {
        let shadowed_later = ast::Param::cast(token.parent()?).is_none()
            && plan
                .blocks
                .iter()
                .any(|b| b.vars.iter().any(|v| v.name == name));
        if !shadowed_later {
            let kind = match p.annotation {
                Some(Annotation::Axis(Some(k))) => format!("{} axis", k.name()),
                Some(Annotation::Axis(None)) => "axis".to_string(),
                Some(Annotation::Tensor) => "Tensor".to_string(),
                None => "unannotated: its type comes from each call".to_string(),
            };
            return Some((range, format!("workload parameter `{name}` ({kind})")));
        }
    }
    None
}

/// Whether a token in a block header names the block rather than a value in it.
fn block_keyword(token: &SyntaxToken) -> bool {
    matches!(
        token.kind(),
        SyntaxKind::FOR_KW | SyntaxKind::IN_KW | SyntaxKind::WITH_KW | SyntaxKind::AS_KW
    ) || token.text() == Builtin::P.name()
        || token.text() == Builtin::Consume.name()
        || Builtin::P.members().iter().any(|m| m.name == token.text())
}

fn innermost(blocks: &[Block], pred: impl Fn(&Block) -> bool) -> Option<&Block> {
    blocks
        .iter()
        .filter(|b| pred(b))
        .min_by_key(|b| b.scope.len())
}

fn block_text(b: &Block) -> String {
    let mut md = format!("**{}**: {}.", b.kind.name(), b.kind.meaning());
    for v in &b.vars {
        let _ = write!(md, "\n\n{}", var_line(v, b));
    }
    md
}

fn var_text(v: &LoopVar, b: &Block) -> String {
    format!(
        "{}\n\n{}\n\nIts block is **{}**: {}.",
        code(&format!("{}: loop variable", v.name)),
        var_line(v, b),
        b.kind.name(),
        b.kind.meaning()
    )
}

/// `b` ranges over `batch`: Dense axis, 4 iterations.
fn var_line(v: &LoopVar, b: &Block) -> String {
    let count = match v.extent {
        Some(n) if v.axis_kind == AxisKind::DenseDyn => {
            format!("{n} iterations by default, bound at run time")
        }
        Some(n) => format!("{n} iteration{}", plural(n as usize)),
        None => "iterations known per call".to_string(),
    };
    match &b.kind {
        BlockKind::Consume(ch) => {
            format!(
                "`{}`: the index of each task received on `{ch}` ({count})",
                v.name
            )
        }
        _ if v.axis.is_empty() => format!("`{}` ranges over a parameter ({count})", v.name),
        _ => format!(
            "`{}` ranges over `{}`: {} axis, {count}",
            v.name,
            v.axis,
            v.axis_kind.name()
        ),
    }
}

/// A module-level name or a `pto_wsp` name used anywhere.
fn name_hover(db: &dyn salsa::Database, item: Item<'_>, token: &SyntaxToken) -> Option<Found> {
    if token.kind() != SyntaxKind::NAME {
        return None;
    }
    let range = token.text_range();
    let name = token.text();
    // `P.seq`, `DType.F32`, `DispatchPolicy.affinity`: the namespace's member.
    if let Some(attr) = token.parent().and_then(ast::AttributeExpr::cast)
        && attr.attr().is_some_and(|a| a == *token)
    {
        let Some(Expr::NameExpr(ns)) = attr.receiver() else {
            return None;
        };
        // `pto.add` outside a kernel (where it cannot run): still the op's documentation.
        if matches!(ns.text().as_str(), "pto" | "tl") {
            let op = ops::lookup(name)?;
            return Some((range, format!("{}\n\n{}", code(&op.signature()), op.doc)));
        }
        let b = Builtin::lookup(&ns.text())?;
        let member = b.member(name)?;
        // A member without its own doc (`DType.F16`) is described by its namespace.
        let doc = match member.doc {
            "" => b.doc(),
            doc => doc.to_string(),
        };
        let signature = format!("{}.{}", b.name(), member.signature());
        return Some((range, format!("{}\n\n{doc}", code(&signature))));
    }
    let scope = module_scope(db, item.file(db));
    match scope.lookup(name) {
        Some(binding) if binding.item != item || is_def_name(token) => {
            let target = binding.item;
            let md = match target.kind(db) {
                ItemKind::Kernel => code(&signature_text(kernel_signature(db, target))),
                ItemKind::Workload => workload_text(db, target),
                _ => value_text(db, name, &item_value(db, target).value),
            };
            Some((range, md))
        }
        Some(_) => None,
        None => {
            let b = Builtin::lookup(name)?;
            Some((
                range,
                format!("{}\n\n{}", code(&b.signature()), builtin_doc(b)),
            ))
        }
    }
}

fn is_def_name(token: &SyntaxToken) -> bool {
    token.parent().is_some_and(|p| {
        ast::FunctionDef::cast(p.clone()).is_some()
            || p.parent()
                .and_then(ast::AssignStmt::cast)
                .is_some_and(|a| a.targets().next().is_some_and(|t| t.syntax() == &p))
    })
}

fn signature_text(s: &KernelSignature) -> String {
    let params: Vec<String> = s
        .params
        .iter()
        .map(|p| {
            let mut t = format!("{}: {}", p.name, p.ty);
            if let Some(d) = p.default {
                let _ = write!(t, " = {}", d.0);
            }
            t
        })
        .collect();
    let decorator = if s.cpp.is_some() {
        "@kernel(cpp_src=...)"
    } else {
        "@kernel"
    };
    format!("{decorator}\ndef {}({})", s.name, params.join(", "))
}

fn workload_text(db: &dyn salsa::Database, item: Item<'_>) -> String {
    let params: Vec<String> = workload_params(db, item)
        .0
        .iter()
        .map(|p| match p.annotation {
            Some(Annotation::Axis(Some(k))) => format!("{}: {}", p.name, k.name()),
            Some(Annotation::Tensor) => format!("{}: Tensor", p.name),
            _ => p.name.clone(),
        })
        .collect();
    let plan = workload_generic(db, item);
    let tasks = plan_nodes(&plan.body)
        .filter(|n| matches!(n, PlanNode::Task(_)))
        .count();
    format!(
        "{}\n\n{} task statement{}, {} loop{} and block{}.",
        code(&format!(
            "@workload\ndef {}({})",
            item.name(db),
            params.join(", ")
        )),
        tasks,
        plural(tasks),
        plan.blocks.len(),
        plural(plan.blocks.len()),
        plural(plan.blocks.len()),
    )
}

fn value_text(db: &dyn salsa::Database, name: &str, v: &Value) -> String {
    match v {
        Value::Tensor(t) => tensor_text(name, t),
        Value::Axis(a) => axis_text(name, a),
        Value::Channel(c) => format!(
            "{}\n\n{}",
            code(&format!(
                "{name}: Channel(\"{}\", depth={})",
                c.label, c.depth
            )),
            if c.depth == 0 {
                "A rendezvous: each send waits for its receiver."
            } else {
                "A bounded queue of tasks between pipeline stages."
            }
        ),
        Value::Schedule(s) | Value::Program(s) => {
            let mut md = code(&format!("{name} = {}", composite_text(db, &s.root)));
            let target = s.target.map(|c| c.target);
            match target {
                Some(t) => {
                    let _ = write!(md, "\n\nCompiled for `{}`.", t.name());
                }
                None => md.push_str("\n\nNot compiled yet."),
            }
            for d in &s.directives {
                let _ = write!(md, "\n- `{}`", d.kind.spelling());
                if let Some(t) = target {
                    let how = applicability(t, d.kind);
                    let _ = write!(md, ": {}", how.name());
                    if let Applicability::Partial(note)
                    | Applicability::EmitOnly(note)
                    | Applicability::Rejected(note) = how
                    {
                        let _ = write!(md, " ({note})");
                    }
                }
            }
            md
        }
        Value::Int(i) => code(&format!("{name} = {i}")),
        Value::Float(f) => code(&format!("{name} = {}", f.0)),
        Value::DType(d) => code(&format!("{name} = DType.{d}")),
        Value::Unknown => code(name),
        other => format!("{}\n\n{}", code(name), other.describe()),
    }
}

/// `sequential(rmsnorm(...), attention(...))`
fn composite_text(db: &dyn salsa::Database, c: &Composite) -> String {
    let list = |parts: &[Composite]| {
        let parts: Vec<String> = parts.iter().map(|p| composite_text(db, p)).collect();
        parts.join(", ")
    };
    match c {
        Composite::Call(call) => format!("{}(...)", call.workload(db).name(db)),
        Composite::Sequential(parts) => format!("sequential({})", list(parts)),
        Composite::Combine(parts) => format!("combine({})", list(parts)),
    }
}

fn tensor_text(name: &str, t: &Tensor) -> String {
    let mut md = code(&format!(
        "{name}: Tensor{} {}",
        shape_text(&t.shape),
        t.dtype
    ));
    let _ = write!(md, "\n\nlayout `{}`", t.layout);
    match (&t.init, &t.origin) {
        (_, TensorOrigin::View { .. }) => {}
        (Some(init), _) => {
            let _ = write!(md, " · init `{}`", init_text(init));
        }
        (None, _) => md.push_str(" · no init (zeros)"),
    }
    match &t.origin {
        TensorOrigin::Derived { op, source } => {
            let _ = write!(md, "\n\nComputed by `{op}` from `{source}`.");
        }
        TensorOrigin::View { base, .. } => {
            let _ = write!(
                md,
                "\n\nA view: the bytes of `{}` {}, in another order; writing it writes `{}`.",
                base.name,
                shape_text(&base.shape),
                base.name
            );
        }
        TensorOrigin::Declared => {}
    }
    md
}

fn init_text(i: &Init) -> String {
    match i {
        Init::Zeros => "zeros()".into(),
        Init::Ones => "ones()".into(),
        Init::Full(v) => format!("full({})", v.0),
        Init::Arange => "arange()".into(),
        Init::Randn { seed, std } => format!("randn(seed={seed}, std={})", std.0),
        Init::LoadNpy(p) => format!("load_npy({p:?})"),
        // A storage tensor's: the tensor's own init, in its memory order.
        Init::Permuted { of, .. } => init_text(of),
    }
}

fn axis_text(name: &str, a: &Axis) -> String {
    let detail = match a.kind {
        AxisKind::Dense => format!("{} iterations", a.size),
        AxisKind::DenseDyn => format!(
            "{} iterations by default; bound at run time with `execute({name}=...)`",
            a.size
        ),
        AxisKind::Ragged => match (&a.lengths, a.row_extent) {
            (Some(IntSource::List(l)), Some(m)) => format!(
                "{} rows, each up to {m} long, {} elements in all (a loop over the whole axis iterates each)",
                a.size,
                l.iter().fold(0u64, |s, &n| s.saturating_add(n))
            ),
            _ => format!("{} rows, lengths read at run time", a.size),
        },
        AxisKind::Sparse => match (&a.indices, a.row_extent) {
            (Some(IntSource::List(idx)), Some(cols)) => format!(
                "{} rows, {} selected entries, column indices below {cols}",
                a.size,
                idx.len()
            ),
            _ => format!("{} rows, entries read at run time", a.size),
        },
    };
    let mut md = format!(
        "{}\n\n{detail}.",
        code(&format!("{name}: {}", a.kind.name()))
    );
    for (what, source) in [
        ("lengths", &a.lengths),
        ("indptr", &a.indptr),
        ("indices", &a.indices),
    ] {
        if let Some(IntSource::Tensor(t)) = source {
            let _ = write!(md, " `{what}` is read from `{t}` when the program runs.");
        }
    }
    md
}

/// A builtin's documentation under its signature: what it is, its parameters and its members.
fn builtin_doc(b: Builtin) -> String {
    let mut doc = match b.description() {
        // Namespaces are described by their members.
        "" => b.doc(),
        d => d.to_string(),
    };
    for p in b.params().unwrap_or(&[]) {
        doc.push_str(&format!("\n- `{}`", p.detail()));
    }
    let members = b.members();
    if !members.is_empty() && !b.description().is_empty() {
        doc.push_str("\n\nMembers:");
        for m in members {
            doc.push_str(&format!("\n- `{}`: {}", m.signature(), m.doc));
        }
    }
    doc
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
