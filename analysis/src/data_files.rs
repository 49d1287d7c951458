//! WSP211: the `.npy` files tensors load (`init=load_npy("w.npy")`) checked against the tensors
//! when the file is checked, not first when it runs: a missing or unreadable file, a file that
//! is not `.npy`, another shape, or a dtype the runtime cannot convert. Only each file's header
//! is read (magic, version, a length-checked header dict), never its data. Reading is the
//! front end's, at check time (`wsp check`, `wsp run`, the language server on each change of a
//! watched `.npy`): the queries of the database never touch the disk.
//! Page: docs/diagnostics/WSP211.md.

use std::io::Read;
use std::path::Path;

use wsp_syntax::TextRange;
use wsp_syntax::ast::{self, AstNode, Expr};

use crate::diagnostics::{Code, Diagnostic};
use crate::eval::item_value;
use crate::files::File;
use crate::items::{ItemKind, item_offsets, module_items};
use crate::values::{Init, Value};

/// An `.npy` header's dict may be at most this long: NumPy writes ~120 bytes, and a longer one
/// is not read (the length field is untrusted).
const MAX_HEADER: usize = 1 << 20;

/// What a `.npy` file's header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    pub shape: Vec<u64>,
    /// NumPy's dtype string: `<f4`, `|u1`, ...
    pub descr: String,
}

/// The header of the `.npy` file at `path`; the error says why there is none.
pub fn read_npy_header(path: &Path) -> Result<NpyHeader, String> {
    let mut f = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("does not exist: no file at `{}`", path.display()),
        _ => format!("cannot be read: {e}"),
    })?;
    let mut head = [0u8; 10];
    f.read_exact(&mut head)
        .map_err(|_| "is not a .npy file: it is too short".to_string())?;
    if &head[..6] != b"\x93NUMPY" {
        return Err("is not a .npy file: it does not start with NumPy's magic string".into());
    }
    // Versions 2 and 3 have a 4-byte header length.
    let (len, fixed) = match head[6] {
        1 => (usize::from(u16::from_le_bytes([head[8], head[9]])), 10),
        2 | 3 => {
            let mut more = [0u8; 2];
            f.read_exact(&mut more)
                .map_err(|_| "is not a .npy file: it is too short".to_string())?;
            let len = u32::from_le_bytes([head[8], head[9], more[0], more[1]]);
            (usize::try_from(len).unwrap_or(usize::MAX), 12)
        }
        v => return Err(format!("is a .npy file of version {v}, which is not read")),
    };
    if len > MAX_HEADER {
        return Err(format!(
            "is not a .npy file WSP reads: its header claims {len} bytes"
        ));
    }
    let mut bytes = head[..fixed.min(10)].to_vec();
    if fixed == 12 {
        bytes.extend_from_slice(&(len as u32).to_le_bytes()[2..]);
    }
    let mut dict = vec![0u8; len];
    f.read_exact(&mut dict)
        .map_err(|_| "is not a .npy file: its header is cut short".to_string())?;
    bytes.extend_from_slice(&dict);
    // The header alone, parsed by npyz; the data is never read.
    let npy = npyz::NpyFile::new(&bytes[..]).map_err(|e| format!("is not a .npy file: {e}"))?;
    Ok(NpyHeader {
        shape: npy.shape().to_vec(),
        descr: npy.dtype().descr().trim_matches('\'').to_string(),
    })
}

/// The WSP211 diagnostics of `file`'s `load_npy` inits, each at the path string, with headers
/// read by `header` from paths relative to the file's folder.
pub fn data_file_diagnostics(
    db: &dyn salsa::Database,
    file: File,
    header: &dyn Fn(&Path) -> Result<NpyHeader, String>,
) -> Vec<Diagnostic> {
    let base = file
        .path(db)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut out = Vec::new();
    let items = module_items(db, file);
    for (&item, &start) in items.iter().zip(item_offsets(db, file)) {
        if item.kind(db) != ItemKind::Assign {
            continue;
        }
        let Value::Tensor(t) = &item_value(db, item).value else {
            continue;
        };
        let Some(Init::LoadNpy(path)) = &t.init else {
            continue;
        };
        let range = load_npy_path(&item.syntax(db)).unwrap_or_default() + start;
        let error = |message: String| Diagnostic {
            code: Code::DataFile,
            severity: Code::DataFile.severity(),
            range,
            message,
            related: Vec::new(),
            fix: None,
        };
        match header(&base.join(path)) {
            Err(why) => out.push(error(format!("`{path}` {why}"))),
            Ok(h) if h.shape != t.shape => out.push(error(format!(
                "`{path}` holds an array of shape {} but tensor `{}` is {}",
                shape(&h.shape),
                t.name,
                shape(&t.shape)
            ))),
            Ok(h) if !wsp_ir::plan::NPY_READABLE
                .contains(&h.descr.trim_start_matches(['<', '|', '='])) =>
            {
                out.push(error(format!(
                    "`{path}` holds dtype `{}`, which WSP cannot convert to `{}`'s {} (it reads bool, int, uint and float files)",
                    h.descr, t.name, t.dtype
                )))
            }
            Ok(_) => {}
        }
    }
    out
}

fn shape(s: &[u64]) -> String {
    let dims: Vec<String> = s.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

/// The range of the path string of the `load_npy("...")` in an item, relative to it.
fn load_npy_path(node: &wsp_syntax::SyntaxNode) -> Option<TextRange> {
    let base = node.text_range().start();
    node.descendants()
        .filter_map(ast::CallExpr::cast)
        .find_map(|c| {
            match c.callee()? {
                Expr::NameExpr(n) if n.text() == "load_npy" => {}
                _ => return None,
            }
            let arg = c.args().next()?.value()?;
            Some(arg.syntax().text_range() - base)
        })
}

/// Everything a front end shows for `file`: its diagnostics (`file_diagnostics`) and those of
/// the `.npy` files it loads, their headers read from disk now, in order of position, less
/// what its `# noqa` comments suppress.
pub fn diagnostics_with_data_files(db: &crate::Database, file: File) -> Vec<Diagnostic> {
    crate::suppress::apply_suppressions(db, file, unsuppressed_diagnostics(db, file), true)
}

/// `diagnostics_with_data_files` before the file's `# noqa` comments apply: what a build must
/// heed, since a suppressed error still stops it.
pub fn unsuppressed_diagnostics(db: &crate::Database, file: File) -> Vec<Diagnostic> {
    db.make_items(file);
    if db.first_analysis(file) {
        crate::check::analyze_items_in_parallel(db, file);
    }
    let mut all = crate::check::file_diagnostics(db, file).clone();
    all.extend(data_file_diagnostics(db, file, &read_npy_header));
    all.sort_by_key(|d| (d.range.start(), d.range.end(), d.code));
    all
}
