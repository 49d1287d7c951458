//! IR kernels → C++17 source: one `extern "C"` function per kernel over pointers and strides.
//!
//! The ABI every generated (and `cpp_src`) kernel has:
//! `void wsp_kernel_NAME(char* const* tiles, const int64_t* strides, const double* scalars)`.
//! `tiles[i]` points at element (0, 0) of the i-th tile parameter; `strides[2i]` and
//! `strides[2i + 1]` are its row and column strides in elements; `scalars[j]` is the j-th
//! scalar or constexpr parameter. The runtime fills these per task from the task's views.

use std::fmt::Write;

use wsp_ir::Affine;
use wsp_ir::kernel::{CARRY, KernelBody, Loop, Op, Operand, ParamType, ValueType};
use wsp_ir::ops::{self, Init, Semantics};
use wsp_ir::{DType, Kernel, TileType};

pub const PRELUDE: &str = include_str!("prelude.hpp");

/// The prelude after the standard headers, for programs with `cpp_src` bodies, which may use
/// the standard library without including it (the prelude once included these headers for
/// every program). It is what gets precompiled: the headers take g++ ~0.2 s to read.
pub const PRELUDE_WITH_STD: &str = concat!(
    "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n#include <cstring>\n#include <limits>\n",
    include_str!("prelude.hpp")
);

/// The C++ translation unit for a program's kernels. `wsp_path` is what compiler messages
/// about `cpp_src` bodies name (their `#line` directives point into the `.wsp` file).
pub fn source<'a>(kernels: impl IntoIterator<Item = &'a Kernel> + Clone, wsp_path: &str) -> String {
    let mut out = String::new();
    // PTO-ISA's tile API for the bodies that use it (its CPU simulation, `-D__CPU_SIM`), and
    // the original's `pto_wsp::ptoisa::TLOAD` spelling of it.
    if kernels.clone().into_iter().any(uses_pto_isa) {
        out.push_str("#include <pto/pto-inst.hpp>\nnamespace pto_wsp { namespace ptoisa { using namespace ::pto; } }\n");
    }
    for k in kernels.clone() {
        if let KernelBody::Cpp { includes, .. } = &k.body {
            for inc in includes {
                let _ = writeln!(out, "#include \"{inc}\"");
            }
        }
    }
    out.push_str(if has_cpp_src(kernels.clone()) {
        PRELUDE_WITH_STD
    } else {
        PRELUDE
    });
    for k in kernels {
        out.push('\n');
        kernel(&mut out, k, wsp_path);
    }
    out
}

/// Whether any kernel has a `cpp_src` body (C++ of the user's, which may use the standard
/// library).
pub fn has_cpp_src<'a>(kernels: impl IntoIterator<Item = &'a Kernel>) -> bool {
    kernels
        .into_iter()
        .any(|k| matches!(k.body, KernelBody::Cpp { .. }))
}

/// Whether a `cpp_src` body uses PTO-ISA's tile API (`pto::Tile`, `pto::TLOAD`,
/// `pto_wsp::ptoisa::...`): any `pto::` name but the prelude's `pto::cpu_sim`.
pub fn uses_pto_isa(k: &Kernel) -> bool {
    let KernelBody::Cpp { code, .. } = &k.body else {
        return false;
    };
    code.contains("pto_wsp::ptoisa")
        || code
            .match_indices("pto::")
            .any(|(i, _)| !code[i + "pto::".len()..].starts_with("cpu_sim"))
}

pub use wsp_aicore::cxx::symbol;
pub(crate) use wsp_aicore::cxx::{compute, storage};

/// An op's scalar C++ expression (the op table's, in `std::` functions) for a CPU-sim kernel:
/// the same functions from the prelude's `wsp::`, whose f32 forms are branch-free so that a
/// loop over a tile vectorizes (libm's are a call per element).
fn vector_math(expr: &str) -> String {
    expr.replace("std::", "wsp::")
}

