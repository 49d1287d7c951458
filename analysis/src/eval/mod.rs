//! The evaluator: module-level expressions (constants, axes, tensors, channels, layouts,
//! policies, schedules) to `Value`s, with their diagnostics. Kernel signatures and workload
//! bodies reuse it with local names. One context, split by concern: `expr` (expressions),
//! `bind` (arguments), `builtins` (constructors), `schedule` (directives and keys), `tensors`
//! (tensors, axes and views), `views` (tensors over others' bytes), `csp` (the process builder), `fstrings`.

mod bind;
mod builtins;
mod csp;
pub mod explore;
mod expr;
mod fstrings;
mod pymath;
mod schedule;
mod statements;
mod tensors;
mod trace;
mod views;

use crate::diagnostics::{Code, Diag, Span};
use crate::items::{Item, ItemKind};
use crate::names::{ModuleScope, module_scope, name_index, name_range, suggest};
use crate::symbols::{Symbol, Use};
use crate::values::{Schedule, Value, WorkloadCall};
use crate::vocabulary::Builtin;
pub use bind::{Annotation, workload_params};
pub(crate) use builtins::is_fstring;
pub(crate) use expr::num;
pub(crate) use fstrings::{FieldValue, Piece};
pub(crate) use statements::MAX_UNROLLED;
pub use trace::KernelName;
pub use views::TENSOR_MEMBERS;
use wsp_syntax::ast::{self, AstNode};
use wsp_syntax::{SyntaxKind, SyntaxNode, TextRange};

/// The value a module-level item binds, and what evaluating it found. Kept for every
/// statement, so the lists are boxed slices (16 bytes, where a `Vec` takes 24).
#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub struct ItemValue<'db> {
    pub value: Value<'db>,
    pub diags: Box<[Diag<'db>]>,
    pub uses: Box<[Use<'db>]>,
    /// The workload calls it made, whose bodies are checked for their arguments.
    pub calls: Box<[WorkloadCall<'db>]>,
    /// The `program.execute(...)` calls it made.
    pub executes: Box<[Execute<'db>]>,
    /// The kernels whose trace events it reads.
    pub kernel_names: Box<[KernelName<'db>]>,
    /// The explorations it makes, which run where the statement stands.
    pub explores: Box<[crate::values::Explore<'db>]>,
}

/// `program.execute(name=value, ...)`, its bindings evaluated.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Execute<'db> {
    pub program: Schedule<'db>,
    pub bindings: Vec<Binding<'db>>,
    /// Whether it runs the program (`execute`), or only binds symbols for later runs
    /// (`set_symbol_u64`, `set_axis_sizes`).
    pub runs: bool,
    /// The call.
    pub range: TextRange,
}

/// One `name=value` of `execute`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Binding<'db> {
    pub name: String,
    pub name_range: TextRange,
    pub value: Value<'db>,
    pub value_range: TextRange,
}

/// A name bound inside a def.
pub(crate) struct Local<'db> {
    pub name: String,
    pub value: Value<'db>,
    pub def: TextRange,
}

/// The value of an assignment (or a def) at module level.
#[salsa::tracked(returns(ref))]
pub fn item_value<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> ItemValue<'db> {
    match item.kind(db) {
        ItemKind::Kernel => {
            return ItemValue {
                value: Value::Kernel(item),
                diags: Box::default(),
                uses: Box::default(),
                calls: Box::default(),
                executes: Box::default(),
                kernel_names: Box::default(),
                explores: Box::default(),
            };
        }
        ItemKind::Workload => {
            return ItemValue {
                value: Value::Workload(item),
                diags: Box::default(),
                uses: Box::default(),
                calls: Box::default(),
                executes: Box::default(),
                kernel_names: Box::default(),
                explores: Box::default(),
            };
        }
        _ => {}
    }
    let mut eval = Eval::new(db, item);
    let stmt = item.stmt(db);
    let part = stmt
        .as_ref()
        .and_then(crate::items::unpacked)
        .and_then(|pairs| {
            pairs
                .into_iter()
                .find(|(n, _)| n.text() == *item.name(db))
                .map(|(_, v)| v)
        });
    let value = match stmt {
        // `B, S = 2, 16`: this item's own value.
        Some(_) if let Some(crate::items::Part::Own(e)) = &part => eval.expr(e),
        // `best, summary = scheduler.explore(space)`: an element of the value.
        Some(_) if let Some(crate::items::Part::Element(e, i)) = &part => eval.element(e, *i),
        Some(ast::Stmt::AssignStmt(a)) => match a.value() {
            Some(e) => match eval.expr(&e) {
                // Python prints, then binds None: here a statement prints, so say where.
                Value::Explored(x) if x.query == wsp_ir::explore::ExploreQuery::PrintSummary => {
                    eval.error(
                        Code::OutsideSubset,
                        e.syntax().text_range(),
                        "`print_summary()` prints when it stands as a statement of its own; bound to a name it prints nothing here",
                    );
                    Value::Unknown
                }
                Value::Trace(t) if t.1 == wsp_ir::TraceQuery::PrintSummary => {
                    eval.error(
                        Code::OutsideSubset,
                        e.syntax().text_range(),
                        "`print_summary()` prints when it stands as a statement of its own; bound to a name it prints nothing here",
                    );
                    Value::Unknown
                }
                v => v,
            },
            None => Value::Unknown,
        },
        Some(ast::Stmt::ExprStmt(s)) => match s.expr() {
            Some(e) => {
                let v = eval.expr(&e);
                eval.check_statement_value(&e, &v);
                v
            }
            None => Value::Unknown,
        },
        Some(ast::Stmt::WithStmt(w)) => {
            eval.with_json(&w);
            Value::None
        }
        Some(ast::Stmt::ForStmt(f)) => {
            let mut budget = MAX_UNROLLED;
            // A kernel IR list is checked with one element of its kind; lowering unrolls it.
            let lists = |v: &Value<'db>| match v {
                Value::KernelIr(_, crate::values::IrPart::Params) => {
                    let text = Value::Str(String::new());
                    Some(vec![Value::Tuple(vec![text.clone(), text])])
                }
                Value::KernelIr(_, crate::values::IrPart::Ops | crate::values::IrPart::Tiles) => {
                    Some(vec![Value::Str(String::new())])
                }
                _ => None,
            };
            eval.module_for(&f, &mut budget, &lists, &mut |eval, e| {
                eval.expr(e);
            });
            Value::None
        }
        _ => Value::Unknown,
    };
    // A name's value carries its name: tensors, axes and channels are named by what binds them.
    let value = name_value(db, item, value);
    ItemValue {
        value,
        diags: eval.diags.into(),
        uses: eval.uses.into(),
        calls: eval.calls.into(),
        executes: eval.executes.into(),
        kernel_names: eval.kernel_names.into(),
        explores: eval.explores.into(),
    }
}

