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

pub use body::kernel_body;
pub(crate) use lower::lower_kernel;
