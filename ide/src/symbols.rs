//! Document symbols: the file's module-level definitions for the editor's outline, with the
//! parameters of kernels and workloads.

use wsp_analysis::File;
use wsp_analysis::semantic::{
    Annotation, Item, ItemKind, SymbolKind, Value, item_kind, item_offsets, item_value,
    kernel_signature, module_items, name_range, shape_text, workload_params,
};
use wsp_syntax::TextRange;

/// The file's module-level definitions in order, with the parameters of kernels and workloads.
pub fn file_symbols(db: &dyn salsa::Database, file: File) -> Vec<FileSymbol> {
    let mut out = Vec::new();
    for (&item, &base) in module_items(db, file).iter().zip(item_offsets(db, file)) {
        let name = item.name(db);
        let Some(name_range) = name_range(db, item).filter(|_| !name.is_empty()) else {
            continue;
        };
        let param = |name: &str, range: TextRange, detail: String| FileSymbol {
            name: name.to_string(),
            kind: SymbolKind::Parameter,
            range: range + base,
            name_range: range + base,
            detail,
            children: Vec::new(),
        };
        let children = match item.kind(db) {
            ItemKind::Kernel => kernel_signature(db, item)
                .params
                .iter()
                .map(|p| param(&p.name, p.range, p.ty.to_string()))
                .collect(),
            ItemKind::Workload => workload_params(db, item)
                .0
                .iter()
                .map(|p| param(&p.name, p.range, annotation_text(p.annotation)))
                .collect(),
            _ => Vec::new(),
        };
        out.push(FileSymbol {
            name: name.clone(),
            kind: item_kind(db, item),
            range: item.syntax(db).text_range() + base,
            name_range: name_range + base,
            detail: item_detail(db, item),
            children,
        });
    }
    out
}

/// A definition, for the editor's outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSymbol {
    pub name: String,
    pub kind: SymbolKind,
    /// The whole definition.
    pub range: TextRange,
    pub name_range: TextRange,
    /// A short description: a tensor's shape and dtype, an axis's kind and size, a type.
    pub detail: String,
    pub children: Vec<FileSymbol>,
}

/// What a module-level item is, in a few words: `kernel(x, out, eps)`, `[4,16,128] F32`.
pub fn item_detail(db: &dyn salsa::Database, item: Item<'_>) -> String {
    let list = |names: Vec<&str>| names.join(", ");
    match item.kind(db) {
        ItemKind::Kernel => {
            let params = &kernel_signature(db, item).params;
            format!(
                "kernel({})",
                list(params.iter().map(|p| p.name.as_str()).collect())
            )
        }
        ItemKind::Workload => {
            let params = &workload_params(db, item).0;
            format!(
                "workload({})",
                list(params.iter().map(|p| p.name.as_str()).collect())
            )
        }
        _ => match &item_value(db, item).value {
            Value::Tensor(t) => format!("{} {}", shape_text(&t.shape), t.dtype),
            Value::Axis(a) => format!("{} {}", a.kind.name(), a.size),
            v => v.describe(),
        },
    }
}

/// A workload parameter's annotation as written: `Dense`, `Tensor`, or nothing.
pub(crate) fn annotation_text(a: Option<Annotation>) -> String {
    match a {
        Some(Annotation::Axis(Some(k))) => k.name().to_string(),
        Some(Annotation::Axis(None)) => "axis".to_string(),
        Some(Annotation::Tensor) => "Tensor".to_string(),
        None => String::new(),
    }
}
