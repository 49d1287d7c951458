//! The IR as readable text, for snapshots and `--emit ir`-style debugging. One line per
//! declaration, op, block or task; nesting by indentation.

use std::fmt::{self, Display, Formatter, Write};

use crate::Program;
use crate::kernel::{Kernel, KernelBody, Operand, ParamType, ValueType};
use crate::plan::{Axis, Composite, Init, IntSource, Node, TaskArg, Tensor, TensorOrigin};
use crate::schedule::{Directive, Dispatch, Timing};
use crate::types::shape_text;

impl Display for Program {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "program {} target {} (ir v{})",
            self.name,
            self.target.name(),
            self.version
        )?;
        for s in &self.symbols {
            writeln!(f, "symbol {} = {}", s.name, s.default)?;
        }
        for t in &self.tensors {
            writeln!(f, "{t}")?;
        }
        for a in &self.axes {
            writeln!(f, "{a}")?;
        }
        for c in &self.channels {
            writeln!(f, "channel {} {:?} depth {}", c.name, c.label, c.depth)?;
        }
        for k in &self.kernels {
            write!(f, "\n{k}")?;
        }
        for (i, w) in self.workloads.iter().enumerate() {
            writeln!(f, "\nworkload #{i} {}({})", w.name, w.args.join(", "))?;
            nodes(f, &w.body, 1)?;
        }
        writeln!(f, "\nroot {}", composite(&self.root))?;
        for d in &self.schedule {
            writeln!(f, "schedule {d}")?;
        }
        if let Some(id) = self.explored {
            writeln!(f, "schedule + the best configuration of exploration #{id}")?;
        }
        Ok(())
    }
}

impl Display for Tensor {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tensor {} {} {} layout {}",
            self.name,
            shape_text(&self.shape),
            self.dtype,
            self.layout
        )?;
        match (&self.origin, &self.init) {
            (TensorOrigin::Derived { op, source }, _) => write!(f, " = {op}({source})"),
            (TensorOrigin::View { base, dims }, _) => {
                let dims: Vec<String> = dims
                    .iter()
                    .map(|d| format!("{}*{}", d.step, d.base_dim))
                    .collect();
                write!(f, " = view({base}; {})", dims.join(", "))
            }
            (TensorOrigin::Declared, Some(i)) => write!(f, " init {i}"),
            (TensorOrigin::Declared, None) => f.write_str(" init zeros"),
            (TensorOrigin::Ring { kernel }, _) => write!(f, " = ring of {kernel}'s launch"),
        }
    }
}

impl Display for Init {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Init::Zeros => f.write_str("zeros"),
            Init::Ones => f.write_str("ones"),
            Init::Full(v) => write!(f, "full({})", v.0),
            Init::Arange => f.write_str("arange"),
            Init::Randn { seed, std } => write!(f, "randn(seed={seed}, std={})", std.0),
            Init::LoadNpy(p) => write!(f, "load_npy({p:?})"),
            Init::Permuted { of, shape, order } => {
                let order: Vec<String> = order.iter().map(u32::to_string).collect();
                write!(
                    f,
                    "{of} of {} stored in order ({})",
                    crate::types::shape_text(shape),
                    order.join(", ")
                )
            }
        }
    }
}

impl Display for IntSource {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            IntSource::List(l) => write!(f, "{l:?}"),
            IntSource::Tensor(t) => write!(f, "tensor {t}"),
        }
    }
}

impl Display for Axis {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "axis {} {} {}", self.name, self.kind.name(), self.size)?;
        for (what, src) in [
            ("lengths", &self.lengths),
            ("indptr", &self.indptr),
            ("indices", &self.indices),
        ] {
            if let Some(s) = src {
                write!(f, " {what} {s}")?;
            }
        }
        Ok(())
    }
}

impl Kernel {
    /// Each parameter as the kernel's text shows it: `x: In Tile[32x128 F16]`.
    pub fn param_texts(&self) -> Vec<String> {
        self.params
            .iter()
            .map(|p| format!("{}: {}", p.name, type_text(&p.ty)))
            .collect()
    }