/// The prelude's conversion class for a dtype.
fn conv(d: DType) -> String {
    match d {
        DType::F16 => "wsp::F16".into(),
        DType::BF16 => "wsp::BF16".into(),
        _ => format!("wsp::Plain<{}>", storage(d)),
    }
}

fn header(out: &mut String, k: &Kernel) {
    // Every kernel has the same signature; one without scalar parameters leaves `wsp_sc` unnamed.
    let scalars = k
        .params
        .iter()
        .any(|p| !matches!(p.ty, ParamType::Tile(..)));
    let _ = writeln!(
        out,
        "extern \"C\" void {}(char* const* wsp_t, const int64_t* wsp_s, const double*{}) {{",
        symbol(&k.name),
        if scalars { " wsp_sc" } else { "" }
    );
}

fn kernel(out: &mut String, k: &Kernel, wsp_path: &str) {
    header(out, k);
    let (mut ti, mut si) = (0, 0);
    let custom = matches!(k.body, KernelBody::Cpp { .. });
    if custom {
        // The original's descriptor, for bodies written against it (`task->tensor_ptrs[i]`,
        // `task->tensor_strides[2i]` and `[2i + 1]`, the row and column strides in elements).
        let tiles = k
            .params
            .iter()
            .filter(|p| matches!(p.ty, ParamType::Tile(..)))
            .count();
        let _ = writeln!(
            out,
            "  const struct {{ char* const* tensor_ptrs; const uint64_t* tensor_strides; uint32_t num_tensors; }} wsp_task{{wsp_t, (const uint64_t*)wsp_s, {tiles}u}}; const auto* const task = &wsp_task; (void)task;"
        );
    }
    for p in &k.params {
        // A custom body sees its parameters by their own names; generated code prefixes them.
        let name = if custom {
            p.name.clone()
        } else {
            format!("p_{}", p.name)
        };
        match &p.ty {
            ParamType::Tile(_, t) => {
                let _ = writeln!(
                    out,
                    "  {st}* const {name} = ({st}*)wsp_t[{ti}]; const int64_t {name}_rs = wsp_s[{r}], {name}_cs = wsp_s[{c}];",
                    st = storage(t.dtype),
                    r = 2 * ti,
                    c = 2 * ti + 1
                );
                if custom {
                    let _ = writeln!(
                        out,
                        "  constexpr int {name}_rows = {}, {name}_cols = {}; (void){name}_rs; (void){name}_cs;",
                        t.rows, t.cols
                    );
                }
                ti += 1;
            }
            ParamType::Scalar(d, _) => {
                let _ = writeln!(
                    out,
                    "  const {ct} {name} = ({ct})wsp_sc[{si}]; (void){name};",
                    ct = compute(*d)
                );
                si += 1;
            }
            ParamType::Constexpr(_) => {
                let _ = writeln!(
                    out,
                    "  const int64_t {name} = (int64_t)wsp_sc[{si}]; (void){name};"
                );
                si += 1;
            }
        }
    }
    match &k.body {
        KernelBody::Ops(ops) => {
            let mut g = Gen {
                out,
                kernel: k,
                ops,
                loaded: Vec::new(),
                hoisted: !k.loops.is_empty(),
            };
            if g.hoisted {
                g.declare_all();
            }
            for (i, op) in ops.iter().enumerate() {
                g.close_loops(i as u32);
                g.open_loops(i as u32);
                if op.op != CARRY {
                    g.op(i, op);
                }
            }
            g.close_loops(ops.len() as u32);
        }
        KernelBody::Cpp {
            code, first_line, ..
        } => {
            let _ = writeln!(
                out,
                "#line {first_line} \"{}\"",
                wsp_path.replace('\\', "/")
            );
            out.push_str(code);
            out.push('\n');
        }
    }
    out.push_str("}\n");
}

struct Gen<'a> {
    out: &'a mut String,
    kernel: &'a Kernel,
    ops: &'a [Op],
    /// Tile parameters already loaded into a local (`v_x`) for use as values.
    loaded: Vec<String>,
    /// Whether every value is declared at the top (a kernel with loops, whose values outlive
    /// the loop's scope), so the ops only assign them.
    hoisted: bool,
}

