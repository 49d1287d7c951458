//! Kernels: the signature (parameters and their tile types, directions, scalars; `cpp_src`) and
//! the body's type inference over the op table, giving every expression a type and the body as
//! SSA ops for lowering.

use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode, Expr, Stmt};

use crate::diagnostics::{Code, Diag};
use crate::eval::{Eval, num};
use crate::items::Item;
use crate::symbols::Use;
use crate::types::{DType, TileType};
use crate::values::{F64, Value};
use crate::vocabulary::Builtin;

pub use wsp_ir::plan::Direction;

#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum ParamType {
    Tile(Direction, TileType),
    /// `In[Tensor]`, `Out[Tensor[F16]]`: the spec's JIT-style tile parameter, whose shape (and
    /// dtype, when it names none) each task's view gives (`KernelInstance`).
    Jit(Direction, Option<DType>),
    Scalar(DType),
    Constexpr,
    /// The annotation was wrong (already reported) or missing.
    Unknown,
}

impl std::fmt::Display for ParamType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamType::Tile(dir, t) => {
                write!(
                    f,
                    "{}[Tile[{}, {}, {}]]",
                    dir.name(),
                    t.rows,
                    t.cols,
                    t.dtype
                )
            }
            ParamType::Jit(dir, None) => write!(f, "{}[Tensor]", dir.name()),
            ParamType::Jit(dir, Some(d)) => write!(f, "{}[Tensor[{d}]]", dir.name()),
            ParamType::Scalar(d) => write!(f, "Scalar[{d}]"),
            ParamType::Constexpr => f.write_str("Constexpr[int]"),
            ParamType::Unknown => f.write_str("?"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct KernelParam {
    pub name: String,
    /// The parameter's name, relative to the kernel item.
    pub range: TextRange,
    pub ty: ParamType,
    pub default: Option<F64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct CppSource {
    pub code: String,
    pub includes: Vec<String>,
    /// The string literal, relative to the kernel item (for mapping compiler errors).
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub struct KernelSignature<'db> {
    pub name: String,
    pub params: Vec<KernelParam>,
    pub cpp: Option<CppSource>,
    pub diags: Vec<Diag<'db>>,
    /// The parameters and the names the annotations resolved (for navigation).
    pub uses: Vec<Use<'db>>,
}

impl KernelSignature<'_> {
    pub fn param(&self, name: &str) -> Option<&KernelParam> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Whether a parameter takes its tile type from each task (`In[Tensor]`).
    pub fn is_jit(&self) -> bool {
        self.params
            .iter()
            .any(|p| matches!(p.ty, ParamType::Jit(..)))
    }
}

/// A kernel with the tile types its JIT-style parameters take at task calls: each distinct
/// binding is checked, lowered and compiled on its own. A kernel with fixed tile types has one
/// instance, which binds nothing (`plain`).
#[salsa::interned(debug)]
pub struct KernelInstance<'db> {
    #[returns(copy)]
    pub item: Item<'db>,
    /// Each JIT parameter's tile type, in parameter order.
    #[returns(ref)]
    pub tiles: Vec<(String, TileType)>,
}

impl<'db> KernelInstance<'db> {
    pub fn plain(db: &'db dyn salsa::Database, item: Item<'db>) -> KernelInstance<'db> {
        KernelInstance::new(db, item, Vec::new())
    }

    /// The name it is lowered and compiled under: the kernel's for a plain instance; with the
    /// bound tile types spelled out for a JIT one (`attn__32x64_f16__32x64_f16`), a C++ name.
    pub fn lowered_name(self, db: &'db dyn salsa::Database) -> String {
        let mut name = self.item(db).name(db).clone();
        for (_, t) in self.tiles(db) {
            name.push_str(&format!(
                "__{}x{}_{}",
                t.rows,
                t.cols,
                t.dtype.name().to_lowercase()
            ));
        }
        name
    }

    /// The bound tile types as messages show them: `` `Q` Tile[32,64] F16, ... ``.
    pub fn binding_text(self, db: &'db dyn salsa::Database) -> String {
        let parts: Vec<String> = self
            .tiles(db)
            .iter()
            .map(|(n, t)| format!("`{n}` {} {}", crate::types::shape_text(&t.shape()), t.dtype))
            .collect();
        parts.join(", ")
    }
}

