//! A file of `n` top-level statements in a realistic mix, repeating every seven: a constant,
//! `pass` (WSP002), a small kernel, a constant computed from an earlier one, a rebound name
//! (WSP103, with its first definition related), an assignment with a syntax error (WSP001)
//! and one that misspells an earlier name (WSP101, with a suggestion). Shared by the analysis
//! bench and analysis/tests/scaling.rs.

pub fn mixed_statements(n: usize) -> String {
    let mut text = String::from("from pto_wsp import *\nF32 = DType.F32\n");
    for i in 0..n.saturating_sub(2) {
        let line = match i % 7 {
            0 => format!("C{i} = {i}\n"),
            1 => "pass\n".to_string(),
            2 => format!(
                "\n@kernel\ndef k{i}(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):\n    pto.store(y, pto.exp(x))\n\n"
            ),
            3 => format!("D{i} = C{} * 2 + 1\n", i - 3),
            4 => format!("C{} = 1\n", i - 4),
            5 => format!("E{i} = 1 +\n"),
            _ => format!("F{i} = V{}\n", i - 6),
        };
        text.push_str(&line);
    }
    text
}