fn name_value<'db>(db: &'db dyn salsa::Database, item: Item<'db>, value: Value<'db>) -> Value<'db> {
    let name = item.name(db);
    if name.is_empty() {
        return value;
    }
    let def = Span {
        item,
        range: name_range(db, item).unwrap_or_default(),
    };
    match value {
        Value::Tensor(mut t) if t.name.is_empty() => {
            // A tensor stored in another memory order (`MemLayout`) names its storage after it.
            if let crate::values::TensorOrigin::View { base, .. } = &mut t.origin
                && base.name.is_empty()
            {
                base.name = wsp_ir::plan::storage_name(name);
                base.def = def;
            }
            t.name = name.clone();
            t.def = def;
            Value::Tensor(t)
        }
        Value::Axis(mut a) if a.name.is_empty() => {
            a.name = name.clone();
            a.def = def;
            Value::Axis(a)
        }
        Value::Channel(mut c) if c.name.is_empty() => {
            if c.label.is_empty() {
                c.label = name.clone();
            }
            c.name = name.clone();
            c.def = def;
            Value::Channel(c)
        }
        v => v,
    }
}

pub(crate) struct Eval<'db> {
    pub db: &'db dyn salsa::Database,
    pub item: Item<'db>,
    pub scope: &'db ModuleScope<'db>,
    position: usize,
    pub diags: Vec<Diag<'db>>,
    /// Local names (workload parameters, loop variables), innermost last.
    pub locals: Vec<Local<'db>>,
    /// Every name resolved, where it was written (for navigation).
    pub uses: Vec<Use<'db>>,
    /// The extent of each loop variable in scope, when it is known.
    pub extents: Vec<(String, Option<u64>)>,
    /// Workload calls made (`w(T)`): their bodies are checked for these arguments.
    pub calls: Vec<WorkloadCall<'db>>,
    /// `program.execute(...)` calls made, checked by `programs::execute_checks`.
    pub executes: Vec<Execute<'db>>,
    /// `get_kernel_events(NAME)` calls made, checked by `programs::execute_checks`.
    pub kernel_names: Vec<KernelName<'db>>,
    /// Explorations made (`explore`, `find_best`, `auto_schedule`).
    pub explores: Vec<crate::values::Explore<'db>>,
}