    /// Each op as the kernel's text shows it (`%2 = mul(%0, %1) : Tile[32x128 F16]`); a
    /// `cpp_src` body has none.
    pub fn op_texts(&self) -> Vec<String> {
        let KernelBody::Ops(ops) = &self.body else {
            return Vec::new();
        };
        ops.iter()
            .enumerate()
            .map(|(i, op)| {
                let args: Vec<String> = op.args.iter().map(|a| a.to_string()).collect();
                let call = format!("{}({})", op.op, args.join(", "));
                match op.ty {
                    ValueType::Unit => call,
                    ValueType::Tile(t) => format!("%{i} = {call} : Tile{t}"),
                    ValueType::Scalar(d) => format!("%{i} = {call} : Scalar {d}"),
                }
            })
            .collect()
    }
}

/// A parameter's type as the kernel's text shows it: `In Tile[32x128 F16]`, `Scalar F32 = 1`.
pub fn type_text(ty: &ParamType) -> String {
    match ty {
        ParamType::Tile(d, t) => format!("{} Tile{t}", d.name()),
        ParamType::Scalar(d, default) => match default {
            Some(v) => format!("Scalar {d} = {}", v.0),
            None => format!("Scalar {d}"),
        },
        ParamType::Constexpr(default) => match default {
            Some(v) => format!("Constexpr = {}", v.0),
            None => "Constexpr".to_string(),
        },
    }
}

impl Display for Kernel {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(f, "kernel {}({})", self.name, self.param_texts().join(", "))?;
        match &self.body {
            KernelBody::Ops(_) => {
                for (i, op) in self.op_texts().iter().enumerate() {
                    let i = i as u32;
                    let around = |l: &&crate::kernel::Loop| l.first <= i && i < l.end;
                    // The loops that start here, outer first, each indented by those around it.
                    let depth = self.loops.iter().filter(around).count();
                    let starting = self.loops.iter().filter(|l| l.first == i && l.end > i);
                    for (d, l) in (depth - starting.clone().count()..).zip(starting) {
                        let stages = l.stages.map(|s| format!(" stages {s}")).unwrap_or_default();
                        let pad = "  ".repeat(d + 1);
                        writeln!(f, "{pad}for {} in 0..{}{stages}", l.var, l.trips)?;
                    }
                    writeln!(f, "{}{op}", "  ".repeat(depth + 1))?;
                }
            }
            KernelBody::Cpp {
                code,
                includes,
                first_line,
            } => {
                writeln!(f, "  cpp (from line {first_line}) includes {includes:?}")?;
                for line in code.lines() {
                    writeln!(f, "  | {line}")?;
                }
            }
        }
        Ok(())
    }
}

impl Display for Operand {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Value(v) => write!(f, "%{v}"),
            Operand::Param(p) => f.write_str(p),
            Operand::Number(n) => write!(f, "{}", n.0),
            Operand::DType(d) => write!(f, "{d}"),
            Operand::Shape(m, n) => write!(f, "({m}, {n})"),
            Operand::Index(a) => write!(f, "[{a}]"),
        }
    }
}

