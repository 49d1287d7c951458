//! The walker: a workload body statement by statement (loops over axes, conditionals, tasks
//! and their views, channels, pipelines, slots) into a plan, with its diagnostics.

use super::{
    Block, BlockKind, Branch, LoopKind, LoopVar, PlanNode, Task, TaskArg, WorkloadPlan,
    workload_instance,
};
use crate::diagnostics::{Code, Diag, Span};
use crate::eval::{Eval, plural, workload_params};
use crate::items::Item;
use crate::kernels::{
    Direction, KernelInstance, KernelParam, KernelSignature, ParamType, kernel_signature,
};
use crate::symbols::Symbol;
use crate::types::shape_text;
use crate::types::{DType, TileType};
use crate::values::{Axis, AxisKind, IntSource, Value, View};
use crate::vocabulary::Builtin;
use wsp_ir::{Affine, ScalarExpr};
use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode, Expr, Stmt};

pub(super) fn analyze<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
    args: &[Value<'db>],
    site: Option<Span<'db>>,
) -> WorkloadPlan<'db> {
    let mut walker = Walker::new(db, item);
    let mut body = Vec::new();
    match item.stmt(db) {
        Some(Stmt::FunctionDef(f)) => {
            let params = &workload_params(db, item).0;
            for (p, v) in params.iter().zip(args) {
                walker.eval.bind_local(p.name.clone(), v.clone(), p.range);
            }
            if let Some(b) = f.body() {
                body = walker.block(&b);
            }
        }
        // `connect([processes], [channels])`: the item holding it stands for the workload.
        // So it does for a module-level `task(...)`, `slot_load_u64(...)` or `cond(...)`.
        _ => match (args.first(), site) {
            (Some(Value::List(processes)), Some(site)) => {
                body = walker.pipeline(processes, site);
            }
            (Some(Value::Builtin(Builtin::Cond)), Some(site)) => {
                body = walker.cond(&args[1..], site);
            }
            (Some(Value::Builtin(_)), Some(site)) => {
                let call = item
                    .syntax(db)
                    .covering_element(site.range)
                    .ancestors()
                    .find_map(ast::CallExpr::cast)
                    .filter(|c| c.syntax().text_range() == site.range);
                if let Some(c) = call {
                    body = walker.expr_stmt(&Expr::CallExpr(c));
                }
            }
            _ => {}
        },
    }
    // A workload called in the body (itself an error) still has its call checked.
    for call in std::mem::take(&mut walker.eval.calls) {
        let diags = &workload_instance(db, call).1;
        walker.eval.diags.extend(diags.iter().cloned());
    }
    WorkloadPlan {
        body,
        blocks: walker.blocks,
        diags: walker.eval.diags,
        uses: walker.eval.uses,
    }
}

/// A process's body alone (the item binds the process and wrote its body).
pub(super) fn process_alone<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
) -> WorkloadPlan<'db> {
    let mut walker = Walker::new(db, item);
    let mut body = Vec::new();
    if let Value::Process(p) = &crate::eval::item_value(db, item).value
        && p.body.is_some_and(|b| b.item == item)
    {
        body = walker.stage(p);
    }
    WorkloadPlan {
        body,
        blocks: walker.blocks,
        diags: walker.eval.diags,
        uses: walker.eval.uses,
    }
}

struct Walker<'db> {
    eval: Eval<'db>,
    tasks: u32,
    blocks: Vec<Block>,
    /// The extent of the index of the tasks sent on each channel.
    channel_extents: Vec<(String, Option<u64>)>,
}