impl<'db> Eval<'db> {
    /// The extent of loop variable `v`, innermost first, when it is known.
    pub(crate) fn extent_of(&self, v: &str) -> Option<u64> {
        self.extents
            .iter()
            .rev()
            .find(|(n, _)| n == v)
            .and_then(|(_, e)| *e)
    }

    pub fn new(db: &'db dyn salsa::Database, item: Item<'db>) -> Eval<'db> {
        let scope = module_scope(db, item.file(db));
        Eval {
            db,
            item,
            scope,
            position: scope.position(item),
            diags: Vec::new(),
            locals: Vec::new(),
            uses: Vec::new(),
            extents: Vec::new(),
            calls: Vec::new(),
            executes: Vec::new(),
            kernel_names: Vec::new(),
            explores: Vec::new(),
        }
    }

    /// Binds a local name at `def` (a parameter, a loop variable, an assignment's target).
    pub fn bind_local(&mut self, name: String, value: Value<'db>, def: TextRange) {
        self.use_local(def, def);
        self.locals.push(Local { name, value, def });
    }

    /// Records that the name at `range` refers to `symbol`.
    pub fn record(&mut self, range: TextRange, symbol: Symbol<'db>) {
        self.uses.push(Use::new(range, symbol));
    }

    /// Records that the name at `range` refers to this def's local bound at `def`.
    pub fn use_local(&mut self, range: TextRange, def: TextRange) {
        let item = self.item;
        self.record(range, Symbol::Local { item, def });
    }

    pub fn span(&self, range: TextRange) -> Span<'db> {
        Span {
            item: self.item,
            range,
        }
    }

    pub fn span_of(&self, node: &impl AstNode) -> Span<'db> {
        self.span(node.syntax().text_range())
    }

    pub fn error(&mut self, code: Code, range: TextRange, message: impl Into<String>) {
        let span = self.span(range);
        self.diags.push(Diag::new(code, span, message));
    }

    pub fn push(&mut self, diag: Diag<'db>) {
        self.diags.push(diag);
    }

    /// Resolves a name: locals, then module-level bindings made before this item, then the
    /// `pto_wsp` vocabulary.
    pub fn resolve(&mut self, name: &str, range: TextRange) -> Value<'db> {
        if let Some(l) = self.locals.iter().rev().find(|l| l.name == name) {
            let (def, value) = (l.def, l.value.clone());
            self.use_local(range, def);
            return value;
        }
        if let Some(b) = self.scope.lookup(name) {
            self.record(range, Symbol::Item(b.item));
            if (b.index as usize) < self.position {
                let value = item_value(self.db, b.item).value.clone();
                if matches!(value, Value::Space(_)) {
                    return self.updated_space(name, b.index, value);
                }
                return value;
            }
            if b.item != self.item {
                let def = Span {
                    item: b.item,
                    range: name_range(self.db, b.item).unwrap_or_default(),
                };
                let d = Diag::new(
                    Code::UnknownName,
                    self.span(range),
                    format!(
                        "`{name}` is used before it is defined; move its definition above this use"
                    ),
                )
                .with_related(def, format!("`{name}` is defined here"));
                self.push(d);
                return Value::Unknown;
            }
        }
        if let Some(b) = Builtin::lookup(name) {
            if b.is_module()
                && self
                    .scope
                    .import_of(b)
                    .is_none_or(|i| self.scope.position(i) >= self.position)
            {
                self.error(
                    Code::UnknownName,
                    range,
                    format!("`{name}` is not imported; add `import {name}` above this use"),
                );
                return Value::Unknown;
            }
            return Value::Builtin(b);
        }
        let locals: Vec<&str> = self.locals.iter().map(|l| l.name.as_str()).collect();
        let candidates = locals
            .into_iter()
            .chain(
                self.scope
                    .names_near(name_index(self.db, self.item.file(self.db)), name),
            )
            .chain(Builtin::ALL.iter().map(|b| b.name()));
        let mut d = Diag::new(
            Code::UnknownName,
            self.span(range),
            format!("unknown name `{name}`"),
        );
        if let Some(best) = suggest(name, candidates) {
            d.message.push_str(&format!("; did you mean `{best}`?"));
            let span = self.span(range);
            d = d.with_guess(
                format!("replace with `{best}`"),
                vec![(span, best.to_string())],
            );
        }
        self.push(d);
        Value::Unknown
    }
}