/// The signature of an instance: its JIT parameters with the tile types bound.
#[salsa::tracked(returns(ref))]
pub fn bound_signature<'db>(
    db: &'db dyn salsa::Database,
    inst: KernelInstance<'db>,
) -> KernelSignature<'db> {
    let mut s = kernel_signature(db, inst.item(db)).clone();
    // The signature's own diagnostics are the kernel's, reported once.
    s.diags.clear();
    for p in &mut s.params {
        if let ParamType::Jit(dir, _) = p.ty
            && let Some((_, t)) = inst.tiles(db).iter().find(|(n, _)| *n == p.name)
        {
            p.ty = ParamType::Tile(dir, *t);
        }
    }
    s
}

#[salsa::tracked(returns(ref))]
pub fn kernel_signature<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
) -> KernelSignature<'db> {
    let mut eval = Eval::new(db, item);
    let mut params = Vec::new();
    let mut cpp = None;
    let Some(Stmt::FunctionDef(f)) = item.stmt(db) else {
        return KernelSignature {
            name: item.name(db).clone(),
            params,
            cpp,
            diags: eval.diags,
            uses: eval.uses,
        };
    };
    if let Some(d) = f.decorators().next()
        && let Some(Expr::CallExpr(c)) = d.expr()
    {
        cpp = decorator_args(&mut eval, &c);
    }
    if let Some(r) = f.return_type() {
        eval.error(
            Code::OutsideSubset,
            r.syntax().text_range(),
            "a kernel returns nothing: it stores into its `Out` parameters",
        );
    }
    for p in f.param_list().into_iter().flat_map(|l| l.params()) {
        let Some(name_tok) = p.name() else { continue };
        let name = name_tok.text().to_string();
        let range = name_tok.text_range();
        if p.kind() != ast::ParamKind::Normal {
            eval.error(
                Code::OutsideSubset,
                p.syntax().text_range(),
                "kernel parameters are plain names: no `*`, `**` or `/`",
            );
            continue;
        }
        if params.iter().any(|q: &KernelParam| q.name == name) {
            continue; // CPython already rejects duplicate parameters (WSP001).
        }
        let ty = match p.annotation() {
            Some(a) => param_type(&mut eval, &a),
            None => {
                eval.error(
                    Code::WrongKind,
                    range,
                    format!("kernel parameter `{name}` needs a type: `In[Tile[M, N, dtype]]`, `Out[...]`, `InOut[...]`, `Scalar[dtype]` or `Constexpr[int]`"),
                );
                ParamType::Unknown
            }
        };
        let default = match p.default() {
            None => None,
            Some(d) => {
                let v = eval.expr(&d);
                match (&ty, v) {
                    (
                        ParamType::Scalar(_) | ParamType::Constexpr,
                        v @ (Value::Int(_) | Value::Float(_)),
                    ) => Some(F64(num(&v))),
                    (_, Value::Unknown) => None,
                    (ParamType::Tile(..), _) => {
                        eval.error(
                            Code::WrongKind,
                            d.syntax().text_range(),
                            "a tile parameter has no default: every task passes a view",
                        );
                        None
                    }
                    (_, v) => {
                        eval.error(
                            Code::WrongKind,
                            d.syntax().text_range(),
                            format!("a scalar default is a number, not {}", v.describe()),
                        );
                        None
                    }
                }
            }
        };
        eval.use_local(range, range);
        params.push(KernelParam {
            name,
            range,
            ty,
            default,
        });
    }
    if cpp.is_some()
        && let Some(p) = params.iter().find(|p| matches!(p.ty, ParamType::Jit(..)))
    {
        eval.error(
            Code::WrongKind,
            p.range,
            format!("a `cpp_src` kernel's C++ is written for fixed tiles: give `{}` a tile type, `In[Tile[M, N, dtype]]`", p.name),
        );
    }
    KernelSignature {
        name: item.name(db).clone(),
        params,
        cpp,
        diags: eval.diags,
        uses: eval.uses,
    }
}