/// The C++ declaration of a value of type `ty` named `name`; a unit has none.
fn declaration(ty: ValueType, name: &str) -> Option<String> {
    match ty {
        ValueType::Tile(t) => Some(format!("{} {name}[{}];", compute(t.dtype), t.elems())),
        ValueType::Scalar(d) => Some(format!("{} {name} = 0;", compute(d))),
        ValueType::Unit => None,
    }
}

/// A loop variable's C++ name.
fn loop_var(var: &str) -> String {
    format!("l_{var}")
}

/// Where a slice's load or store starts: its first row and column.
fn slice_start(args: &[Operand]) -> Option<[&Affine; 2]> {
    let mut index = args.iter().filter_map(|a| match a {
        Operand::Index(i) => Some(i),
        _ => None,
    });
    Some([index.next()?, index.next()?])
}

/// An affine expression of loop variables in C++.
fn affine(a: &Affine) -> String {
    let mut s = format!("(int64_t){}", a.constant);
    for (v, c) in &a.terms {
        let _ = write!(s, " + (int64_t){c} * {}", loop_var(v));
    }
    s
}

/// What an operand is, for indexing into it.
enum Value {
    Tile { name: String, tile: TileType },
    Scalar { expr: String },
}

impl Gen<'_> {
    fn param(&self, name: &str) -> Option<&ParamType> {
        self.kernel
            .params
            .iter()
            .find(|p| p.name == name)
            .map(|p| &p.ty)
    }

    /// Declares every value of a kernel with loops, and loads the tile parameters it uses as
    /// values (once, as a kernel without loops does at their first use).
    fn declare_all(&mut self) {
        for (i, op) in self.ops.iter().enumerate() {
            if let Some(d) = declaration(op.ty, &format!("v{i}")) {
                let _ = writeln!(self.out, "  {d}");
            }
        }
        let ops = self.ops;
        for op in ops.iter().filter(|o| o.op != "load" && o.op != "store") {
            for a in &op.args {
                if let Operand::Param(p) = a
                    && let Some(ParamType::Tile(_, t)) = self.param(p).cloned()
                {
                    self.param_tile(p, t);
                }
            }
        }
    }

    /// Opens the loops that start at op `i`, outer first, each setting its carried values to
    /// their initial ones.
    fn open_loops(&mut self, i: u32) {
        let k = self.kernel;
        for l in k.loops.iter().filter(|l| l.first == i && l.end > i) {
            for c in self.carries(l) {
                if let Some(init) = self.ops[c as usize].args.first() {
                    let from = self.name_of(init);
                    self.copy(c, &format!("v{c}"), &from);
                }
            }
            let v = loop_var(&l.var);
            let _ = writeln!(
                self.out,
                "  for (int64_t {v} = 0; {v} < {}; ++{v}) {{",
                l.trips
            );
        }
    }

    /// Closes the loops that end before op `i`, inner first, each passing its carried values
    /// on to the next iteration.
    fn close_loops(&mut self, i: u32) {
        let k = self.kernel;
        for l in k.loops.iter().rev().filter(|l| l.end == i && l.first < i) {
            let carries = self.carries(l);
            // Each next value as the iteration left it, even where one is another's carry.
            let next: Vec<(u32, Operand)> = carries
                .iter()
                .filter_map(|&c| {
                    let next = self.ops[c as usize].args.get(1)?;
                    (*next != Operand::Value(c)).then(|| (c, next.clone()))
                })
                .collect();
            let reads_carry = next
                .iter()
                .any(|(_, n)| matches!(n, Operand::Value(v) if carries.contains(v)));
            // Not after the last iteration: a carried value read after the loop is its last
            // iteration's, as every value defined inside is.
            if !next.is_empty() {
                let v = loop_var(&l.var);
                let _ = writeln!(self.out, "  if ({v} + 1 < {}) {{", l.trips);
                if reads_carry {
                    for (c, n) in &next {
                        if let Some(d) = declaration(self.ops[*c as usize].ty, &format!("n{c}")) {
                            let _ = writeln!(self.out, "  {d}");
                        }
                        let from = self.name_of(n);
                        self.copy(*c, &format!("n{c}"), &from);
                    }
                    for (c, _) in &next {
                        self.copy(*c, &format!("v{c}"), &format!("n{c}"));
                    }
                } else {
                    for (c, n) in &next {
                        let from = self.name_of(n);
                        self.copy(*c, &format!("v{c}"), &from);
                    }
                }
                let _ = writeln!(self.out, "  }}");
            }
            let _ = writeln!(self.out, "  }}");
        }
    }

    /// The `carry` ops of loop `l` (those of the loops inside it start inside them).
    fn carries(&self, l: &Loop) -> Vec<u32> {
        let inner = |i: u32| {
            self.kernel.loops.iter().any(|m| {
                m != l && l.first <= m.first && m.end <= l.end && m.first <= i && i < m.end
            })
        };
        (l.first..l.end)
            .filter(|&i| self.ops[i as usize].op == CARRY && !inner(i))
            .collect()
    }

    /// An operand's C++ name (or expression, for a scalar).
    fn name_of(&mut self, o: &Operand) -> String {
        match self.operand(o) {
            Value::Tile { name, .. } | Value::Scalar { expr: name } => name,
        }
    }

    /// Copies `from` into `to`, both of carried value `c`'s type.
    fn copy(&mut self, c: u32, to: &str, from: &str) {
        match self.ops.get(c as usize).map(|o| o.ty) {
            Some(ValueType::Tile(t)) => {
                let _ = writeln!(
                    self.out,
                    "  for (int k = 0; k < {}; ++k) {to}[k] = {from}[k];",
                    t.elems()
                );
            }
            _ => {
                let _ = writeln!(self.out, "  {to} = {from};");
            }
        }
    }

    /// The declaration that opens op `i`'s code: its tile, unless every value is declared at
    /// the top.
    fn decl(&self, i: usize) -> String {
        match (self.hoisted, self.ops[i].ty) {
            (false, ValueType::Tile(t)) => format!("{} v{i}[{}]; ", compute(t.dtype), t.elems()),
            _ => String::new(),
        }
    }

    /// What opens a scalar value's assignment: its declaration, unless at the top.
    fn scalar_decl(&self, ct: &str) -> String {
        if self.hoisted {
            String::new()
        } else {
            format!("const {ct} ")
        }
    }

    /// The tile type of a tile operand.
    fn value_tile(&self, o: &Operand) -> Option<TileType> {
        match o {
            Operand::Value(v) => match self.ops.get(*v as usize)?.ty {
                ValueType::Tile(t) => Some(t),
                _ => None,
            },
            Operand::Param(p) => match self.param(p)? {
                ParamType::Tile(_, t) => Some(*t),
                _ => None,
            },
            _ => None,
        }
    }

    /// Where tile parameter `p`'s slice starts (`index`: its first row and column), or `p`
    /// itself.
    fn at_slice(&self, p: &str, args: &[Operand]) -> String {
        match slice_start(args) {
            Some([r, c]) => format!(
                "p_{p} + ({}) * p_{p}_rs + ({}) * p_{p}_cs",
                affine(r),
                affine(c)
            ),
            _ => format!("p_{p}"),
        }
    }

    /// The valid rows and columns (C++ expressions) of a slice of tile parameter `p` into a
    /// `t` tile that runs past the parameter's last row or column in some iteration; `None`
    /// for a slice that always lies inside.
    fn valid(&self, i: usize, p: &str, t: TileType, args: &[Operand]) -> Option<(String, String)> {
        let Some(ParamType::Tile(_, whole)) = self.param(p) else {
            return None;
        };
        let [r, c] = slice_start(args)?;
        let i = i as u32;
        let trips = |v: &str| {
            let around = |l: &&Loop| l.var == v && l.first <= i && i < l.end;
            self.kernel.loops.iter().find(around).map(|l| l.trips)
        };
        let past = |a: &Affine, len: u64, extent: u64| {
            a.bounds(trips)
                .is_none_or(|(_, hi)| hi.saturating_add(len as i64) > extent as i64)
        };
        if !past(r, t.rows, whole.rows) && !past(c, t.cols, whole.cols) {
            return None;
        }
        let valid = |a: &Affine, len: u64, extent: u64| {
            format!(
                "wsp::max<int64_t>(0, wsp::min<int64_t>({len}, (int64_t){extent} - ({})))",
                affine(a)
            )
        };
        Some((valid(r, t.rows, whole.rows), valid(c, t.cols, whole.cols)))
    }

    /// A tile parameter used as a value: loaded into `v_NAME` once, at its first use.
    fn param_tile(&mut self, name: &str, tile: TileType) -> String {
        let local = format!("v_{name}");
        if !self.loaded.iter().any(|l| l == name) {
            self.loaded.push(name.to_string());
            let _ = writeln!(
                self.out,
                "  {ct} {local}[{n}]; wsp::load<{m}, {c}, {conv}>({local}, p_{name}, p_{name}_rs, p_{name}_cs);",
                ct = compute(tile.dtype),
                n = tile.elems(),
                m = tile.rows,
                c = tile.cols,
                conv = conv(tile.dtype)
            );
        }
        local
    }

    fn operand(&mut self, o: &Operand) -> Value {
        match o {
            Operand::Value(i) => match self.ops[*i as usize].ty {
                ValueType::Tile(tile) => Value::Tile {
                    name: format!("v{i}"),
                    tile,
                },
                _ => Value::Scalar {
                    expr: format!("v{i}"),
                },
            },
            Operand::Param(p) => match self.param(p).cloned() {
                Some(ParamType::Tile(_, tile)) => Value::Tile {
                    name: self.param_tile(p, tile),
                    tile,
                },
                _ => Value::Scalar {
                    expr: format!("p_{p}"),
                },
            },
            Operand::Number(n) => Value::Scalar {
                expr: crate::double(n.0),
            },
            Operand::DType(_) | Operand::Shape(..) | Operand::Index(_) => {
                Value::Scalar { expr: "0".into() }
            }
        }
    }

    /// `name[...]` at row `i`, column `j` of a result, broadcasting as NumPy does.
    fn at(v: &Value) -> String {
        match v {
            Value::Scalar { expr } => expr.clone(),
            Value::Tile { name, tile } => {
                let i = if tile.rows == 1 {
                    "0".to_string()
                } else {
                    format!("i * {}", tile.cols)
                };
                let j = if tile.cols == 1 { "0" } else { "j" };
                format!("{name}[{i} + {j}]")
            }
        }
    }

    fn op(&mut self, i: usize, op: &Op) {
        let Some(row) = ops::lookup(&op.op) else {
            // The analyzer lowers only ops of the table.
            let _ = writeln!(self.out, "#error \"unknown op {}\"", op.op);
            return;
        };
        let args: Vec<Value> = match op.op.as_str() {
            // Their parameter operand is the destination/source, not a loaded value.
            "store" | "load" => Vec::new(),
            _ => op.args.iter().map(|a| self.operand(a)).collect(),
        };
        let (ct, tile) = match op.ty {
            ValueType::Tile(t) => (compute(t.dtype), Some(t)),
            ValueType::Scalar(d) => (compute(d), None),
            ValueType::Unit => ("void", None),
        };
        let dst = format!("v{i}");
        let hoisted = self.hoisted;
        let decl = |out: &mut String| {
            if let Some(t) = tile
                && !hoisted
            {
                let _ = writeln!(out, "  {ct} {dst}[{}];", t.elems());
            }
        };
        let _ = writeln!(self.out, "  // %{i} = {}", op.op);
        match row.semantics {
            Semantics::Map(expr) | Semantics::Zip(expr) => {
                let expr = vector_math(expr);
                let bind: Vec<(&str, String)> = if matches!(row.semantics, Semantics::Map(_)) {
                    vec![("x", Self::at(&args[0]))]
                } else {
                    vec![("a", Self::at(&args[0])), ("b", Self::at(&args[1]))]
                };
                let lets: String = bind
                    .iter()
                    .map(|(n, e)| format!("const {ct} {n} = {e}; "))
                    .collect();
                match tile {
                    Some(t) => {
                        decl(self.out);
                        let _ = writeln!(
                            self.out,
                            "  for (int i = 0; i < {}; ++i) for (int j = 0; j < {}; ++j) {{ {lets}{dst}[i * {} + j] = ({ct})({expr}); }}",
                            t.rows, t.cols, t.cols
                        );
                    }
                    None => {
                        let _ = writeln!(
                            self.out,
                            "  {}{dst} = [&] {{ const int i = 0, j = 0; (void)i; (void)j; {lets}return ({ct})({expr}); }}();",
                            self.scalar_decl(ct)
                        );
                    }
                }
            }
            Semantics::Reduce {
                rows,
                init,
                combine,
                mean,
            } => {
                let Some(Value::Tile { name: src, tile: s }) = args.first() else {
                    return;
                };
                let init = match init {
                    Init::Zero => format!("({ct})0"),
                    Init::Lowest => format!("wsp::lowest<{ct}>()"),
                };
                decl(self.out);
                let (m, n) = (s.rows, s.cols);
                if rows {
                    let div = if mean {
                        format!(" / ({ct}){n}")
                    } else {
                        String::new()
                    };
                    let _ = writeln!(
                        self.out,
                        "  for (int i = 0; i < {m}; ++i) {dst}[i] = wsp::reduce_row<{n}>({src} + i * {n}, {init}, [](const {ct} acc, const {ct} x) {{ return ({ct})({combine}); }}){div};"
                    );
                } else {
                    let div = if mean {
                        format!(" for (int j = 0; j < {n}; ++j) {dst}[j] /= ({ct}){m};")
                    } else {
                        String::new()
                    };
                    let _ = writeln!(
                        self.out,
                        "  for (int j = 0; j < {n}; ++j) {dst}[j] = {init}; for (int i = 0; i < {m}; ++i) for (int j = 0; j < {n}; ++j) {{ const {ct} acc = {dst}[j]; const {ct} x = {src}[i * {n} + j]; {dst}[j] = {combine}; }}{div}"
                    );
                }
            }
            Semantics::Structural => self.structural(i, op, &args, ct, tile),
        }
    }

    fn structural(&mut self, i: usize, op: &Op, args: &[Value], ct: &str, tile: Option<TileType>) {
        let dst = format!("v{i}");
        let tile_arg = |k: usize| match args.get(k) {
            Some(Value::Tile { name, tile }) => Some((name.clone(), *tile)),
            _ => None,
        };
        match (op.op.as_str(), tile) {
            ("load", Some(t)) => {
                let Some(Operand::Param(p)) = op.args.first() else {
                    return;
                };
                if let Some((rows, cols)) = self.valid(i, p, t, &op.args) {
                    let pad = match op.args.get(1) {
                        Some(Operand::Number(n)) => crate::double(n.0),
                        _ => "0".into(),
                    };
                    let _ = writeln!(
                        self.out,
                        "  {decl}wsp::load_part<{}, {}, {}>({dst}, {src}, p_{p}_rs, p_{p}_cs, {rows}, {cols}, ({ct}){pad});",
                        t.rows,
                        t.cols,
                        conv(t.dtype),
                        decl = self.decl(i),
                        src = self.at_slice(p, &op.args),
                    );
                    return;
                }
                let _ = writeln!(
                    self.out,
                    "  {decl}wsp::load<{}, {}, {}>({dst}, {src}, p_{p}_rs, p_{p}_cs);",
                    t.rows,
                    t.cols,
                    conv(t.dtype),
                    decl = self.decl(i),
                    src = self.at_slice(p, &op.args),
                );
            }
            ("store", _) => {
                let (Some(Operand::Param(p)), Some(v)) = (op.args.first(), op.args.get(1)) else {
                    return;
                };
                let Some(ParamType::Tile(_, t)) = self.param(p).cloned() else {
                    return;
                };
                let Value::Tile { name: src, .. } = self.operand(v) else {
                    return;
                };
                // A slice's shape is its value's; a whole parameter's, the parameter's.
                let t = match (op.args.len() > 2, self.value_tile(v)) {
                    (true, Some(vt)) => vt,
                    _ => t,
                };
                if let Some((rows, cols)) = self.valid(i, p, t, &op.args) {
                    let _ = writeln!(
                        self.out,
                        "  wsp::store_part<{}, {}, {}>({dst}, p_{p}_rs, p_{p}_cs, {src}, {rows}, {cols});",
                        t.rows,
                        t.cols,
                        conv(t.dtype),
                        dst = self.at_slice(p, &op.args),
                    );
                    return;
                }
                let _ = writeln!(
                    self.out,
                    "  wsp::store<{}, {}, {}>({dst}, p_{p}_rs, p_{p}_cs, {src});",
                    t.rows,
                    t.cols,
                    conv(t.dtype),
                    dst = self.at_slice(p, &op.args),
                );
            }
            ("constant", None) => {
                let n = match op.args.first() {
                    Some(Operand::Number(n)) => n.0,
                    _ => 0.0,
                };
                let _ = writeln!(
                    self.out,
                    "  {}{dst} = ({ct}){};",
                    self.scalar_decl(ct),
                    crate::double(n)
                );
            }
            ("alloc", Some(t)) => {
                if self.hoisted {
                    let _ = writeln!(
                        self.out,
                        "  for (int k = 0; k < {n}; ++k) {dst}[k] = ({ct})0;",
                        n = t.elems()
                    );
                } else {
                    let _ = writeln!(self.out, "  {ct} {dst}[{}] = {{}};", t.elems());
                }
            }
            ("cast", Some(t)) => {
                let Some((src, _)) = tile_arg(0) else { return };
                let _ = writeln!(
                    self.out,
                    "  {decl}for (int k = 0; k < {n}; ++k) {dst}[k] = {}::round(({ct}){src}[k]);",
                    conv(t.dtype),
                    n = t.elems(),
                    decl = self.decl(i)
                );
            }
            // A `Scalar` parameter converted (`pto.cast(k, F32)`): one value, rounded as a
            // tile's elements are.
            ("cast", None) => {
                let Some(Value::Scalar { expr }) = args.first() else {
                    let _ = writeln!(self.out, "#error \"cast of nothing\"");
                    return;
                };
                let ValueType::Scalar(d) = op.ty else { return };
                let _ = writeln!(
                    self.out,
                    "  {}{dst} = {}::round(({ct})({expr}));",
                    self.scalar_decl(ct),
                    conv(d)
                );
            }
            ("transpose", Some(t)) => {
                let Some((src, _)) = tile_arg(0) else { return };
                // The result is [t.rows, t.cols]; the source is [t.cols, t.rows].
                let _ = writeln!(
                    self.out,
                    "  {decl}for (int i = 0; i < {r}; ++i) for (int j = 0; j < {c}; ++j) {dst}[j * {r} + i] = {src}[i * {c} + j];",
                    decl = self.decl(i),
                    r = t.cols,
                    c = t.rows
                );
            }
            ("matmul", Some(t)) => {
                let (Some((a, at)), Some((b, _))) = (tile_arg(0), tile_arg(1)) else {
                    return;
                };
                let acc = tile_arg(2).map_or("nullptr".to_string(), |(n, _)| n);
                let _ = writeln!(
                    self.out,
                    "  {}wsp::matmul<{ct}, {}, {}, {}>({a}, {b}, {acc}, {dst});",
                    self.decl(i),
                    t.rows,
                    t.cols,
                    at.cols
                );
            }
            ("softmax", Some(t)) => {
                let Some((src, _)) = tile_arg(0) else { return };
                let (m, n) = (t.rows, t.cols);
                let _ = writeln!(
                    self.out,
                    "  {}for (int i = 0; i < {m}; ++i) {{ const {ct} mx = wsp::reduce_row<{n}>({src} + i * {n}, wsp::lowest<{ct}>(), [](const {ct} acc, const {ct} x) {{ return x > acc ? x : acc; }}); for (int j = 0; j < {n}; ++j) {dst}[i * {n} + j] = wsp::exp({src}[i * {n} + j] - mx); const {ct} s = wsp::reduce_row<{n}>({dst} + i * {n}, ({ct})0, [](const {ct} acc, const {ct} x) {{ return acc + x; }}); for (int j = 0; j < {n}; ++j) {dst}[i * {n} + j] /= s; }}",
                    self.decl(i)
                );
            }
            (name @ ("slice_even" | "slice_odd"), Some(t)) => {
                let Some((src, s)) = tile_arg(0) else { return };
                let off = if name == "slice_even" { 0 } else { 1 };
                let _ = writeln!(
                    self.out,
                    "  {}for (int i = 0; i < {}; ++i) for (int j = 0; j < {}; ++j) {dst}[i * {} + j] = {src}[i * {} + 2 * j + {off}];",
                    self.decl(i),
                    t.rows,
                    t.cols,
                    t.cols,
                    s.cols
                );
            }
            ("interleave", Some(t)) => {
                let (Some((a, s)), Some((b, _))) = (tile_arg(0), tile_arg(1)) else {
                    return;
                };
                let _ = writeln!(
                    self.out,
                    "  {}for (int i = 0; i < {}; ++i) for (int j = 0; j < {}; ++j) {{ {dst}[i * {} + 2 * j] = {a}[i * {} + j]; {dst}[i * {} + 2 * j + 1] = {b}[i * {} + j]; }}",
                    self.decl(i),
                    t.rows,
                    s.cols,
                    t.cols,
                    s.cols,
                    t.cols,
                    s.cols
                );
            }
            ("iota_u32", Some(t)) => {
                let _ = writeln!(
                    self.out,
                    "  {decl}for (int k = 0; k < {n}; ++k) {dst}[k] = ({ct})k;",
                    n = t.elems(),
                    decl = self.decl(i)
                );
            }
            ("tsort32", Some(_)) => {
                let (Some((s, _)), Some((x, _))) = (tile_arg(0), tile_arg(1)) else {
                    return;
                };
                // TSORT32: an insertion sort of the 32 (score, index) pairs, by score descending
                // and, for equal scores, lower index first (stable in the index order).
                let _ = writeln!(
                    self.out,
                    "  {}{{ float ks[32]; uint32_t ix[32]; for (int k = 0; k < 32; ++k) {{ const float v = {s}[k]; const uint32_t i = {x}[k]; int j = k; while (j > 0 && (ks[j - 1] < v || (ks[j - 1] == v && ix[j - 1] > i))) {{ ks[j] = ks[j - 1]; ix[j] = ix[j - 1]; --j; }} ks[j] = v; ix[j] = i; }} for (int k = 0; k < 32; ++k) {{ {dst}[2 * k] = ks[k]; {dst}[2 * k + 1] = (float)ix[k]; }} }}",
                    self.decl(i)
                );
            }
            ("extract_topk_indices", Some(t)) => {
                let Some((pairs, _)) = tile_arg(0) else {
                    return;
                };
                let _ = writeln!(
                    self.out,
                    "  {decl}for (int j = 0; j < {k}; ++j) {dst}[j] = ({ct}){pairs}[2 * j + 1];",
                    k = t.cols,
                    decl = self.decl(i)
                );
            }
            (name, _) => {
                let _ = writeln!(self.out, "#error \"no code for op {name}\"");
            }
        }
    }
}
