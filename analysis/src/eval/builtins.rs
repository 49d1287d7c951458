//! Builtin constructors: calls of the names `pto_wsp` exports and of their members.

use super::Eval;
use super::bind::Args;
use super::expr::num;
use super::tensors::axis;
use wsp_syntax::ast::{self, AstNode, Expr};

use crate::diagnostics::Code;
use crate::values::{
    AxisKind, Channel, Composite, DimLayout, F64, Init, Layout, Policy, Schedule, Value, Window,
    WindowMode,
};
use crate::vocabulary::Builtin;
use wsp_ir::ScalarOp;

impl<'db> Eval<'db> {
    pub(crate) fn builtin_call(&mut self, b: Builtin, c: &ast::CallExpr) -> Value<'db> {
        self.builtin_call_inner(b, c).unwrap_or(Value::Unknown)
    }

    /// The value of a call of a builtin, by the builtin; `None` after an error.
    pub(crate) fn builtin_call_inner(
        &mut self,
        b: Builtin,
        c: &ast::CallExpr,
    ) -> Option<Value<'db>> {
        match b {
            Builtin::Tensor => self.tensor(c),
            Builtin::Dense | Builtin::DenseDyn => self.dense_axis(b, c),
            Builtin::Ragged => self.ragged(c),
            Builtin::Sparse => self.sparse(c),
            Builtin::Channel => self.channel(b, c),
            Builtin::Event => self.event(b, c),
            Builtin::Zeros | Builtin::Ones | Builtin::Arange => self.constant_init(b, c),
            Builtin::Full => self.full_init(b, c),
            Builtin::Randn => self.randn_init(b, c),
            Builtin::LoadNpy => self.load_npy_init(b, c),
            Builtin::Relayout
            | Builtin::Allreduce
            | Builtin::Allgather
            | Builtin::ReduceScatter => self.collective(b, c),
            Builtin::TensorLayout => self.tensor_layout(b, c),
            Builtin::MemLayout => self.mem_layout(b, None, c),
            Builtin::TensorShard => self.tensor_shard(b, c),
            Builtin::TensorReplicate => self.tensor_replicate(b, c),
            Builtin::TaskWindow => self.task_window(b, c),
            Builtin::Deps => self.deps(b, c),
            Builtin::Sequential | Builtin::Combine => self.composite(b, c),
            Builtin::Print => self.print(c),
            Builtin::Len => self.len_call(c),
            Builtin::Open => {
                self.error(
                    Code::OutsideSubset,
                    c.syntax().text_range(),
                    "`open` is supported only as `with open(PATH, \"w\") as f:` whose body is `json.dump(value, f)`",
                );
                None
            }
            Builtin::SaveNpy => self.save_npy(b, c),
            Builtin::Min | Builtin::Max => self.min_max(b, c),
            Builtin::SlotU64 | Builtin::SlotI64 => self.slot_value(b, c),
            Builtin::SymbolU64 | Builtin::Symbol => self.symbol_value(b, c),
            Builtin::AxisVar => self.axis_var(b, c),
            Builtin::Float => self.float_call(c),
            Builtin::Int => self.int_call(c),
            Builtin::Process => self.process(b, c),
            // The original's module-level workloads of one statement, composed with
            // `sequential(...)`: walked as the statement (`workloads::walker`).
            Builtin::Task | Builtin::SlotLoadU64 => Some(self.statement_workload(b, c, Vec::new())),
            Builtin::WorkloadNode => self.workload_node(c),
            Builtin::Cond => self.cond(b, c),
            Builtin::Connect => self.connect(b, c),
            Builtin::Replicate => self.replicate(b, c),
            Builtin::SearchSpace => self.search_space(c),
            Builtin::ScheduleConfig => self.schedule_config(c),
            Builtin::AutoScheduler => self.auto_scheduler(c),
            Builtin::AutoSchedule => self.auto_schedule(c),
            _ => {
                let range = c.syntax().text_range();
                self.error(
                    Code::WrongKind,
                    c.callee().map_or(range, |e| e.syntax().text_range()),
                    format!("`{}` is not called here: {}", b.name(), b.doc()),
                );
                None
            }
        }
    }

    /// `Dense(n)` and `DenseDyn(n)`: an axis of a positive size.
    fn dense_axis(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let args = self.bind_builtin(c, b)?;
        let (v, r) = args.get(0)?.clone();
        // A DenseDyn's size is a default the run may rebind: 0 (the original's `DenseDyn(0)`)
        // runs no iterations until it is bound.
        let (n, kind) = if b == Builtin::Dense {
            (self.positive(&v, r, "an axis size")?, AxisKind::Dense)
        } else {
            let n = self.non_negative(&v, r, "a DenseDyn size")?;
            (n as u64, AxisKind::DenseDyn)
        };
        Some(Value::Axis(Box::new(axis(self.span(range), kind, n))))
    }

    /// `Channel(label, depth=1)`: a channel holding up to `depth` tasks.
    fn channel(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let args = self.bind_builtin(c, b)?;
        // Unnamed, it takes the name of the variable it is bound to (`name_value`).
        let label = match args.get(0) {
            Some(_) => self.string_arg(&args, 0)?,
            None => String::new(),
        };
        let depth = match args.get(1) {
            Some((v, r)) => self.non_negative(&v.clone(), *r, "a channel depth")? as u64,
            None => 1,
        };
        Some(Value::Channel(Box::new(Channel {
            name: String::new(),
            label,
            depth,
            def: self.span(range),
        })))
    }

    /// `Event(label)`: a channel of depth 0.
    fn event(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let args = self.bind_builtin(c, b)?;
        let label = match args.get(0) {
            Some(_) => self.string_arg(&args, 0)?,
            None => String::new(),
        };
        Some(Value::Channel(Box::new(Channel {
            name: String::new(),
            label,
            depth: 0,
            def: self.span(range),
        })))
    }

    /// `zeros()`, `ones()` and `arange()`: tensor initialisers without arguments.
    fn constant_init(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        self.bind_builtin(c, b)?;
        Some(Value::Init(match b {
            Builtin::Zeros => Init::Zeros,
            Builtin::Ones => Init::Ones,
            _ => Init::Arange,
        }))
    }

    /// `slot_u64(i)`: the value a `slot_load_u64(i, ...)` put in slot `i`, read when the
    /// predicate (`with P.when(slot_u64(0) <= 2048):`) is decided at run time.
    fn slot_value(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, b)?;
        let (v, r) = args.get(0)?.clone();
        let i = self.non_negative(&v, r, "a slot number")?;
        Some(Value::Runtime(Box::new(wsp_ir::ScalarExpr::Slot(i))))
    }

    /// A module-level workload made of one statement (`task(...)`, `slot_load_u64(...)`,
    /// `cond(...)`): a call of the item that holds it, whose walker reads the call at `site`.
    fn statement_workload(
        &mut self,
        b: Builtin,
        c: &ast::CallExpr,
        mut args: Vec<Value<'db>>,
    ) -> Value<'db> {
        args.insert(0, Value::Builtin(b));
        self.call_schedule(self.item, args, c.syntax().text_range())
    }

    /// The original's `Workload("task", kernel=..., params=..., resources=...)`: a task, as
    /// `task(...)` is. Its other kinds are built by this language's own forms.
    fn workload_node(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        // Only the kind is read here: the walker reads the rest as it reads `task(...)`'s.
        let params = [
            ("kind", false),
            ("kernel", false),
            ("params", false),
            ("resources", false),
        ];
        let bound = self.bind_syntax(c, "`Workload`", &params, &String::new);
        let kind = bound.slots[0].clone().filter(|_| bound.ok)?;
        let r = kind.syntax().text_range();
        match self.expr(&kind) {
            Value::Str(k) if k == "task" => {
                Some(self.statement_workload(Builtin::Task, c, Vec::new()))
            }
            Value::Unknown => None,
            v => {
                let kind = match v {
                    Value::Str(s) => format!("`\"{s}\"`"),
                    v => v.describe(),
                };
                let message = format!(
                    "`Workload(...)` here builds a task, `Workload(\"task\", kernel=k, params=[i], resources={{...}})`, not {kind}: write a `@workload`, `sequential(...)`, `combine(...)` or `cond(...)` for the others"
                );
                self.error(Code::WrongKind, r, message);
                None
            }
        }
    }

    /// `cond(predicate, then, otherwise)`: each branch one workload call (a task, a slot load,
    /// a `cond`, or a workload's call).
    fn cond(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, b)?;
        let (pred, pr) = args.get(0)?.clone();
        let predicate = match pred {
            Value::Bool(_) | Value::Int(_) | Value::Runtime(_) | Value::Index(_) => pred,
            Value::Unknown => return None,
            v => {
                let message = format!(
                    "a `cond` predicate is an integer expression read when it runs (`slot_u64(0) != 0`), not {}",
                    v.describe()
                );
                self.error(Code::WrongKind, pr, message);
                return None;
            }
        };
        let mut branches = Vec::new();
        for i in 1..3 {
            let (v, r) = args.get(i)?.clone();
            match v {
                Value::Schedule(s)
                    if matches!(s.root, Composite::Call(_)) && s.directives.is_empty() =>
                {
                    branches.push(Value::Schedule(s))
                }
                Value::Unknown => return None,
                v => {
                    let message = format!(
                        "a `cond` branch is one workload: a task, a slot load, a `cond` or a workload's call, not {}",
                        v.describe()
                    );
                    self.error(Code::WrongKind, r, message);
                    return None;
                }
            }
        }
        let mut all = vec![predicate];
        all.extend(branches);
        Some(self.statement_workload(b, c, all))
    }

    /// `symbol_u64("name")`: a named run-time symbol.
    fn symbol_value(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, b)?;
        let name = self.string_arg(&args, 0)?;
        Some(Value::Runtime(Box::new(wsp_ir::ScalarExpr::Symbol(name))))
    }

    /// `axis("b")`: the loop variable `b`, as if written by its name.
    fn axis_var(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, b)?;
        let name = self.string_arg(&args, 0)?;
        let r = args.get(0)?.1;
        if !self.locals.iter().any(|l| l.name == name) {
            self.error(
                Code::UnknownName,
                r,
                format!("no loop variable `{name}` here: `axis(\"{name}\")` reads a variable of an enclosing `for ... in P(...)`"),
            );
            return None;
        }
        Some(self.resolve(&name, r))
    }

    /// `full(value)`: every element the number `value`.
    fn full_init(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, b)?;
        let (v, r) = args.get(0)?.clone();
        match v {
            Value::Int(_) | Value::Float(_) => Some(Value::Init(Init::Full(F64(num(&v))))),
            v => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!("`full` takes a number, not {}", v.describe()),
                );
                None
            }
        }
    }

    /// `randn(seed=0, std=1.0)`: normal samples from an integer seed with a positive deviation.
    fn randn_init(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, b)?;
        let seed = match args.get(0) {
            Some((Value::Int(s), _)) => *s,
            Some((v, r)) => {
                let (v, r) = (v.clone(), *r);
                if !matches!(v, Value::Unknown) {
                    self.error(
                        Code::WrongKind,
                        r,
                        format!("`seed` must be an integer, not {}", v.describe()),
                    );
                }
                return None;
            }
            None => 0,
        };
        let std = match args.get(1) {
            Some((v @ (Value::Int(_) | Value::Float(_)), _)) if num(v) > 0.0 => num(v),
            Some((v, r)) => {
                let (v, r) = (v.clone(), *r);
                if !matches!(v, Value::Unknown) {
                    self.error(
                        Code::WrongKind,
                        r,
                        format!("`std` must be a positive number, not {}", v.describe()),
                    );
                }
                return None;
            }
            None => 1.0,
        };
        Some(Value::Init(Init::Randn {
            seed,
            std: F64(std),
        }))
    }

    /// `load_npy(path)`: the elements of a `.npy` file.
    fn load_npy_init(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, b)?;
        let path = self.string_arg(&args, 0)?;
        Some(Value::Init(Init::LoadNpy(path)))
    }

    /// `TensorLayout([...])`: one dimension per `TensorShard`/`TensorReplicate` in the list.
    fn tensor_layout(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, b)?;
        let (v, r) = args.get(0)?.clone();
        let dims = match v {
            Value::List(items) | Value::Tuple(items) => items,
            Value::Unknown => return Some(Value::Unknown),
            v => {
                self.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "`TensorLayout` takes a list of TensorShard/TensorReplicate, not {}",
                        v.describe()
                    ),
                );
                return Some(Value::Unknown);
            }
        };
        let mut out = Vec::new();
        for d in dims {
            match d {
                Value::Layout(l) if l.dims.len() == 1 => out.push(l.dims[0]),
                Value::Unknown => return Some(Value::Unknown),
                d => {
                    self.error(
                        Code::WrongKind,
                        r,
                        format!(
                            "a layout dimension is TensorShard(m) or TensorReplicate(), not {}",
                            d.describe()
                        ),
                    );
                    return Some(Value::Unknown);
                }
            }
        }
        let mem = match args.get(1) {
            None | Some((Value::None, _)) => None,
            Some((Value::MemLayout(m), r)) if m.len() != out.len() => {
                let message = format!(
                    "the memory layout has {} strides but the layout {} dimensions",
                    m.len(),
                    out.len()
                );
                self.error(Code::LayoutConflict, *r, message);
                return None;
            }
            Some((Value::MemLayout(m), _)) => Some(m.clone()),
            Some((Value::Unknown, _)) => return None,
            Some((v, r)) => {
                let message = format!("`mem` is a MemLayout, not {}", v.describe());
                self.error(Code::WrongKind, *r, message);
                return None;
            }
        };
        Some(Value::Layout(Layout { dims: out, mem }))
    }

    /// `MemLayout.row_major(shape)`, `.col_major(shape)`, `MemLayout(strides=...)`: element
    /// strides, as the original computes them.
    pub(crate) fn mem_layout(
        &mut self,
        b: Builtin,
        m: Option<&'static str>,
        c: &ast::CallExpr,
    ) -> Option<Value<'db>> {
        let args = match m {
            Some(m) => self.bind_member(c, b, m)?,
            None => self.bind_builtin(c, b)?,
        };
        let (v, r) = args.get(0)?.clone();
        let dims = self.shape(&v, r)?;
        Some(Value::MemLayout(match m {
            None => dims,
            Some(order) => {
                let mut strides = vec![0u64; dims.len()];
                let mut stride = 1u64;
                let positions: Vec<usize> = if order == "row_major" {
                    (0..dims.len()).rev().collect()
                } else {
                    (0..dims.len()).collect()
                };
                for d in positions {
                    strides[d] = stride;
                    stride = stride.saturating_mul(dims[d]);
                }
                strides
            }
        }))
    }

    /// `TensorShard(m)`: one dimension sharded over mesh axis `m`.
    fn tensor_shard(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, b)?;
        let (v, r) = args.get(0)?.clone();
        let m = self.non_negative(&v, r, "a mesh axis")?;
        Some(Value::Layout(Layout {
            dims: vec![DimLayout::Shard(m as u32)],
            mem: None,
        }))
    }

    /// `TensorReplicate()`: one replicated dimension.
    fn tensor_replicate(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        self.bind_builtin(c, b)?;
        Some(Value::Layout(Layout {
            dims: vec![DimLayout::Replicate],
            mem: None,
        }))
    }

    /// `TaskWindow(size, "tasks", mode)`: at least one task, counted in tasks, with a
    /// `WindowMode` (stall by default).
    fn task_window(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let args = self.bind_builtin(c, b)?;
        let (v, r) = args.get(0)?.clone();
        let size = match v {
            Value::Int(n) if n > 0 => n,
            Value::Unknown => return None,
            v => {
                self.error(
                    Code::ScheduleArgument,
                    r,
                    format!(
                        "a task window holds at least one task; the size is {}",
                        v.describe()
                    ),
                );
                return None;
            }
        };
        let unit = match args.get(1) {
            Some(_) => self.string_arg(&args, 1)?,
            None => "tasks".to_string(),
        };
        if unit != "tasks" {
            let r = args.get(1).map_or(range, |a| a.1);
            self.error(
                Code::ScheduleArgument,
                r,
                format!("the task window's unit is \"tasks\", not \"{unit}\""),
            );
            return None;
        }
        let mode = self.window_mode(&args)?;
        Some(Value::Window(Box::new(Window { size, unit, mode })))
    }

    /// A task window's third argument: a `WindowMode` member, or stall when omitted.
    fn window_mode(&mut self, args: &Args<'db>) -> Option<WindowMode> {
        match args.get(2) {
            Some((Value::Member(Builtin::WindowMode, m), _)) => WindowMode::MEMBERS
                .iter()
                .find(|(n, _)| n == m)
                .map(|(_, w)| *w),
            Some((Value::Unknown, _)) => None,
            Some((v, r)) => {
                let (v, r) = (v.clone(), *r);
                self.error(
                    Code::ScheduleArgument,
                    r,
                    format!("the window mode is a `WindowMode`, not {}", v.describe()),
                );
                None
            }
            None => Some(WindowMode::Stall),
        }
    }

    /// `Deps(mode)`: the task graph's dependency policy, a `DepsMode` (exact tensor maps by
    /// default).
    fn deps(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, b)?;
        let mode = match args.get(0) {
            Some((Value::Member(Builtin::DepsMode, m), _)) => m.to_string(),
            Some((Value::Unknown, _)) => return None,
            Some((v, r)) => {
                let (v, r) = (v.clone(), *r);
                self.error(
                    Code::ScheduleArgument,
                    r,
                    format!("`Deps(mode=...)` takes a `DepsMode`, not {}", v.describe()),
                );
                return None;
            }
            None => "tensor_map_exact".to_string(),
        };
        Some(Value::Policy(Box::new(Policy::TaskGraph("Deps", mode))))
    }

    /// `sequential(...)` and `combine(...)`: a schedule over one or more workload calls
    /// without directives.
    fn composite(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let mut parts = Vec::new();
        let mut ok = true;
        for arg in c.args() {
            let v = arg.value().map_or(Value::Unknown, |e| self.expr(&e));
            match v {
                Value::Schedule(s) if s.directives.is_empty() => parts.push(s.root),
                // The spec's `combine(rms_norm, attention, ffn)`: a workload without parameters
                // stands for its one call.
                Value::Workload(w) if super::workload_params(self.db, w).0.is_empty() => {
                    let range = arg.syntax().text_range();
                    if let Value::Schedule(s) = self.call_schedule(w, Vec::new(), range) {
                        parts.push(s.root);
                    }
                }
                Value::Unknown => ok = false,
                v => {
                    let also = if matches!(v, Value::Workload(_)) {
                        " with parameters: call it with its arguments"
                    } else {
                        ""
                    };
                    self.error(
                        Code::WrongKind,
                        arg.syntax().text_range(),
                        format!(
                            "`{}` takes workload calls, not {}{also}",
                            b.name(),
                            v.describe()
                        ),
                    );
                    ok = false;
                }
            }
        }
        if parts.is_empty() && ok {
            self.error(
                Code::WrongArguments,
                range,
                format!("`{}` needs at least one workload", b.name()),
            );
            return Some(Value::Unknown);
        }
        let root = if b == Builtin::Sequential {
            Composite::Sequential(parts)
        } else {
            Composite::Combine(parts)
        };
        Some(if ok {
            Value::Schedule(Box::new(Schedule {
                root,
                directives: Vec::new(),
                target: None,
                explored: None,
            }))
        } else {
            Value::Unknown
        })
    }

    /// `print(...)`: evaluates its arguments (for their diagnostics and uses).
    fn print(&mut self, c: &ast::CallExpr) -> Option<Value<'db>> {
        for arg in c.args() {
            match arg.value() {
                // Fields of `program.stats` are read when the statement runs.
                Some(Expr::Literal(l)) if is_fstring(&l) => {
                    self.fstring(&l, true);
                }
                Some(v) => {
                    self.expr(&v);
                }
                None => {}
            }
        }
        Some(Value::None)
    }

    /// `save_npy(tensor, path)`: a tensor and a path string.
    fn save_npy(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_builtin(c, b)?;
        let (t, r) = args.get(0)?.clone();
        if !matches!(t, Value::Tensor(_) | Value::Unknown) {
            self.error(
                Code::WrongKind,
                r,
                format!("`save_npy` saves a tensor, not {}", t.describe()),
            );
        }
        self.string_arg(&args, 1)?;
        Some(Value::None)
    }

    /// `min(...)` and `max(...)`: folded over the arguments (integers now, other scalars as
    /// scalar expressions).
    fn min_max(&mut self, b: Builtin, c: &ast::CallExpr) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        let vals: Vec<Value<'db>> = c
            .args()
            .filter_map(|a| a.value())
            .map(|v| self.expr(&v))
            .collect();
        let op = if b == Builtin::Min {
            ScalarOp::Min
        } else {
            ScalarOp::Max
        };
        let mut it = vals.into_iter();
        let first = it.next()?;
        Some(it.fold(first, |acc, v| match (&acc, &v) {
            (Value::Int(a), Value::Int(b)) => Value::Int(if op == ScalarOp::Min {
                *a.min(b)
            } else {
                *a.max(b)
            }),
            _ => self.scalar_binary(op, acc, v, range),
        }))
    }

    pub(crate) fn member_call(
        &mut self,
        b: Builtin,
        m: &'static str,
        c: &ast::CallExpr,
    ) -> Value<'db> {
        self.member_call_inner(b, m, c).unwrap_or(Value::Unknown)
    }

    /// The value of a call of a builtin's member (`DispatchPolicy.round_robin(4)`), by the
    /// member; `None` after an error.
    pub(crate) fn member_call_inner(
        &mut self,
        b: Builtin,
        m: &'static str,
        c: &ast::CallExpr,
    ) -> Option<Value<'db>> {
        let range = c.syntax().text_range();
        match (b, m) {
            (Builtin::DispatchPolicy, "round_robin") => self.round_robin(b, m, c),
            (Builtin::DispatchPolicy, "affinity" | "hash" | "dispatch_by") => {
                self.keyed_dispatch(b, m, c)
            }
            (Builtin::DispatchPolicy, "work_steal") => {
                self.bind_member(c, b, m)?;
                Some(Value::Policy(Box::new(Policy::WorkSteal)))
            }
            (Builtin::TimingPolicy, "batched" | "interleaved") => self.counted_timing(b, m, c),
            (Builtin::TimingPolicy, "rate_limit") => self.rate_limit(b, m, c),
            (
                Builtin::ReadyPolicy | Builtin::Pools | Builtin::StartPolicy | Builtin::TracePolicy,
                _,
            ) => self.task_graph_policy(b, m, c),
            (Builtin::TensorLayout, "default" | "replicated") => self.default_layout(b, m, c),
            (Builtin::TensorLayout, "sharded") => self.sharded_layout(b, m, c),
            (Builtin::MemLayout, _) => self.mem_layout(b, Some(m), c),
            (Builtin::Math, _) => self.math_call(m, c),
            (Builtin::Json, _) => {
                self.error(
                    Code::OutsideSubset,
                    range,
                    "`json.dump(value, f)` is supported only as the body of `with open(PATH, \"w\") as f:`",
                );
                None
            }
            (Builtin::P, _) => {
                self.error(
                    Code::WrongKind,
                    range,
                    format!("`P.{m}(...)` is a loop or block inside a workload body"),
                );
                None
            }
            _ => {
                self.error(
                    Code::WrongKind,
                    range,
                    format!("`{}.{m}` is not callable", b.name()),
                );
                None
            }
        }
    }

    /// `DispatchPolicy.round_robin(n)`: over at least one AICPU.
    fn round_robin(
        &mut self,
        b: Builtin,
        m: &'static str,
        c: &ast::CallExpr,
    ) -> Option<Value<'db>> {
        let args = self.bind_member(c, b, m)?;
        let (v, r) = args.get(0)?.clone();
        match v {
            Value::Int(n) if n > 0 => Some(Value::Policy(Box::new(Policy::RoundRobin(n)))),
            Value::Unknown => None,
            v => {
                self.error(
                    Code::ScheduleArgument,
                    r,
                    format!(
                        "`round_robin` needs at least one AICPU, not {}",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    /// `DispatchPolicy.affinity(key)`, `.hash(key)` and `.dispatch_by(key)`: dispatch by a task
    /// key.
    fn keyed_dispatch(
        &mut self,
        b: Builtin,
        m: &'static str,
        c: &ast::CallExpr,
    ) -> Option<Value<'db>> {
        let args = self.bind_member(c, b, m)?;
        let key = self.key_arg(&args, 0)?;
        let n = match args.get(1) {
            Some((v, r)) => {
                let (v, r) = (v.clone(), *r);
                self.non_negative(&v, r, "`num_aicpus` (0: every AICPU)")?
            }
            None => 0,
        };
        Some(Value::Policy(Box::new(match m {
            "affinity" => Policy::Affinity(key, n),
            "hash" => Policy::Hash(key, n),
            _ => Policy::DispatchBy(key, n),
        })))
    }

    /// `TimingPolicy.batched(n)` and `.interleaved(n)`: a positive count.
    fn counted_timing(
        &mut self,
        b: Builtin,
        m: &'static str,
        c: &ast::CallExpr,
    ) -> Option<Value<'db>> {
        // The tutorial's `interleaved(priority=1)` has no meaning the original framework's
        // code or the spec gives it (both take a count).
        if let Some(k) = c
            .args()
            .filter_map(|a| a.keyword())
            .find(|k| m == "interleaved" && k.text() == "priority")
        {
            self.error(
                Code::WrongArguments,
                k.text_range(),
                "`TimingPolicy.interleaved` has no `priority`: it takes how many tasks a stream issues in its turn, `interleaved(n)` (the spec writes `interleaved(streams)`); the tutorial's `interleaved(priority=1)` means nothing the original framework does",
            );
            return None;
        }
        let args = self.bind_member(c, b, m)?;
        let (v, r) = args.get(0)?.clone();
        match v {
            Value::Int(n) if n > 0 => Some(Value::Policy(if m == "batched" {
                Box::new(Policy::Batched(n))
            } else {
                Box::new(Policy::Interleaved(n))
            })),
            Value::Unknown => None,
            v => {
                self.error(
                    Code::ScheduleArgument,
                    r,
                    format!("`{m}` needs a positive count, not {}", v.describe()),
                );
                None
            }
        }
    }

    /// `TimingPolicy.rate_limit(rate)`: a positive rate.
    fn rate_limit(&mut self, b: Builtin, m: &'static str, c: &ast::CallExpr) -> Option<Value<'db>> {
        let args = self.bind_member(c, b, m)?;
        let (v, r) = args.get(0)?.clone();
        match v {
            Value::Int(_) | Value::Float(_) if num(&v) > 0.0 => {
                Some(Value::Policy(Box::new(Policy::RateLimit(F64(num(&v))))))
            }
            Value::Unknown => None,
            v => {
                self.error(
                    Code::ScheduleArgument,
                    r,
                    format!("`rate_limit` needs a positive rate, not {}", v.describe()),
                );
                None
            }
        }
    }

    /// A `ReadyPolicy`, `Pools`, `StartPolicy` or `TracePolicy` member: a task-graph policy
    /// named by the member. Their arguments are checked (a `cost_fn` as a key) and then not
    /// used: the applicability table says what each target does instead.
    fn task_graph_policy(
        &mut self,
        b: Builtin,
        m: &'static str,
        c: &ast::CallExpr,
    ) -> Option<Value<'db>> {
        let args = self.bind_member(c, b, m)?;
        match (b, m) {
            (Builtin::StartPolicy, "threshold") => {
                let (v, r) = args.get(0)?.clone();
                self.positive(&v, r, "a task count")?;
            }
            (Builtin::TracePolicy, "cycles") if args.get(0).is_some() => {
                self.key_arg(&args, 0)?;
            }
            _ => {}
        }
        Some(Value::Policy(Box::new(Policy::TaskGraph(
            b.name(),
            m.to_string(),
        ))))
    }

    /// `TensorLayout.default(rank)`: every dimension replicated.
    fn default_layout(
        &mut self,
        b: Builtin,
        m: &'static str,
        c: &ast::CallExpr,
    ) -> Option<Value<'db>> {
        let args = self.bind_member(c, b, m)?;
        let (v, r) = args.get(0)?.clone();
        let rank = self.positive(&v, r, "a rank")?;
        Some(Value::Layout(Layout::replicated(rank as usize)))
    }

    /// `TensorLayout.sharded(dim, rank, mesh_axis=0)`: dimension `dim` (within the rank)
    /// sharded over the mesh axis, the rest replicated.
    fn sharded_layout(
        &mut self,
        b: Builtin,
        m: &'static str,
        c: &ast::CallExpr,
    ) -> Option<Value<'db>> {
        let args = self.bind_member(c, b, m)?;
        let (dv, dr) = args.get(0)?.clone();
        let (rv, rr) = args.get(1)?.clone();
        let dim = self.non_negative(&dv, dr, "a dimension")?;
        let rank = self.positive(&rv, rr, "a rank")?;
        let mesh = match args.get(2) {
            Some((v, r)) => self.non_negative(&v.clone(), *r, "a mesh axis")?,
            None => 0,
        };
        if dim as u64 >= rank {
            self.error(
                Code::IndexOutOfRange,
                dr,
                format!("dimension {dim} is out of range for rank {rank}"),
            );
            return None;
        }
        let mut l = Layout::replicated(rank as usize);
        l.dims[dim as usize] = DimLayout::Shard(mesh as u32);
        Some(Value::Layout(l))
    }
}

/// Whether a literal is an f-string.
pub(crate) fn is_fstring(l: &ast::Literal) -> bool {
    matches!(
        l.kind(),
        Some(wsp_syntax::ast::LiteralKind::String { fstring: true, .. })
    )
}