fn decorator_args(eval: &mut Eval<'_>, c: &ast::CallExpr) -> Option<CppSource> {
    let args = eval.bind_params(c, "`@kernel`", Builtin::Kernel.params().unwrap_or(&[]))?;
    let (code, range) = match args.get(0)? {
        (Value::Str(s), r) => (s.clone(), *r),
        (Value::Unknown, _) => return None,
        (v, r) => {
            let (v, r) = (v.clone(), *r);
            eval.error(
                Code::WrongKind,
                r,
                format!("`cpp_src` is a string of C++, not {}", v.describe()),
            );
            return None;
        }
    };
    let mut includes = Vec::new();
    if let Some((v, r)) = args.get(1).cloned() {
        match v {
            Value::List(items) | Value::Tuple(items) => {
                for i in items {
                    match i {
                        Value::Str(s) => includes.push(s),
                        other => {
                            eval.error(
                                Code::WrongKind,
                                r,
                                format!(
                                    "`cpp_includes` lists header names, not {}",
                                    other.describe()
                                ),
                            );
                            return None;
                        }
                    }
                }
            }
            v => {
                eval.error(
                    Code::WrongKind,
                    r,
                    format!(
                        "`cpp_includes` is a list of header names, not {}",
                        v.describe()
                    ),
                );
                return None;
            }
        }
    }
    Some(CppSource {
        code,
        includes,
        range,
    })
}

fn param_type(eval: &mut Eval<'_>, a: &Expr) -> ParamType {
    let range = a.syntax().text_range();
    let expected = "expected `In[Tile[M, N, dtype]]`, `Out[...]`, `InOut[...]`, `Scalar[dtype]` or `Constexpr[int]`";
    let Expr::SubscriptExpr(s) = a else {
        eval.error(
            Code::WrongKind,
            range,
            format!("{expected}, not `{}`", a.syntax().text()),
        );
        return ParamType::Unknown;
    };
    let head = match s.base() {
        Some(b) => eval.expr(&b),
        None => return ParamType::Unknown,
    };
    let indices = s.indices();
    match head {
        Value::Builtin(b @ (Builtin::In | Builtin::Out | Builtin::InOut)) => {
            let dir = match b {
                Builtin::In => Direction::In,
                Builtin::Out => Direction::Out,
                _ => Direction::InOut,
            };
            let [inner] = indices.as_slice() else {
                eval.error(
                    Code::WrongKind,
                    range,
                    format!("`{}` takes one tile type", b.name()),
                );
                return ParamType::Unknown;
            };
            if let Some(jit) = jit_type(eval, inner) {
                return jit.map_or(ParamType::Unknown, |d| ParamType::Jit(dir, d));
            }
            match tile_type(eval, inner) {
                Some(t) => ParamType::Tile(dir, t),
                None => ParamType::Unknown,
            }
        }
        Value::Builtin(Builtin::Scalar) => {
            let [inner] = indices.as_slice() else {
                eval.error(
                    Code::WrongKind,
                    range,
                    "`Scalar` takes one dtype: `Scalar[F32]`",
                );
                return ParamType::Unknown;
            };
            let v = eval.expr(inner);
            match eval.dtype(&v, inner.syntax().text_range()) {
                Some(d) => ParamType::Scalar(d),
                None => ParamType::Unknown,
            }
        }
        Value::Builtin(Builtin::Constexpr) => {
            match indices.as_slice() {
                [Expr::NameExpr(n)] if n.text() == "int" => {}
                _ => eval.error(
                    Code::WrongKind,
                    range,
                    "a compile-time parameter is `Constexpr[int]`",
                ),
            }
            ParamType::Constexpr
        }
        Value::Builtin(Builtin::Tile) => {
            eval.error(Code::WrongKind, range, "a tile parameter needs a direction: `In[Tile[...]]`, `Out[Tile[...]]` or `InOut[Tile[...]]`");
            ParamType::Unknown
        }
        Value::Unknown => ParamType::Unknown,
        v => {
            eval.error(
                Code::WrongKind,
                range,
                format!("{expected}, not {}", v.describe()),
            );
            ParamType::Unknown
        }
    }
}