impl<'db> Walker<'db> {
    fn new(db: &'db dyn salsa::Database, item: Item<'db>) -> Walker<'db> {
        Walker {
            eval: Eval::new(db, item),
            tasks: 0,
            blocks: Vec::new(),
            channel_extents: Vec::new(),
        }
    }

    fn block(&mut self, block: &ast::Block) -> Vec<PlanNode<'db>> {
        let mut out = Vec::new();
        // The open `when` chain: its branches, its span, and whether an `otherwise` closed it
        // (a predicate that could not be read, a parameter in a body checked for any
        // arguments, still opens one).
        let mut pending_when: Option<(Vec<Branch<'db>>, Span<'db>, bool)> = None;
        for stmt in block
            .statements()
            .filter(|s| !crate::items::is_docstring(s))
        {
            let is_branch = matches!(&stmt, Stmt::WithStmt(w) if self.with_kind(w).is_some_and(|k| k == "otherwise" || k == "when"));
            if !is_branch && let Some((branches, span, _)) = pending_when.take() {
                out.push(PlanNode::Conditional { branches, span });
            }
            match &stmt {
                Stmt::ForStmt(f) => out.extend(self.for_loop(f)),
                Stmt::WithStmt(w) => match self.with_kind(w).as_deref() {
                    Some("when") => {
                        self.push_with_block(w, BlockKind::Conditional, Vec::new());
                        if let Some((branches, span, _)) = pending_when.take() {
                            out.push(PlanNode::Conditional { branches, span });
                        }
                        let pred = self.predicate(w);
                        let call = w.items().next().and_then(|i| i.expr());
                        let span = call.map(|c| self.eval.span_of(&c));
                        let body = w.body().map(|b| self.block(&b)).unwrap_or_default();
                        pending_when = Some((
                            vec![Branch {
                                predicate: pred,
                                body,
                                span,
                            }],
                            self.eval.span_of(w),
                            false,
                        ));
                    }
                    Some("otherwise") => {
                        self.push_with_block(w, BlockKind::Conditional, Vec::new());
                        let body = w.body().map(|b| self.block(&b)).unwrap_or_default();
                        match pending_when.as_mut() {
                            Some((branches, _, closed)) if !*closed => {
                                *closed = true;
                                branches.push(Branch {
                                    predicate: None,
                                    body,
                                    span: None,
                                })
                            }
                            _ => self.eval.error(
                                Code::WrongKind,
                                w.syntax().text_range(),
                                "`P.otherwise()` must follow a `with P.when(...)` block",
                            ),
                        }
                    }
                    _ => out.extend(self.with_block(w)),
                },
                Stmt::ExprStmt(s) => {
                    if let Some(e) = s.expr() {
                        out.extend(self.expr_stmt(&e));
                    }
                }
                Stmt::AssignStmt(a) => {
                    let targets: Vec<Expr> = a.targets().collect();
                    let v = a.value().map_or(Value::Unknown, |e| self.eval.expr(&e));
                    match targets.as_slice() {
                        [Expr::NameExpr(n)] => {
                            self.eval.bind_local(n.text(), v, n.syntax().text_range())
                        }
                        _ => self.eval.error(
                            Code::OutsideSubset,
                            stmt.syntax().text_range(),
                            "a workload assigns one name at a time",
                        ),
                    }
                }
                Stmt::PassStmt(_) => {}
                other => {
                    let what = crate::eval::describe_syntax(other.syntax());
                    let r = crate::eval::statement_range(other.syntax());
                    self.eval.error(Code::OutsideSubset, r, format!("{what} is not part of a workload body (loops over `P`, `with` blocks and tasks)"));
                }
            }
        }
        if let Some((branches, span, _)) = pending_when.take() {
            out.push(PlanNode::Conditional { branches, span });
        }
        out
    }

    fn push_with_block(&mut self, w: &ast::WithStmt, kind: BlockKind, vars: Vec<LoopVar>) {
        let scope = w.syntax().text_range();
        let header_end = w
            .items()
            .last()
            .map_or(scope.end(), |i| i.syntax().text_range().end());
        self.blocks.push(Block {
            header: TextRange::new(scope.start(), header_end),
            scope,
            kind,
            vars,
        });
    }

    /// The name of a `with` block's builtin: `when`, `otherwise`, `pipe`, `consume`.
    fn with_kind(&self, w: &ast::WithStmt) -> Option<String> {
        let item = w.items().next()?;
        let Expr::CallExpr(c) = item.expr()? else {
            return None;
        };
        match c.callee()? {
            Expr::AttributeExpr(a) if matches!(a.receiver(), Some(Expr::NameExpr(n)) if n.text() == "P") => {
                Some(a.attr()?.text().to_string())
            }
            Expr::NameExpr(n) if n.text() == "consume" => Some("consume".into()),
            _ => None,
        }
    }

    fn predicate(&mut self, w: &ast::WithStmt) -> Option<ScalarExpr> {
        let item = w.items().next()?;
        let Expr::CallExpr(c) = item.expr()? else {
            return None;
        };
        let args: Vec<ast::Arg> = c.args().collect();
        let [arg] = args.as_slice() else {
            self.eval.error(
                Code::WrongArguments,
                c.syntax().text_range(),
                "`P.when` takes one predicate",
            );
            return None;
        };
        let e = arg.value()?;
        let v = self.eval.expr(&e);
        match v {
            Value::Unknown => None,
            Value::Bool(b) => Some(ScalarExpr::Const(b as i64)),
            v => match self.eval.to_scalar(&v) {
                Some(s) => Some(s),
                None => {
                    self.eval.error(Code::WrongKind, e.syntax().text_range(), format!("a predicate is a scalar expression (comparisons of loop variables, constants, integer tensor elements, slots), not {}", v.describe()));
                    None
                }
            },
        }
    }

    /// A loop `for i in P(axis)` (or `P.seq`, `P.sel`): its header, its variables and its body.
    fn for_loop(&mut self, f: &ast::ForStmt) -> Option<PlanNode<'db>> {
        let range = f.syntax().text_range();
        let header = crate::eval::statement_range(f.syntax());
        if f.is_async() || f.else_clause().is_some() {
            self.eval.error(
                Code::OutsideSubset,
                header,
                "`async for` and `for ... else` are not part of WSP",
            );
        }
        let targets = loop_targets(&f.target()?);
        let iterable = f.iterable()?;
        if let Expr::CallExpr(c) = &iterable
            && matches!(c.callee(), Some(Expr::NameExpr(n)) if n.text() == "range")
        {
            self.eval.error(
                Code::WrongKind,
                header,
                "a workload loops over axes: `for i in P(Dense[4]):` (or `P.seq(...)` for iterations in order); a `range` loop belongs in a kernel body, over tiles of its tensors",
            );
            return None;
        }
        let Expr::CallExpr(c) = &iterable else {
            self.eval.error(
                Code::WrongKind,
                iterable.syntax().text_range(),
                "a workload loop iterates `P(...)`, `P.seq(...)` or `P.sel(...)`",
            );
            return None;
        };
        let kind = self.loop_kind(c, &iterable)?;
        let (args, keywords): (Vec<ast::Arg>, Vec<ast::Arg>) =
            c.args().partition(|a| a.kind() != ast::ArgKind::Keyword);
        self.loop_names(kind, &targets, &keywords)?;
        self.loop_arity(f, c, kind, &targets, &args)?;
        let (vars, ok) = self.loop_vars(kind, &targets, &args);
        self.blocks.push(Block {
            header: TextRange::new(range.start(), iterable.syntax().text_range().end()),
            scope: range,
            kind: BlockKind::Loop(kind),
            vars: vars.clone(),
        });
        let body = self.loop_body(f, &targets, &vars);
        let callee = self.eval.span(c.callee()?.syntax().text_range());
        ok.then(|| PlanNode::Loop {
            kind,
            vars,
            body,
            span: self.eval.span(TextRange::new(
                range.start(),
                iterable.syntax().text_range().end(),
            )),
            callee,
        })
    }

    /// The kind of loop the iterable's callee makes: `P`, `P.seq` or `P.sel`.
    fn loop_kind(&mut self, c: &ast::CallExpr, iterable: &Expr) -> Option<LoopKind> {
        let callee = self.eval.expr(&c.callee()?);
        match callee {
            Value::Builtin(Builtin::P) => Some(LoopKind::Independent),
            Value::Member(Builtin::P, "seq") => Some(LoopKind::Sequential),
            Value::Member(Builtin::P, "sel") => Some(LoopKind::Selected),
            Value::Unknown => None,
            v => {
                self.eval.error(
                    Code::WrongKind,
                    iterable.syntax().text_range(),
                    format!(
                        "a workload loop iterates `P(...)`, `P.seq(...)` or `P.sel(...)`, not {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    /// The original's `names=[...]` of `P(...)` and `name=` of `P.seq`/`P.sel` name the loop
    /// variables, which a `for` names already: they must agree (keys and task fields use the
    /// `for`'s names). Any other keyword is an error.
    fn loop_names(
        &mut self,
        kind: LoopKind,
        targets: &[(String, TextRange)],
        keywords: &[ast::Arg],
    ) -> Option<()> {
        let loop_name = loop_name(kind);
        let expected = if kind == LoopKind::Independent {
            "names"
        } else {
            "name"
        };
        let mut ok = true;
        for arg in keywords {
            let (Some(kw), Some(e)) = (arg.keyword(), arg.value()) else {
                continue;
            };
            let r = arg.syntax().text_range();
            if kw.text() != expected {
                self.eval.error(
                    Code::WrongArguments,
                    kw.text_range(),
                    format!(
                        "`{loop_name}(...)` takes axes and `{expected}=`, not `{}=`",
                        kw.text()
                    ),
                );
                ok = false;
                continue;
            }
            let given: Vec<String> = match self.eval.expr(&e) {
                Value::Str(s) if expected == "name" => vec![s],
                Value::List(vs) | Value::Tuple(vs) if expected == "names" => vs
                    .into_iter()
                    .map(|v| match v {
                        Value::Str(s) => s,
                        _ => String::new(),
                    })
                    .collect(),
                Value::Unknown => continue,
                v => {
                    let want = if expected == "name" {
                        "a string"
                    } else {
                        "a list of strings"
                    };
                    self.eval.error(
                        Code::WrongKind,
                        e.syntax().text_range(),
                        format!("`{expected}=` is {want}, not {}", v.describe()),
                    );
                    ok = false;
                    continue;
                }
            };
            let names: Vec<&str> = targets.iter().map(|(n, _)| n.as_str()).collect();
            if given != names {
                self.eval.error(
                    Code::WrongArguments,
                    r,
                    format!(
                        "`{expected}=` says {} but the loop variable{} {}; the `for` names them, and keys use those names",
                        quoted(&given),
                        plural(names.len()),
                        if names.len() == 1 {
                            format!("is `{}`", names[0])
                        } else {
                            format!("are {}", quoted(&names))
                        }
                    ),
                );
                ok = false;
            }
        }
        ok.then_some(())
    }

    /// One loop variable per axis, plain names, and one axis for `P.seq` and `P.sel`.
    fn loop_arity(
        &mut self,
        f: &ast::ForStmt,
        c: &ast::CallExpr,
        kind: LoopKind,
        targets: &[(String, TextRange)],
        args: &[ast::Arg],
    ) -> Option<()> {
        let loop_name = loop_name(kind);
        if targets.is_empty() {
            self.eval.error(
                Code::OutsideSubset,
                f.target()?.syntax().text_range(),
                "loop variables are plain names",
            );
            return None;
        }
        if args.len() != targets.len() {
            self.eval.error(
                Code::WrongArguments,
                c.syntax().text_range(),
                format!(
                    "{} loop variable{} but {} ax{} in `{loop_name}(...)`",
                    targets.len(),
                    plural(targets.len()),
                    args.len(),
                    if args.len() == 1 { "is" } else { "es" }
                ),
            );
            return None;
        }
        if kind != LoopKind::Independent && args.len() != 1 {
            self.eval.error(
                Code::WrongArguments,
                c.syntax().text_range(),
                format!("`{loop_name}` takes one axis"),
            );
            return None;
        }
        Some(())
    }

    /// The loop variables, each from its axis argument; `false` if one is missing or wrong.
    fn loop_vars(
        &mut self,
        kind: LoopKind,
        targets: &[(String, TextRange)],
        args: &[ast::Arg],
    ) -> (Vec<LoopVar>, bool) {
        let mut vars = Vec::new();
        let mut ok = true;
        for ((name, _), arg) in targets.iter().zip(args) {
            let Some(e) = arg.value() else {
                ok = false;
                continue;
            };
            let before = self.eval.diags.len();
            let v = self.eval.expr(&e);
            // An axis that is an error (`tokens[5]` past its rows) leaves the loop out, as
            // every other wrong axis does, rather than being taken for a caller's axis.
            let errored = self.eval.diags[before..]
                .iter()
                .any(|d| d.severity() == crate::diagnostics::Severity::Error);
            // So does an unknown axis that is no parameter of the workload's (a module-level
            // axis whose definition is an error): only a parameter is a caller's to give.
            let root = match &e {
                Expr::SubscriptExpr(s) => s.base(),
                other => Some(other.clone()),
            };
            let parameter = matches!(&root, Some(Expr::NameExpr(n))
                if self.eval.locals.iter().any(|l| l.name == n.text()));
            if v == Value::Unknown && (errored || !parameter) {
                ok = false;
                continue;
            }
            let var = match (kind, v) {
                // An unknown axis (a parameter in the generic analysis): iterations unknown.
                (_, Value::Unknown) => Some(LoopVar {
                    name: name.clone(),
                    axis: String::new(),
                    axis_kind: AxisKind::Dense,
                    extent: None,
                    row: None,
                }),
                (LoopKind::Selected, v) => self.selected_var(name, &e, v),
                (_, v) => self.axis_var(kind, name, &e, v),
            };
            match var {
                Some(v) => vars.push(v),
                None => ok = false,
            }
        }
        (vars, ok)
    }

    /// A `P.sel` variable: it enumerates the entries of one row of a Sparse axis, or (the
    /// original's `P.sel(sparse)`) of every row in order; it takes each entry's index.
    fn selected_var(&mut self, name: &str, e: &Expr, v: Value<'db>) -> Option<LoopVar> {
        let r = e.syntax().text_range();
        match v {
            Value::AxisRow(a) if a.kind == AxisKind::Sparse => Some(loop_var(
                name,
                &a,
                a.row_extent,
                row_index(e, &mut self.eval),
            )),
            Value::Axis(a) if a.kind == AxisKind::Sparse => {
                Some(loop_var(name, &a, a.row_extent, None))
            }
            v => {
                self.eval.error(
                    Code::WrongKind,
                    r,
                    format!("`P.sel` needs a Sparse axis, but this is {}", v.describe()),
                );
                None
            }
        }
    }

    /// A `P` or `P.seq` variable: over an axis, a row of a Ragged axis, or a positive count.
    fn axis_var(&mut self, kind: LoopKind, name: &str, e: &Expr, v: Value<'db>) -> Option<LoopVar> {
        let r = e.syntax().text_range();
        let loop_name = loop_name(kind);
        match v {
            // A whole ragged axis: every element, row by row, as the original flattens it;
            // the variable is the element's index, 0 up to the sum of the lengths.
            Value::Axis(a) if a.kind == AxisKind::Ragged => {
                let total = match &a.lengths {
                    Some(IntSource::List(l)) => l.iter().try_fold(0u64, |s, &n| s.checked_add(n)),
                    _ => None,
                };
                Some(loop_var(name, &a, total, None))
            }
            // Rows or entries: the original has no loop over a whole Sparse axis, and either
            // reading would be a silent guess.
            Value::Axis(a) if a.kind == AxisKind::Sparse => {
                self.eval.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "`{loop_name}` over the whole Sparse axis `{}` could mean its rows or its entries: iterate the rows with `{loop_name}(Dense[{}])`, a row's entries with `P.sel({}[b])`",
                        a.name, a.size, a.name
                    ),
                );
                None
            }
            Value::Axis(a) => Some(loop_var(name, &a, Some(a.size), None)),
            Value::AxisRow(a) if a.kind == AxisKind::Ragged => Some(loop_var(
                name,
                &a,
                a.row_extent,
                row_index(e, &mut self.eval),
            )),
            // `P.seq(routing[b])`: the row's entries one after another (an expert combine that
            // accumulates), where `P.sel` runs them in parallel.
            Value::AxisRow(a) if kind == LoopKind::Sequential => Some(loop_var(
                name,
                &a,
                a.row_extent,
                row_index(e, &mut self.eval),
            )),
            Value::AxisRow(a) => {
                self.eval.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "a row of the Sparse axis `{}` is enumerated with `P.sel` (in parallel) or `P.seq` (in order)",
                        a.name
                    ),
                );
                None
            }
            Value::Int(n) if n > 0 => Some(LoopVar {
                name: name.to_string(),
                axis: n.to_string(),
                axis_kind: AxisKind::Dense,
                extent: Some(n as u64),
                row: None,
            }),
            v => {
                self.eval.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "`{loop_name}` iterates an axis, but this is {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    /// The loop body, walked with the loop variables bound as indices with their extents.
    fn loop_body(
        &mut self,
        f: &ast::ForStmt,
        targets: &[(String, TextRange)],
        vars: &[LoopVar],
    ) -> Vec<PlanNode<'db>> {
        let depth = (self.eval.locals.len(), self.eval.extents.len());
        for (name, def) in targets {
            let extent = vars.iter().find(|v| &v.name == name).and_then(|v| v.extent);
            self.eval
                .bind_local(name.clone(), Value::Index(Affine::var(name)), *def);
            self.eval.extents.push((name.clone(), extent));
        }
        let body = f.body().map(|b| self.block(&b)).unwrap_or_default();
        self.eval.locals.truncate(depth.0);
        self.eval.extents.truncate(depth.1);
        body
    }

    /// A `with` block other than `P.when`/`P.otherwise`: `P.pipe()` or `consume(ch) as t`.
    fn with_block(&mut self, w: &ast::WithStmt) -> Option<PlanNode<'db>> {
        let range = w.syntax().text_range();
        let items: Vec<ast::WithItem> = w.items().collect();
        if items.len() != 1 || w.is_async() {
            self.eval.error(Code::OutsideSubset, range, "a workload `with` block opens one of `P.when(...)`, `P.otherwise()`, `P.pipe()`, `consume(ch) as t`");
            return None;
        }
        let item = &items[0];
        let e = item.expr()?;
        let Expr::CallExpr(c) = &e else {
            self.eval.error(Code::WrongKind, e.syntax().text_range(), "a workload `with` block opens `P.when(...)`, `P.otherwise()`, `P.pipe()` or `consume(ch)`");
            return None;
        };
        let callee = self.eval.expr(&c.callee()?);
        match callee {
            Value::Member(Builtin::P, "pipe") => {
                self.eval.bind_member(c, Builtin::P, "pipe");
                self.push_with_block(w, BlockKind::Pipeline, Vec::new());
                let stages = w.body().map(|b| self.block(&b)).unwrap_or_default();
                Some(PlanNode::Pipeline {
                    stages,
                    span: self.eval.span(e.syntax().text_range()),
                })
            }
            Value::Builtin(Builtin::Consume) => self.consume_block(w, item, c, &e),
            Value::Unknown => None,
            v => {
                self.eval.error(Code::WrongKind, e.syntax().text_range(), format!("a workload `with` block opens `P.when(...)`, `P.otherwise()`, `P.pipe()` or `consume(ch)`, not {}", v.describe()));
                None
            }
        }
    }

    /// `with consume(ch) as t:`: the channel, and the body with `t` bound to the received
    /// task's index (with the extent of the tasks sent on `ch`).
    fn consume_block(
        &mut self,
        w: &ast::WithStmt,
        item: &ast::WithItem,
        c: &ast::CallExpr,
        e: &Expr,
    ) -> Option<PlanNode<'db>> {
        let range = w.syntax().text_range();
        let [channel, body] = self.consume_args(c)?;
        if let Some(body) = body {
            self.eval.error(
                Code::WrongArguments,
                body.syntax().text_range(),
                "`with consume(ch) as t:` has its body below; `consume(ch, lambda t: ...)` is a process's body",
            );
            return None;
        }
        let channel = self.channel_name(&channel?, "consume")?;
        let (var, def) = match item.target() {
            Some(Expr::NameExpr(n)) => (n.text(), n.syntax().text_range()),
            _ => {
                self.eval.error(
                    Code::WrongKind,
                    range,
                    "`consume` binds the received task's index: `with consume(ch) as t:`",
                );
                return None;
            }
        };
        let span = self.eval.span(e.syntax().text_range());
        let kind = BlockKind::Consume(channel.clone());
        Some(
            self.consume_scope(channel, var, def, span, |walker, var_fact| {
                walker.push_with_block(w, kind, vec![var_fact]);
                w.body().map(|b| walker.block(&b)).unwrap_or_default()
            }),
        )
    }

    /// `consume`'s arguments, unevaluated: the channel and the process form's body.
    fn consume_args(&mut self, c: &ast::CallExpr) -> Option<[Option<Expr>; 2]> {
        let params = [("channel", false), ("body", true)];
        let bound = self.eval.bind_syntax(c, "`consume`", &params, &String::new);
        bound
            .ok
            .then(|| [bound.slots[0].clone(), bound.slots[1].clone()])
    }

    /// The name of the channel `e` is (`what` takes it); `None` after an error.
    fn channel_name(&mut self, e: &Expr, what: &str) -> Option<String> {
        match self.eval.expr(e) {
            Value::Channel(ch) => Some(ch.name),
            Value::Unknown => None,
            v => {
                self.eval.error(
                    Code::WrongKind,
                    e.syntax().text_range(),
                    format!("`{what}` takes a channel, not {}", v.describe()),
                );
                None
            }
        }
    }

    /// A consume of `channel` whose body `walk` walks with `var` (defined at `def`) bound to
    /// the received task's index, with the extent of the tasks sent on the channel.
    fn consume_scope(
        &mut self,
        channel: String,
        var: String,
        def: TextRange,
        span: Span<'db>,
        walk: impl FnOnce(&mut Self, LoopVar) -> Vec<PlanNode<'db>>,
    ) -> PlanNode<'db> {
        let extent = self
            .channel_extents
            .iter()
            .find(|(c, _)| *c == channel)
            .and_then(|(_, e)| *e);
        let depth = (self.eval.locals.len(), self.eval.extents.len());
        self.eval
            .bind_local(var.clone(), Value::Index(Affine::var(&var)), def);
        self.eval.extents.push((var.clone(), extent));
        let var_fact = LoopVar {
            name: var.clone(),
            axis: String::new(),
            axis_kind: AxisKind::Dense,
            extent,
            row: None,
        };
        let body = walk(self, var_fact);
        self.eval.locals.truncate(depth.0);
        self.eval.extents.truncate(depth.1);
        PlanNode::Consume {
            channel,
            var,
            extent,
            body,
            span,
        }
    }

    /// `cond(predicate, then, otherwise)` at module level: a conditional whose branches are the
    /// plans of the two workload calls, their tasks numbered after this walker's own.
    fn cond(&mut self, args: &[Value<'db>], site: Span<'db>) -> Vec<PlanNode<'db>> {
        let [predicate, then, otherwise] = args else {
            return Vec::new();
        };
        let db = self.eval.db;
        let Some(predicate) = self.eval.to_scalar(predicate) else {
            return Vec::new();
        };
        let mut body = |branch: &Value<'db>| -> Vec<PlanNode<'db>> {
            let Value::Schedule(s) = branch else {
                return Vec::new();
            };
            let crate::values::Composite::Call(call) = s.root else {
                return Vec::new();
            };
            let mut nodes = workload_instance(db, call).0.body.clone();
            self.tasks += super::renumber_tasks(&mut nodes, self.tasks);
            nodes
        };
        let branches = vec![
            Branch {
                predicate: Some(predicate),
                body: body(then),
                span: Some(site),
            },
            Branch {
                predicate: None,
                body: body(otherwise),
                span: None,
            },
        ];
        vec![PlanNode::Conditional {
            branches,
            span: site,
        }]
    }

    /// A statement call: a task, `send(ch, task)` or `slot_load_u64(...)`.
    pub(super) fn expr_stmt(&mut self, e: &Expr) -> Vec<PlanNode<'db>> {
        let range = e.syntax().text_range();
        let Expr::CallExpr(c) = e else {
            self.eval.error(Code::OutsideSubset, range, "a workload statement is a task `kernel[i](...)`, `send(...)` or `slot_load_u64(...)`");
            return Vec::new();
        };
        if let Some(task) = self.task(c) {
            return task.into_iter().collect();
        }
        let callee = c.callee().map_or(Value::Unknown, |e| self.eval.expr(&e));
        match callee {
            Value::Builtin(Builtin::Send) => self.send(c),
            Value::Builtin(Builtin::SlotLoadU64) => self.slot_load(c),
            Value::Workload(_) | Value::Schedule(_) => {
                self.eval.error(Code::OutsideSubset, range, "workloads are composed at module level with `sequential(...)` or `combine(...)`, not called inside a workload");
                Vec::new()
            }
            Value::Unknown => Vec::new(),
            v => {
                self.eval.error(Code::WrongKind, range, format!("a workload statement is a task, `send` or `slot_load_u64`, not a call of {}", v.describe()));
                Vec::new()
            }
        }
    }

    /// `send(ch, kernel[i](...))`: the task, then the send on the channel, which records the
    /// extent of the task's index for `consume`.
    fn send(&mut self, c: &ast::CallExpr) -> Vec<PlanNode<'db>> {
        let range = c.syntax().text_range();
        let args: Vec<ast::Arg> = c.args().collect();
        let [ch, t] = args.as_slice() else {
            self.eval.error(
                Code::WrongArguments,
                c.syntax().text_range(),
                "`send` takes a channel and a task: `send(ch, kernel[i](...))`",
            );
            return Vec::new();
        };
        let chv = ch.value().map_or(Value::Unknown, |e| self.eval.expr(&e));
        let task_expr = t.value();
        let task = match &task_expr {
            Some(Expr::CallExpr(tc)) => self.task(tc),
            _ => None,
        };
        let Some(task) = task else {
            self.eval.error(
                Code::WrongKind,
                t.syntax().text_range(),
                "`send`'s second argument is a task: `kernel[i](...)`",
            );
            return Vec::new();
        };
        let Some(node) = task else { return Vec::new() };
        let PlanNode::Task(tk) = &node else {
            return vec![node];
        };
        let channel = match chv {
            Value::Channel(ch) => ch.name,
            Value::Unknown => return vec![node],
            v => {
                self.eval.error(
                    Code::WrongKind,
                    ch.syntax().text_range(),
                    format!("`send` sends on a channel, not {}", v.describe()),
                );
                return vec![node];
            }
        };
        let extent = self.sent_extent(tk);
        if !self.channel_extents.iter().any(|(c, _)| *c == channel) {
            self.channel_extents.push((channel.clone(), extent));
        }
        let id = tk.id;
        let span = self.eval.span(range);
        vec![
            node,
            PlanNode::Send {
                channel,
                task: id,
                span,
            },
        ]
    }

    /// The extent of a sent task's index: that of the loop variable its first index is.
    fn sent_extent(&self, tk: &Task<'db>) -> Option<u64> {
        tk.index.first().and_then(|a| match a.terms.as_slice() {
            [(v, 1)] if a.constant == 0 => self
                .eval
                .extents
                .iter()
                .rev()
                .find(|(n, _)| n == v)
                .and_then(|(_, e)| *e),
            _ => None,
        })
    }

    /// `slot_load_u64(slot, view, row, col)`: a non-negative slot and a tensor view.
    fn slot_load(&mut self, c: &ast::CallExpr) -> Vec<PlanNode<'db>> {
        let Some(args) = self.eval.bind_builtin(c, Builtin::SlotLoadU64) else {
            return Vec::new();
        };
        let slot = match args.get(0).cloned() {
            Some((Value::Int(s), _)) if s >= 0 => s,
            Some((Value::Unknown, _)) | None => return Vec::new(),
            Some((v, r)) => {
                self.eval.error(
                    Code::WrongKind,
                    r,
                    format!("a slot is a non-negative integer, not {}", v.describe()),
                );
                return Vec::new();
            }
        };
        let view = match args.get(1).cloned() {
            Some((Value::View(v), _)) => v,
            Some((Value::Tensor(t), r)) => Box::new(View {
                tensor: *t,
                indices: Vec::new(),
                span: self.eval.span(r),
            }),
            Some((Value::Unknown, _)) | None => return Vec::new(),
            Some((v, r)) => {
                self.eval.error(
                    Code::WrongKind,
                    r,
                    format!("`slot_load_u64` reads a tensor view, not {}", v.describe()),
                );
                return Vec::new();
            }
        };
        let coord = |i: usize| match args.get(i) {
            Some((Value::Int(n), _)) => *n,
            _ => 0,
        };
        vec![PlanNode::SlotLoad {
            slot,
            view: *view,
            row: coord(2),
            col: coord(3),
        }]
    }

    /// `kernel[i, j](param=view, ...)`. `None` if the call is not a task at all.
    fn task(&mut self, c: &ast::CallExpr) -> Option<Option<PlanNode<'db>>> {
        if self.is_task_builtin(c) {
            return Some(self.task_builtin(c));
        }
        // `kernel(param=view, ...)`: the original's task with no index (one task).
        if let Some(callee @ Expr::NameExpr(_)) = c.callee() {
            let (diags, uses) = (self.eval.diags.len(), self.eval.uses.len());
            if let Value::Kernel(item) = self.eval.expr(&callee) {
                let db = self.eval.db;
                let kernel = TaskKernel {
                    item,
                    signature: kernel_signature(db, item),
                    name: item.name(db).clone(),
                };
                let (args, given) = self.task_args(c, &kernel);
                return Some(self.new_task(c, kernel, (Vec::new(), Vec::new()), (args, given)));
            }
            self.eval.diags.truncate(diags);
            self.eval.uses.truncate(uses);
            return None;
        }
        let Some(Expr::SubscriptExpr(s)) = c.callee() else {
            return None;
        };
        let base = s.base()?;
        // Only a kernel makes a task; look it up quietly so other subscripts go the usual way.
        let before = self.eval.diags.len();
        let kv = self.eval.expr(&base);
        let item = match kv {
            Value::Kernel(k) => k,
            Value::Unknown => return Some(None),
            _ => {
                self.eval.diags.truncate(before);
                return None;
            }
        };
        let db = self.eval.db;
        let signature = kernel_signature(db, item);
        let Some((index, fields)) = self.task_index(&s) else {
            return Some(None);
        };
        let kernel = TaskKernel {
            item,
            signature,
            name: item.name(db).clone(),
        };
        let (args, given) = self.task_args(c, &kernel);
        Some(self.new_task(c, kernel, (index, fields), (args, given)))
    }

    /// The task of a call, once its index and arguments are bound: the parameters left out
    /// are checked, and the task numbered. An argument in error is left out of the task, whose
    /// other arguments are still checked (races, channels): one mistake hides no other. The
    /// file has an error then, so the task is never lowered or run.
    fn new_task(
        &mut self,
        c: &ast::CallExpr,
        kernel: TaskKernel<'db>,
        (index, fields): (Vec<Affine>, Vec<String>),
        (args, given): (Vec<TaskArg<'db>>, Vec<(String, TextRange)>),
    ) -> Option<PlanNode<'db>> {
        self.missing_task_params(c, &kernel, &given);
        let id = self.tasks;
        self.tasks += 1;
        let db = self.eval.db;
        // A JIT-style kernel's instance: each JIT parameter's tile type from its view.
        let tiles: Vec<(String, TileType)> = kernel
            .signature
            .params
            .iter()
            .filter(|p| matches!(p.ty, ParamType::Jit(..)))
            .filter_map(|p| {
                args.iter().find_map(|a| match a {
                    TaskArg::Tile { param, view, .. } if *param == p.name => {
                        let shape = view.shape();
                        let t = TileType::new(shape[0], shape[1], view.tensor.dtype);
                        Some((p.name.clone(), t))
                    }
                    _ => None,
                })
            })
            .collect();
        Some(PlanNode::Task(Task {
            id,
            instance: KernelInstance::new(db, kernel.item, tiles),
            kernel: kernel.item,
            kernel_name: kernel.name,
            index,
            fields,
            args,
            span: self.eval.span(c.syntax().text_range()),
        }))
    }

    /// The task index `[i, j]`: loop variables or affine expressions of them, and the field
    /// names keys use (`t.i`, or `i0` for an expression); `None` after an error.
    fn task_index(&mut self, s: &ast::SubscriptExpr) -> Option<(Vec<Affine>, Vec<String>)> {
        let values: Vec<(Value<'db>, TextRange)> = s
            .indices()
            .iter()
            .map(|e| (self.eval.expr(e), e.syntax().text_range()))
            .collect();
        self.index_of(values)
    }

    /// A task index from its values: loop variables or affine expressions of them, and the
    /// field names keys use; `None` after an error.
    fn index_of(
        &mut self,
        values: Vec<(Value<'db>, TextRange)>,
    ) -> Option<(Vec<Affine>, Vec<String>)> {
        let mut index = Vec::new();
        let mut fields = Vec::new();
        for (v, r) in values {
            match v {
                Value::Index(a) => {
                    fields.push(match a.terms.as_slice() {
                        [(v, 1)] if a.constant == 0 => v.clone(),
                        _ => format!("i{}", fields.len()),
                    });
                    index.push(a);
                }
                Value::Int(i) => {
                    fields.push(format!("i{}", fields.len()));
                    index.push(Affine::constant(i));
                }
                Value::Unknown => return None,
                v => {
                    self.eval.error(Code::WrongKind, r, format!("a task index is a loop variable or an affine expression of them, not {}", v.describe()));
                    return None;
                }
            }
        }
        Some((index, fields))
    }

    /// The task's arguments bound to the kernel's parameters as Python binds a call's:
    /// positional ones in parameter order (`attn[b, h](Q[b, h], K[b], V[b], O[b, h])`), then
    /// keywords. The arguments bound without error, and the names given (with where).
    fn task_args(
        &mut self,
        c: &ast::CallExpr,
        kernel: &TaskKernel<'db>,
    ) -> (Vec<TaskArg<'db>>, Vec<(String, TextRange)>) {
        let mut given: Vec<(String, TextRange)> = Vec::new();
        let mut args = Vec::new();
        let params = &kernel.signature.params;
        let mut position = 0;
        for arg in c.args() {
            let r = arg.syntax().text_range();
            let bound = match arg.kind() {
                ast::ArgKind::Keyword => {
                    let Some(kw) = arg.keyword() else { continue };
                    let value = (arg.value(), r);
                    self.task_arg(value, kw.text(), Some(kw.text_range()), kernel, &mut given)
                }
                ast::ArgKind::Positional => {
                    position += 1;
                    match params.get(position - 1) {
                        Some(p) => {
                            let name = p.name.clone();
                            self.task_arg((arg.value(), r), &name, None, kernel, &mut given)
                        }
                        None => {
                            let given_n = c
                                .args()
                                .filter(|a| a.kind() == ast::ArgKind::Positional)
                                .count();
                            self.eval.error(
                                Code::WrongArguments,
                                r,
                                format!(
                                    "{} takes {} positional argument{} but {given_n} were given",
                                    kernel.what(),
                                    params.len(),
                                    if params.len() == 1 { "" } else { "s" }
                                ),
                            );
                            None
                        }
                    }
                }
                ast::ArgKind::Unpack | ast::ArgKind::UnpackKeywords => {
                    self.eval.error(
                        Code::OutsideSubset,
                        r,
                        format!(
                            "task arguments are views given in parameter order or by name: `{}[...](X[i], param=view)`",
                            kernel.name
                        ),
                    );
                    None
                }
            };
            if let Some(a) = bound {
                args.push(a);
            }
        }
        (args, given)
    }

    /// One argument of a task for the parameter `name` (`keyword` is where a keyword names
    /// it; positional arguments have none): given once, a parameter of the kernel, of its kind;
    /// `None` if not.
    fn task_arg(
        &mut self,
        (arg, r): (Option<Expr>, TextRange),
        name: &str,
        keyword: Option<TextRange>,
        kernel: &TaskKernel<'db>,
        given: &mut Vec<(String, TextRange)>,
    ) -> Option<TaskArg<'db>> {
        let what = kernel.what();
        let name = name.to_string();
        let value = arg.as_ref().map_or(Value::Unknown, |v| self.eval.expr(v));
        let vr = arg.as_ref().map_or(r, |v| v.syntax().text_range());
        if let Some((_, first)) = given.iter().find(|(n, _)| *n == name) {
            // As Python says it: a keyword repeating a positional argument.
            let d = Diag::new(
                Code::WrongArguments,
                self.eval.span(r),
                format!("{what} got multiple values for `{name}`"),
            )
            .with_related(self.eval.span(*first), "first given here");
            self.eval.push(d);
            return None;
        }
        given.push((name.clone(), r));
        let Some(param) = kernel.signature.param(&name) else {
            if let Some(kw) = keyword {
                self.unknown_task_param(kw, &name, kernel);
            }
            return None;
        };
        if let Some(kw) = keyword {
            let symbol = Symbol::Local {
                item: kernel.item,
                def: param.range,
            };
            self.eval.record(kw, symbol);
        }
        // A whole tensor passed to a tile parameter is its view with no indices.
        let value = match value {
            Value::Tensor(t) if matches!(param.ty, ParamType::Tile(..) | ParamType::Jit(..)) => {
                Value::View(Box::new(View {
                    tensor: *t,
                    indices: Vec::new(),
                    span: self.eval.span(vr),
                }))
            }
            v => v,
        };
        match (&param.ty, value) {
            (_, Value::Unknown) => None,
            (ParamType::Tile(dir, tile), Value::View(view)) => {
                self.tile_arg(kernel, param, *dir, *tile, *view, vr)
            }
            (
                ParamType::Scalar(_) | ParamType::Constexpr,
                v @ (Value::Int(_) | Value::Float(_)),
            ) => Some(TaskArg::Scalar {
                param: name,
                value: crate::values::F64(crate::eval::num(&v)),
                symbol: None,
            }),
            // `Symbol("s")`: bound when the program runs.
            (ParamType::Scalar(_), Value::Runtime(e))
                if matches!(&*e, wsp_ir::ScalarExpr::Symbol(_)) =>
            {
                let wsp_ir::ScalarExpr::Symbol(s) = *e else {
                    return None;
                };
                Some(TaskArg::Scalar {
                    param: name,
                    value: crate::values::F64(0.0),
                    symbol: Some(s),
                })
            }
            (ParamType::Jit(dir, dtype), Value::View(view)) => {
                self.jit_arg(kernel, param, *dir, *dtype, *view, vr)
            }
            (ParamType::Unknown, _) => None,
            (ParamType::Tile(..) | ParamType::Jit(..), v) => {
                self.eval.error(Code::TaskArgument, vr, format!("`{name}` is a tile parameter and takes a tensor view such as `X[i]`, not {}", v.describe()));
                None
            }
            (_, v) => {
                self.eval.error(
                    Code::TaskArgument,
                    vr,
                    format!(
                        "`{name}` is a scalar parameter and takes a number, not {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    /// A keyword that names no parameter of the kernel, with the nearest name as a fix.
    fn unknown_task_param(&mut self, kw: TextRange, name: &str, kernel: &TaskKernel<'db>) {
        let what = kernel.what();
        let kname = &kernel.name;
        let mut d = Diag::new(
            Code::WrongArguments,
            self.eval.span(kw),
            format!("{what} has no parameter `{name}`"),
        );
        if let Some(best) = crate::names::suggest(
            name,
            kernel.signature.params.iter().map(|p| p.name.as_str()),
        ) {
            d.message.push_str(&format!("; did you mean `{best}`?"));
            d = d.with_guess(
                format!("replace with `{best}`"),
                vec![(self.eval.span(kw), best.to_string())],
            );
        }
        d = d.with_related(
            Span {
                item: kernel.item,
                range: TextRange::default(),
            },
            format!("`{kname}` is defined here"),
        );
        self.eval.push(d);
    }

    /// A tile parameter's view: the view has the tile's shape and dtype.
    fn tile_arg(
        &mut self,
        kernel: &TaskKernel<'db>,
        param: &KernelParam,
        dir: Direction,
        tile: TileType,
        view: View<'db>,
        vr: TextRange,
    ) -> Option<TaskArg<'db>> {
        // The keyword is the parameter's name.
        let name = param.name.clone();
        let shape = view.shape();
        if shape != tile.shape() || view.tensor.dtype != tile.dtype {
            let why = format!(
                "`{name}` is a tile {} {} but `{}` is {} {}",
                shape_text(&tile.shape()),
                tile.dtype,
                view.text(),
                shape_text(&shape),
                view.tensor.dtype
            );
            self.refuse_view(kernel, param, vr, why);
            return None;
        }
        Some(TaskArg::Tile {
            param: name,
            direction: dir,
            view: Box::new(view),
        })
    }

    /// WSP206 at a view a tile parameter cannot take (`why`), with where the parameter is
    /// declared and as what.
    fn refuse_view(
        &mut self,
        kernel: &TaskKernel<'db>,
        param: &KernelParam,
        vr: TextRange,
        why: String,
    ) {
        let declared = Span {
            item: kernel.item,
            range: param.range,
        };
        let d = Diag::new(Code::TaskArgument, self.eval.span(vr), why).with_related(
            declared,
            format!("`{}` is declared `{}` here", param.name, param.ty),
        );
        self.eval.push(d);
    }

    /// A view for a JIT-style parameter (`In[Tensor]`): 2-D, of the dtype it names if any; its
    /// shape and dtype are the tile type this task binds.
    fn jit_arg(
        &mut self,
        kernel: &TaskKernel<'db>,
        param: &KernelParam,
        dir: Direction,
        dtype: Option<DType>,
        view: View<'db>,
        vr: TextRange,
    ) -> Option<TaskArg<'db>> {
        let name = param.name.clone();
        let shape = view.shape();
        let why = if shape.len() != 2 {
            Some(format!(
                "`{name}` takes its tile from the view, a 2-D one, but `{}` is {}: index it down to two dimensions",
                view.text(),
                shape_text(&shape)
            ))
        } else {
            dtype.filter(|&d| d != view.tensor.dtype).map(|d| {
                format!(
                    "`{name}` takes {d} tiles but `{}` is {}",
                    view.text(),
                    view.tensor.dtype
                )
            })
        };
        if let Some(why) = why {
            self.refuse_view(kernel, param, vr, why);
            return None;
        }
        Some(TaskArg::Tile {
            param: name,
            direction: dir,
            view: Box::new(view),
        })
    }

    /// Every parameter without a default is given; `false` (with a diagnostic each) if not.
    fn missing_task_params(
        &mut self,
        c: &ast::CallExpr,
        kernel: &TaskKernel<'db>,
        given: &[(String, TextRange)],
    ) -> bool {
        let what = kernel.what();
        let mut ok = true;
        for p in &kernel.signature.params {
            if p.default.is_none()
                && p.ty != ParamType::Unknown
                && !given.iter().any(|(n, _)| *n == p.name)
            {
                let at = c
                    .arg_list()
                    .map_or(c.syntax().text_range(), |a| a.syntax().text_range());
                let d = Diag::new(
                    Code::WrongArguments,
                    self.eval.span(at),
                    format!("{what} is missing `{}`", p.name),
                )
                .with_related(
                    Span {
                        item: kernel.item,
                        range: p.range,
                    },
                    format!("`{}` is declared here", p.name),
                );
                self.eval.push(d);
                ok = false;
            }
        }
        ok
    }
}

/// The kernel a task calls, as its argument checks read it.
struct TaskKernel<'db> {
    item: Item<'db>,
    signature: &'db KernelSignature<'db>,
    name: String,
}

impl TaskKernel<'_> {
    /// The kernel as messages name it: `` `attention` ``.
    fn what(&self) -> String {
        format!("`{}`", self.name)
    }
}

/// `` `a`, `b` ``
fn quoted<S: AsRef<str>>(names: &[S]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("`{}`", n.as_ref())).collect();
    q.join(", ")
}

