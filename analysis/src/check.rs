//! A file's diagnostics: every stage's results gathered, placed in the file, deduplicated and
//! ordered. This is the one query front ends call.

use crate::checks::npu_kernels::npu_kernel_checks;
use crate::checks::programs::{program_checks, tensor_size_checks};
use crate::checks::{self};
use crate::diagnostics::{Code, Diag, Diagnostic, FileFix, Span};
use crate::eval::{describe_syntax, item_value, workload_params};
use crate::files::File;
use crate::items::{Item, ItemKind, item_offsets, module_items};
use crate::kernels::{kernel_body, kernel_signature};
use crate::names::module_scope;
use crate::values::Value;
use crate::workloads::{process_generic, workload_generic};
use std::collections::{HashMap, HashSet};
use wsp_syntax::TextRange;
use wsp_syntax::ast::AstNode;

/// The file lowered to IR, or `None` when it has errors (`file_diagnostics` says which).
#[salsa::tracked(returns(ref))]
pub fn lower_file(db: &dyn salsa::Database, file: File) -> Option<crate::lower::LoweredFile> {
    if file_diagnostics(db, file)
        .iter()
        .any(|d| d.severity == crate::diagnostics::Severity::Error)
    {
        return None;
    }
    crate::lower::lower_file_as_is(db, file).clone()
}

/// Every diagnostic of `file`, in order of position.
pub fn file_diagnostics(db: &dyn salsa::Database, file: File) -> &Vec<Diagnostic> {
    // Salsa 0.28.5 keeps each query-stack depth's dependency table at the largest size a query
    // there ever needed, and clears all of it at the end of every later query at that depth
    // (salsa-rs/salsa#1236). The queries over every statement of the file run here first, at
    // the caller's depth, so that the many small queries per item, one level down inside
    // `file_diagnostics_of`, never share their depth: otherwise each of those clears a table
    // sized for the whole file.
    module_items(db, file);
    module_scope(db, file);
    item_offsets(db, file);
    file_diagnostics_of(db, file)
}

/// Items per chunk of the file's diagnostics: the file's query depends on a chunk, not on
/// every item, so its dependencies are few, and an edit re-runs one chunk (gathering and
/// placing the diagnostics of its items, which was 15% of an edit of a 10k-line file at 1,024).
const CHUNK: usize = 256;

#[salsa::tracked(returns(ref))]
fn file_diagnostics_of(db: &dyn salsa::Database, file: File) -> Vec<Diagnostic> {
    let items = module_items(db, file);
    let mut diags: Vec<Diag> = module_scope(db, file).diags.clone();
    diags.extend(tensor_size_checks(db, file).iter().cloned());
    diags.extend(checks::file_plan_checks(db, file).iter().cloned());

    let place = placer(db, file);
    let mut out: Vec<Diagnostic> = file
        .parse(db)
        .errors()
        .iter()
        .map(|e| Diagnostic {
            code: Code::Syntax,
            severity: Code::Syntax.severity(),
            range: e.range,
            message: e.message.clone(),
            related: Vec::new(),
            fix: None,
        })
        .collect();
    let broken = broken_items(db, file);
    let mut placed: Vec<Diagnostic> = diags
        .into_iter()
        .filter(|d| !broken.contains(&d.span.item))
        .map(&place)
        .collect();
    for chunk in 0..items.len().div_ceil(CHUNK) {
        placed.extend(chunk_diagnostics(db, file, chunk as u32).iter().cloned());
    }
    // Stages may find the same problem twice (a name read by two queries): keep the first.
    // Found by the message's hash, not a copy of it (a file may have a million diagnostics),
    // and compared whole: a hash collision keeps both.
    let state = std::hash::RandomState::new();
    let key = |d: &Diagnostic| {
        use std::hash::BuildHasher;
        (d.code, d.range, state.hash_one(&d.message))
    };
    let mut first: HashMap<(Code, TextRange, u64), usize> = HashMap::new();
    for (i, d) in out.iter().enumerate() {
        first.entry(key(d)).or_insert(i);
    }
    for d in placed {
        crate::work::step(1);
        let k = key(&d);
        match first.get(&k) {
            Some(&i) if out[i].message == d.message => {}
            Some(_) => out.push(d),
            None => {
                first.insert(k, out.len());
                out.push(d);
            }
        }
    }
    out.sort_by_key(|d| (d.range.start(), d.range.end(), d.code));
    out
}

