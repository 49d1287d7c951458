//! Loops over a whole ragged axis iterate every element, row by row, the variable being the
//! element's index (the original's flattening): bounds are checked against the sum of the
//! lengths, races for any total when the lengths are tensor data. A loop over a whole Sparse
//! axis, rows or entries, is an error rather than a guess.

mod common;

use expect_test::{Expect, expect};

fn check(axes: &str, body: &str, expect: Expect) {
    let text = format!(
        r#"from pto_wsp import *

I32 = DType.I32
Lens = Tensor((2,), I32, init=full(2))
{axes}
Y = Tensor((3, 1, 1), I32)

@kernel
def mark(y: InOut[Tile[1, 1, I32]]):
    pto.store(y, pto.add(pto.load(y), pto.constant(1.0, I32)))

@workload
def wl():
{body}

program = wl().compile(target="cpu_sim")
"#
    );
    expect.assert_eq(&common::diagnostics_shown(&text));
}

#[test]
fn a_whole_ragged_axis_is_bounded_by_the_sum_of_its_lengths() {
    let body = "    for t in P.seq(tokens):\n        mark[t](Y[t])";
    check("tokens = Ragged(2, lengths=[1, 2])", body, expect![[r#""#]]);
    check(
        "tokens = Ragged(2, lengths=[2, 2])",
        body,
        expect![[r#"
            WSP208 `t`: `t` reaches 3, out of range for dimension 0 of `Y`, which has extent 3
        "#]],
    );
}

#[test]
fn a_whole_ragged_axis_of_data_lengths_races_for_any_total() {
    check(
        "tokens = Ragged(2, lengths=Lens)",
        "    for t in P(tokens):\n        mark[t](Y[0])",
        expect![[r#"
            WSP301 `Y[0]`: `Y[0]` is written by parallel iterations (t=0) and (t=1) of this `P` loop, which both write `Y[0]`; `t` runs over every element of `tokens`, whose lengths are tensor data read at run time: this happens whenever they add up to 2 or more
        "#]],
    );
    check(
        "tokens = Ragged(2, lengths=Lens)",
        "    for t in P(tokens):\n        mark[t](Y[t])",
        expect![[r#""#]],
    );
}

#[test]
fn a_loop_over_a_whole_sparse_axis_is_an_error_not_a_guess() {
    check(
        "routing = Sparse(2, indptr=[0, 1, 2], indices=[0, 1])",
        "    for t in P(routing):\n        mark[t](Y[t])",
        expect![[r#"
            WSP210 `routing`: `P` over the whole Sparse axis `routing` could mean its rows or its entries: iterate the rows with `P(Dense[2])`, a row's entries with `P.sel(routing[b])`
        "#]],
    );
}

#[test]
fn a_row_index_past_the_axis_rows_is_out_of_range() {
    check(
        "tokens = Ragged(2, lengths=[1, 2])",
        "    for b in P(Dense[3]):\n        for t in P(tokens[b]):\n            mark[b, t](Y[b])",
        expect![[r#"
            WSP208 `b`: `b` reaches row 2 of `tokens`, which has 2 rows
        "#]],
    );
    check(
        "tokens = Ragged(2, lengths=[1, 2])",
        "    for t in P(tokens[5]):\n        mark[t](Y[t])",
        expect![[r#"
            WSP208 `5`: row 5 is past the rows of `tokens`, which has 2
        "#]],
    );
    check(
        "routing = Sparse(2, indptr=[0, 1, 2], indices=[0, 1])",
        "    for b in P(Dense[3]):\n        for e in P.sel(routing[b]):\n            mark[b, e](Y[b])",
        expect![[r#"
            WSP208 `b`: `b` reaches row 2 of `routing`, which has 2 rows
        "#]],
    );
}

#[test]
fn tensor_lengths_of_the_wrong_count_are_refused_when_checked() {
    check(
        "tokens = Ragged(3, lengths=Lens)",
        "    for t in P(tokens):\n        mark[t](Y[0])",
        expect![[r#"
            WSP203 `Lens`: `lengths` has 2 entries for 3 rows
        "#]],
    );
    check(
        "routing = Sparse(2, indptr=Lens, indices=Lens)",
        "    for b in P(Dense[2]):\n        for e in P.sel(routing[b]):\n            mark[b, e](Y[b])",
        expect![[r#"
            WSP203 `Lens`: `indptr` has 2 entries for 2 rows (it takes rows + 1)
        "#]],
    );
}