impl<'db> Eval<'db> {
    /// A search space as the statements after its binding and before this item left it.
    fn updated_space(&self, name: &str, bound: u32, value: Value<'db>) -> Value<'db> {
        let file = self.item.file(self.db);
        let updates = crate::names::space_updates(self.db, file);
        let at = updates.partition_point(|(n, p)| (&**n, *p) < (name, self.position as u32));
        match at.checked_sub(1).map(|i| &updates[i]) {
            Some((n, p)) if &**n == name && *p > bound => {
                let item = crate::items::module_items(self.db, file)[*p as usize];
                item_value(self.db, item).value.clone()
            }
            _ => value,
        }
    }
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Python's `range(*bounds)` over integers.
pub(crate) struct IntRange {
    pub start: i64,
    pub step: i64,
    /// `len(range(...))`, 0 for an empty range.
    pub len: i128,
}

impl IntRange {
    /// `(stop)` or `(start, stop[, step])` with a step other than 0; else `None`.
    pub(crate) fn of(bounds: &[i64]) -> Option<IntRange> {
        let (start, stop, step) = match *bounds {
            [stop] => (0, stop, 1),
            [start, stop] => (start, stop, 1),
            [start, stop, step] if step != 0 => (start, stop, step),
            _ => return None,
        };
        let span = i128::from(stop) - i128::from(start);
        let step_len = i128::from(step).abs();
        let len = if span != 0 && (span > 0) == (step > 0) {
            (span.abs() + step_len - 1) / step_len
        } else {
            0
        };
        Some(IntRange { start, step, len })
    }

    /// Element `t` (< `len`): it lies between start and stop, so fits, where the product
    /// may not.
    pub(crate) fn at(&self, t: i128) -> i64 {
        (i128::from(self.start) + i128::from(self.step) * t) as i64
    }
}

/// Where a statement is reported when it is wrong as a whole: a compound statement (`for`,
/// `while`, `with`, `if`, ...) by its header, up to its colon, never the body after it.
pub(crate) fn statement_range(node: &SyntaxNode) -> wsp_syntax::TextRange {
    let range = node.text_range();
    let has_block = node.children().any(|c| c.kind() == SyntaxKind::BLOCK);
    let colon = node
        .children_with_tokens()
        .filter_map(|e| e.into_token())
        .find(|t| t.kind() == SyntaxKind::COLON);
    match colon {
        Some(c) if has_block => wsp_syntax::TextRange::new(range.start(), c.text_range().end()),
        _ => range,
    }
}

/// "a list comprehension", for WSP002 messages.
pub(crate) fn describe_syntax(node: &SyntaxNode) -> String {
    use SyntaxKind as K;
    match node.kind() {
        K::LIST_COMP => "a list comprehension",
        K::SET_COMP => "a set comprehension",
        K::DICT_COMP => "a dict comprehension",
        K::GENERATOR_EXPR => "a generator expression",
        K::DICT_EXPR => "a dict display",
        K::SET_EXPR => "a set display",
        K::NAMED_EXPR => "`:=`",
        K::YIELD_EXPR => "`yield`",
        K::AWAIT_EXPR => "`await`",
        K::STARRED_EXPR => "a starred expression",
        K::COND_EXPR => "a conditional expression",
        K::LAMBDA_EXPR => "`lambda` here",
        K::SLICE => "a slice here",
        K::CLASS_DEF => "a class definition",
        K::IF_STMT => "an `if` statement",
        K::WHILE_STMT => "a `while` loop",
        K::TRY_STMT => "a `try` statement",
        K::MATCH_STMT => "a `match` statement",
        K::RETURN_STMT => "`return`",
        K::GLOBAL_STMT => "`global`",
        K::NONLOCAL_STMT => "`nonlocal`",
        K::DEL_STMT => "`del`",
        K::ASSERT_STMT => "`assert`",
        K::RAISE_STMT => "`raise`",
        K::BREAK_STMT => "`break`",
        K::CONTINUE_STMT => "`continue`",
        K::AUG_ASSIGN_STMT => "an augmented assignment",
        K::ANN_ASSIGN_STMT => "an annotated assignment",
        K::FUNCTION_DEF => "a `def` without `@kernel` or `@workload`",
        _ => "this construct",
    }
    .to_string()
}