/// The diagnostics of the items of one chunk of the file, placed in the file; those of an item
/// with a syntax error left out (they would follow from it).
#[salsa::tracked(returns(ref))]
fn chunk_diagnostics(db: &dyn salsa::Database, file: File, chunk: u32) -> Vec<Diagnostic> {
    let all = module_items(db, file);
    let start = (chunk as usize * CHUNK).min(all.len());
    let items = &all[start..(start + CHUNK).min(all.len())];
    let mut diags: Vec<Diag> = Vec::new();
    for &item in items {
        crate::work::step(1);
        item_diagnostics(db, item, &mut diags);
    }
    let broken = broken_items(db, file);
    let place = placer(db, file);
    diags
        .into_iter()
        .filter(|d| !broken.contains(&d.span.item))
        .map(place)
        .collect()
}

/// The diagnostics of one item that its chunk gathers, from the queries its kind has.
fn item_diagnostics<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
    diags: &mut Vec<Diag<'db>>,
) {
    match item.kind(db) {
        ItemKind::Import => {}
        ItemKind::Assign | ItemKind::Expr => {
            let value = item_value(db, item);
            diags.extend(value.diags.iter().cloned());
            // Only the queries that have something to check for this kind of value: each
            // query asked keeps a memo, which a file of millions of statements feels.
            if !value.explores.is_empty() {
                diags.extend(
                    checks::programs::exploration_checks(db, item)
                        .iter()
                        .cloned(),
                );
            }
            match &value.value {
                Value::Process(_) => {
                    diags.extend(process_generic(db, item).diags.iter().cloned());
                }
                Value::Tensor(_) => {
                    diags.extend(checks::npu_kernels::npu_view_checks(db, item));
                }
                Value::Program(_) => {
                    diags.extend(checks::npu_kernels::npu_program_checks(db, item));
                    diags.extend(program_checks(db, item).iter().cloned());
                }
                _ => {}
            }
        }
        ItemKind::Kernel => {
            diags.extend(kernel_signature(db, item).diags.iter().cloned());
            diags.extend(kernel_body(db, item).diags.iter().cloned());
            diags.extend(checks::out_never_stored::check(db, item));
            diags.extend(checks::unused_values::check(
                db,
                crate::kernels::KernelInstance::plain(db, item),
            ));
            diags.extend(npu_kernel_checks(db, item).iter().cloned());
        }
        ItemKind::Workload => {
            diags.extend(workload_params(db, item).1.iter().cloned());
            diags.extend(workload_generic(db, item).diags.iter().cloned());
        }
        ItemKind::Other => diags.extend(outside_subset(db, item)),
    }
}

/// Runs the queries each item of `file` needs for the file's diagnostics on rayon's threads,
/// each thread on a handle of its own, so that `file_diagnostics` then mostly gathers memos:
/// a file's items are analyzed in parallel (the workloads its programs call too, which
/// `checks::file_plan_checks` reads). The results are the same whether or not this ran first.
pub fn analyze_items_in_parallel(db: &crate::Database, file: File) {
    use rayon::prelude::*;
    // Below this, starting the threads costs more than it saves.
    const MIN_ITEMS: usize = 64;
    let items = module_items(db, file);
    if items.len() < MIN_ITEMS || rayon::current_num_threads() < 2 {
        return;
    }
    items.par_iter().for_each_with(db.clone(), |db, &item| {
        let db: &dyn salsa::Database = db;
        item_diagnostics(db, item, &mut Vec::new());
        if matches!(item.kind(db), ItemKind::Assign | ItemKind::Expr) {
            for &call in &item_value(db, item).calls {
                crate::workloads::workload_instance(db, call);
            }
        }
    });
}