/// `Tensor` or `Tensor[dtype]` inside `In[...]`: `Some(Some(dtype))`, `Some(None)` for no
/// dtype, and `None` when it is not a tensor (a `Tile[...]`); an error inside gives
/// `Some(None)` after reporting, as a JIT parameter of any dtype.
#[allow(clippy::option_option)]
fn jit_type(eval: &mut Eval<'_>, e: &Expr) -> Option<Option<Option<DType>>> {
    let is_tensor = |eval: &mut Eval<'_>, e: &Expr| {
        // Quietly: the form is decided first, then evaluated once for real.
        let (diags, uses) = (eval.diags.len(), eval.uses.len());
        let v = eval.expr(e);
        eval.diags.truncate(diags);
        eval.uses.truncate(uses);
        v == Value::Builtin(Builtin::Tensor)
    };
    match e {
        Expr::NameExpr(_) | Expr::AttributeExpr(_) if is_tensor(eval, e) => {
            eval.expr(e);
            Some(Some(None))
        }
        Expr::SubscriptExpr(s) if s.base().is_some_and(|b| is_tensor(eval, &b)) => {
            if let Some(b) = s.base() {
                eval.expr(&b);
            }
            let idx = s.indices();
            let [d] = idx.as_slice() else {
                eval.error(
                    Code::WrongKind,
                    e.syntax().text_range(),
                    "a JIT-style tile parameter is `In[Tensor]` or `In[Tensor[dtype]]`",
                );
                return Some(None);
            };
            let v = eval.expr(d);
            Some(eval.dtype(&v, d.syntax().text_range()).map(Some))
        }
        _ => None,
    }
}

fn tile_type(eval: &mut Eval<'_>, e: &Expr) -> Option<TileType> {
    let range = e.syntax().text_range();
    let bad = |eval: &mut Eval<'_>| {
        eval.error(
            Code::WrongKind,
            range,
            format!("expected `Tile[M, N, dtype]`, not `{}`", e.syntax().text()),
        );
        None
    };
    let Expr::SubscriptExpr(s) = e else {
        return bad(eval);
    };
    match s.base().map(|b| eval.expr(&b)) {
        Some(Value::Builtin(Builtin::Tile)) => {}
        Some(Value::Unknown) => return None,
        _ => return bad(eval),
    }
    let idx = s.indices();
    let [m, n, d] = idx.as_slice() else {
        eval.error(
            Code::WrongKind,
            range,
            format!(
                "a tile type is `Tile[M, N, dtype]`: 2-D, with {} arguments here instead of 3",
                idx.len()
            ),
        );
        return None;
    };
    let mv = eval.expr(m);
    let nv = eval.expr(n);
    let dv = eval.expr(d);
    let rows = eval.positive(&mv, m.syntax().text_range(), "a tile dimension");
    let cols = eval.positive(&nv, n.syntax().text_range(), "a tile dimension");
    let dtype = eval.dtype(&dv, d.syntax().text_range());
    Some(TileType::new(rows?, cols?, dtype?))
}

mod body;
mod lower;

pub use body::{BodyOp, instance_body, kernel_body};
pub(crate) use lower::{lower_instance, lower_kernel};