fn nodes(f: &mut Formatter<'_>, list: &[Node], depth: usize) -> fmt::Result {
    let pad = "  ".repeat(depth);
    for n in list {
        match n {
            Node::Loop {
                kind, vars, body, ..
            } => {
                let vars: Vec<String> = vars
                    .iter()
                    .map(|v| {
                        let mut s = format!("{} in ", v.name);
                        if v.axis.is_empty() {
                            s.push_str("range");
                        } else {
                            s.push_str(&v.axis);
                        }
                        if let Some(r) = &v.row {
                            let _ = write!(s, "[{r}]");
                        }
                        let _ = write!(s, " {}", v.axis_kind.name());
                        match v.extent {
                            Some(e) => {
                                let _ = write!(s, " x{e}");
                            }
                            None => s.push_str(" x?"),
                        }
                        s
                    })
                    .collect();
                writeln!(f, "{pad}loop {} {}", kind.name(), vars.join(", "))?;
                nodes(f, body, depth + 1)?;
            }
            Node::Conditional { branches } => {
                for (i, b) in branches.iter().enumerate() {
                    match (&b.predicate, i) {
                        (Some(p), 0) => writeln!(f, "{pad}when {p}")?,
                        (Some(p), _) => writeln!(f, "{pad}elif {p}")?,
                        (None, _) => writeln!(f, "{pad}otherwise")?,
                    }
                    nodes(f, &b.body, depth + 1)?;
                }
            }
            Node::Pipeline { stages } => {
                writeln!(f, "{pad}pipeline")?;
                nodes(f, stages, depth + 1)?;
            }
            Node::Consume { channel, var, body } => {
                writeln!(f, "{pad}consume {channel} as {var}")?;
                nodes(f, body, depth + 1)?;
            }
            Node::Task(t) => {
                let index: Vec<String> = t.index.iter().map(|i| i.to_string()).collect();
                let args: Vec<String> = t
                    .args
                    .iter()
                    .map(|a| match a {
                        TaskArg::Tile {
                            param,
                            direction,
                            view,
                        } => format!("{param}: {} {view}", direction.name()),
                        TaskArg::Scalar {
                            param,
                            symbol: Some(s),
                            ..
                        } => format!("{param}: Symbol({s:?})"),
                        TaskArg::Scalar { param, value, .. } => format!("{param}: {value}"),
                    })
                    .collect();
                writeln!(
                    f,
                    "{pad}task #{} {}[{}] fields ({}) ({})",
                    t.id,
                    t.kernel,
                    index.join(", "),
                    t.fields.join(", "),
                    args.join(", ")
                )?;
            }
            Node::Send { channel, task } => writeln!(f, "{pad}send {channel} task #{task}")?,
            Node::SlotLoad {
                slot,
                view,
                row,
                col,
            } => writeln!(f, "{pad}slot {slot} = {view}[{row}, {col}]")?,
        }
    }
    Ok(())
}

fn composite(c: &Composite) -> String {
    let list = |parts: &[Composite]| {
        let parts: Vec<String> = parts.iter().map(composite).collect();
        parts.join(", ")
    };
    match c {
        Composite::Call(i) => format!("#{i}"),
        Composite::Sequential(parts) => format!("sequential({})", list(parts)),
        Composite::Combine(parts) => format!("combine({})", list(parts)),
    }
}

/// A keyed dispatch's `num_aicpus`, shown when it limits the AICPUs.
fn count(n: u32) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(", num_aicpus={n}")
    }
}

impl Display for Directive {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Directive::Dispatch(d) => match d {
                Dispatch::RoundRobin(n) => write!(f, "dispatch round_robin({n})"),
                Dispatch::Affinity(k, n) => write!(f, "dispatch affinity({k}{})", count(*n)),
                Dispatch::Hash(k, n) => write!(f, "dispatch hash({k}{})", count(*n)),
                Dispatch::DispatchBy(k, n) => write!(f, "dispatch dispatch_by({k}{})", count(*n)),
                Dispatch::WorkSteal => write!(f, "dispatch work_steal"),
            },
            Directive::Streams(n) => write!(f, "streams {n}"),
            Directive::StreamBy(k) => write!(f, "stream_by {k}"),
            Directive::Timing(t) => match t {
                Timing::Immediate => write!(f, "timing immediate"),
                Timing::Batched(n) => write!(f, "timing batched({n})"),
                Timing::Interleaved(n) => write!(f, "timing interleaved({n})"),
                Timing::RateLimit(r) => write!(f, "timing rate_limit({r})"),
            },
            Directive::Window { size, unit, mode } => {
                write!(f, "window {size} {unit} {mode:?}")
            }
            Directive::TaskGraph { kind, value } => {
                write!(f, "task_graph {} {value}", kind.spelling())
            }
            Directive::SpatialMap(grid) => write!(f, "spatial_map {}", shape_text(grid)),
        }
    }
}