/// A function placing an item's diagnostic in the file.
fn placer<'db>(db: &'db dyn salsa::Database, file: File) -> impl Fn(Diag<'db>) -> Diagnostic {
    // By the item's position, from the map the module scope already keeps.
    let scope = module_scope(db, file);
    let offsets = item_offsets(db, file);
    move |d: Diag<'db>| {
        let place = |span: &Span| -> TextRange {
            let at = offsets.get(scope.position(span.item)).copied();
            span.range + at.unwrap_or_default()
        };
        Diagnostic {
            code: d.code,
            severity: d.severity(),
            range: place(&d.span),
            message: d.message,
            related: d
                .related
                .iter()
                .map(|r| (place(&r.span), r.message.clone()))
                .collect(),
            fix: d.fix.map(|f| FileFix {
                title: f.title,
                edits: f.edits.iter().map(|(s, t)| (place(s), t.clone())).collect(),
                applicability: f.applicability,
            }),
        }
    }
}

/// WSP208 for the views a run would take out of their tensors with run-time symbols bound
/// from outside the file (`wsp run --bind`, the notebook's `%bind`), each binding shown as
/// `how(name, value)` says: known from the static shapes, so reported before anything is
/// built, at the view.
pub fn binding_diagnostics(
    db: &dyn salsa::Database,
    file: File,
    bindings: &[(String, u64)],
    how: &dyn Fn(&str, u64) -> String,
) -> Vec<Diagnostic> {
    let place = placer(db, file);
    let mut out: Vec<Diagnostic> = checks::programs::binding_checks(db, file, bindings, how)
        .into_iter()
        .map(place)
        .collect();
    out.sort_by_key(|d| (d.range.start(), d.range.end(), d.code));
    out
}

/// The items a syntax error falls in (or ends, for an empty error at an item's end). Items
/// are in file order and do not overlap, so each error has at most two candidates, found by
/// binary search: the last item starting at or before it, and the one before that (whose end
/// an empty error at the next item's start may touch).
#[salsa::tracked(returns(ref))]
fn broken_items(db: &dyn salsa::Database, file: File) -> HashSet<Item<'_>> {
    let items = module_items(db, file);
    let offsets = item_offsets(db, file);
    let mut broken = HashSet::new();
    for e in file.parse(db).errors() {
        let after = offsets.partition_point(|&start| start <= e.range.start());
        for k in after.saturating_sub(2)..after {
            crate::work::step(1);
            let (Some(&item), Some(&start)) = (items.get(k), offsets.get(k)) else {
                continue;
            };
            let range = TextRange::at(start, item.green(db).text_len());
            if range.contains_range(e.range)
                || (e.range.is_empty() && e.range.start() == range.end())
            {
                broken.insert(item);
            }
        }
    }
    broken
}

/// WSP002 for a top-level statement outside the subset.
fn outside_subset<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Option<Diag<'db>> {
    let node = item.syntax(db);
    // A statement the parser could not read is already a syntax error.
    if node.kind() == wsp_syntax::SyntaxKind::ERROR {
        return None;
    }
    let range = match item.stmt(db) {
        Some(wsp_syntax::ast::Stmt::FunctionDef(f)) => {
            f.name().map_or(node.text_range(), |n| n.text_range())
        }
        Some(s) => s
            .syntax()
            .first_token()
            .map_or(node.text_range(), |t| t.text_range()),
        None => return None,
    };
    let message = match item.stmt(db) {
        Some(wsp_syntax::ast::Stmt::FunctionDef(_)) => {
            "a `def` at module level is a kernel (`@kernel`) or a workload (`@workload`)"
                .to_string()
        }
        Some(wsp_syntax::ast::Stmt::AssignStmt(a)) if a.targets().count() == 1 => {
            "a module-level assignment binds a name, or unpacks a tuple written out with one value per name: `NAME = ...`, `B, S = 2, 16`".to_string()
        }
        Some(wsp_syntax::ast::Stmt::AssignStmt(_)) => {
            "a module-level assignment binds one name at a time: `A = 1` then `B = A`".to_string()
        }
        _ => format!("{} is not part of WSP", describe_syntax(&node)),
    };
    Some(Diag::new(
        Code::OutsideSubset,
        Span { item, range },
        message,
    ))
}