/// A loop's variables: a name or a tuple of names (empty if any is not a plain name).
fn loop_targets(target: &Expr) -> Vec<(String, TextRange)> {
    match target {
        Expr::NameExpr(n) => vec![(n.text(), n.syntax().text_range())],
        Expr::TupleExpr(t) => t
            .elements()
            .map(|e| match e {
                Expr::NameExpr(n) => Some((n.text(), n.syntax().text_range())),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The builtin a loop of this kind iterates, as messages name it.
fn loop_name(kind: LoopKind) -> &'static str {
    match kind {
        LoopKind::Independent => "P",
        LoopKind::Sequential => "P.seq",
        LoopKind::Selected => "P.sel",
    }
}

fn loop_var(name: &str, a: &Axis<'_>, extent: Option<u64>, row: Option<Affine>) -> LoopVar {
    LoopVar {
        name: name.to_string(),
        axis: a.name.clone(),
        axis_kind: a.kind,
        extent,
        row,
    }
}

mod process;

/// The row index of `routing[b]`.
fn row_index(e: &Expr, eval: &mut Eval<'_>) -> Option<Affine> {
    let Expr::SubscriptExpr(s) = e else {
        return None;
    };
    let idx = s.indices();
    let [i] = idx.as_slice() else { return None };
    let before = eval.diags.len();
    let v = eval.expr(i);
    eval.diags.truncate(before);
    match v {
        Value::Index(a) => Some(a),
        Value::Int(c) => Some(Affine::constant(c)),
        _ => None,
    }
}
