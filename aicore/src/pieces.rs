//! A tile or global view declared as pieces of itself along its rows or columns: the
//! declarations that split ends ([`crate::ends`]) and matmul blocks ([`crate::parts`]) put in
//! place of a whole one's. A tile's pieces share out its bytes; a view's start further into
//! its parameter.

use std::fmt::Write as _;

use wsp_ir::arch::{GmLayout, Operand};

use crate::listing::{matching, split_top};

/// Which dimension is split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Axis {
    Rows,
    Cols,
}

/// The declarations of tile `name`'s `parts` pieces along `axis`, from its declaration
/// `line`: piece `p` is `name{suffix}{p}`, `p / parts` of the way into the tile's bytes. `None`
/// unless the tile is laid out with exactly its valid extent on `axis`, and each piece's is a
/// multiple of `unit` and starts on `align` bytes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn tile(
    line: &str,
    name: &str,
    o: &Operand,
    parts: u64,
    axis: Axis,
    unit: u64,
    align: u64,
    suffix: &str,
) -> Option<String> {
    let Operand::Tile {
        rows,
        cols,
        valid,
        offset,
        bytes,
        ..
    } = *o
    else {
        return None;
    };
    let (whole, valid_whole) = match axis {
        Axis::Rows => (rows, valid.0),
        Axis::Cols => (cols, valid.1),
    };
    let part = whole / parts;
    let part_bytes = bytes / parts;
    if valid_whole != whole
        || !whole.is_multiple_of(parts)
        || !part.is_multiple_of(unit)
        || !bytes.is_multiple_of(parts)
        || !part_bytes.is_multiple_of(align)
    {
        return None;
    }
    let indent = &line[..line.len() - line.trim_start().len()];
    let t = line.trim();
    let open = t.find('<')?;
    let (head, close) = (&t[..open], matching(t, open)?);
    let mut params = split_top(&t[open + 1..close]);
    // Where the laid-out and valid dimension split stands among the template's arguments.
    let (laid, valid_at) = match (head, axis) {
        ("Tile", Axis::Rows) => (2, 5),
        ("Tile", Axis::Cols) => (3, 6),
        ("TileLeft" | "TileRight" | "TileAcc", Axis::Rows) => (1, 3),
        ("TileLeft" | "TileRight" | "TileAcc", Axis::Cols) => (2, 4),
        _ => return None,
    };
    for i in [laid, valid_at] {
        *params.get_mut(i)? = part.to_string();
    }
    let memory = t.split("// ").nth(1)?.split(' ').next()?;
    let mut out = String::new();
    for p in 0..parts {
        let at = offset + p * part_bytes;
        let _ = writeln!(
            out,
            "{indent}{head}<{}> {name}{suffix}{p}; TASSIGN({name}{suffix}{p}, 0x{at:x});  // {memory} [{at}, {}), {} [{}, {}) of {name}",
            params.join(", "),
            at + part_bytes,
            if axis == Axis::Rows {
                "rows"
            } else {
                "columns"
            },
            p * part,
            (p + 1) * part
        );
    }
    Some(out)
}

/// The declarations of global view `name`'s `parts` pieces along `axis`, from its declaration
/// `line`: piece `p` is `name{suffix}{p}`, starting `p` pieces' rows or columns further on.
pub(crate) fn view(
    line: &str,
    name: &str,
    layout: GmLayout,
    parts: u64,
    axis: Axis,
    suffix: &str,
) -> Option<String> {
    let indent = &line[..line.len() - line.trim_start().len()];
    let t = line.trim();
    let shape = t.get(t.find("pto::Shape<")?..)?;
    let shape = &shape[..shape.find('>')? + 1];
    let dims: Vec<u64> = shape
        .strip_prefix("pto::Shape<")?
        .strip_suffix('>')?
        .split(", ")
        .map(|d| d.parse().ok())
        .collect::<Option<_>>()?;
    let [1, 1, 1, rows, cols] = dims[..] else {
        return None;
    };
    let whole = if axis == Axis::Rows { rows } else { cols };
    if !whole.is_multiple_of(parts) {
        return None;
    }
    let part = whole / parts;
    let (prows, pcols) = match axis {
        Axis::Rows => (part, cols),
        Axis::Cols => (rows, part),
    };
    let part_shape = format!("pto::Shape<1, 1, 1, {prows}, {pcols}>");
    let open = t.find(&format!(" {name}("))? + name.len() + 2;
    let ptr = t[open..].split(", pto::Shape").next()?;
    // The stride between rows (row major) or columns (column major).
    let stride = t.rsplit_once(">(")?.1.strip_suffix("));")?;
    if stride.is_empty() {
        return None;
    }
    // Row major, a row is `stride` on; column major, a column is.
    let strided = (axis == Axis::Rows) == (layout == GmLayout::Nd);
    let mut out = String::new();
    for p in 0..parts {
        let at = match (p, strided) {
            (0, _) => ptr.to_string(),
            (_, true) => format!("{ptr} + {} * {stride}", p * part),
            (_, false) => format!("{ptr} + {}", p * part),
        };
        let _ = writeln!(
            out,
            "{indent}{}",
            t.replace(shape, &part_shape).replacen(
                &format!(" {name}({ptr}, "),
                &format!(" {name}{suffix}{p}({at}, "),
                1
            )
        );
    }
    Some(out)
}
