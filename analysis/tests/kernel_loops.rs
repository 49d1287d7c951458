//! Kernels that loop over tiles of their tensor parameters: `for k in range(...)` and
//! `pto.range(..., num_stages=)`, slices of tile parameters loaded and stored, values carried
//! across iterations; what each mistake is told, where.

mod common;

use expect_test::{Expect, expect};

const HEADER: &str = r#"from pto_wsp import *

F16 = DType.F16
F32 = DType.F32
A = Tensor((256, 128), F16, init=randn(seed=1))
B = Tensor((128, 256), F16, init=randn(seed=2))
C = Tensor((256, 256), F32)
one = Dense[1]
"#;

/// A kernel `k(a, b, c)` over A, B and C with `body` (indented by the caller), run by one task.
fn kernel(params: &str, body: &str) -> String {
    format!(
        r#"{HEADER}

@kernel
def k({params}):
{body}

@workload
def w(one):
    for i in P(one):
        k[i](a=A, b=B, c=C)

program = w(one).compile(target="cpu_sim")
"#
    )
}

const GEMM_PARAMS: &str = "a: In[Tensor[F16]], b: In[Tensor[F16]], c: Out[Tensor[F32]]";

/// The diagnostics, or the lowered kernels.
fn check(text: &str, expect: Expect) {
    expect.assert_eq(&common::diagnostics_or_lowered(text, |p| {
        let text = p.to_string();
        let from = text.find("\nkernel").unwrap_or(0);
        let to = text.find("\nworkload").unwrap_or(text.len());
        text[from..to].to_string()
    }));
}

#[test]
fn a_k_loop_carries_its_accumulator() {
    check(
        &kernel(
            GEMM_PARAMS,
            r#"    for m in range(2):
        for n in range(0, 256, 128):
            acc = pto.alloc((128, 128), F32)
            for k in pto.range(4, num_stages=2):
                a_t = pto.load(a[m * 128:(m + 1) * 128, k * 32:k * 32 + 32])
                acc = pto.matmul(a_t, b[k * 32:(k + 1) * 32, n:n + 128], acc=acc)
            pto.store(c[m * 128:(m + 1) * 128, n:n + 128], acc)"#,
        ),
        expect![[r#"

            kernel k__256x128_f16__128x256_f16__256x256_f32(a: In Tile[256,128] F16, b: In Tile[128,256] F16, c: Out Tile[256,256] F32)
              for m in 0..2
                for n in 0..2
                  %0 = alloc((128, 128), F32) : Tile[128,128] F32
                  for k in 0..4 stages 2
                    %1 = carry(%0, %4) : Tile[128,128] F32
                    %2 = load(a, [128*m], [32*k]) : Tile[128,32] F16
                    %3 = load(b, [32*k], [128*n]) : Tile[32,128] F16
                    %4 = matmul(%2, %3, %1) : Tile[128,128] F32
                  store(c, %4, [128*m], [128*n])
        "#]],
    );
}

#[test]
fn a_slice_outside_its_parameter_names_the_iteration() {
    check(
        &kernel(
            GEMM_PARAMS,
            r#"    for m in range(3):
        t = pto.load(a[m * 128:(m + 1) * 128, 0:64])
        pto.store(c[0:128, 0:64], pto.cast(t, F32))"#,
        ),
        expect![[r#"
            WSP208 `m * 128:(m + 1) * 128`: `m * 128:(m + 1) * 128` reaches rows 256:384 of `a`, which has 256 rows
        "#]],
    );
}

#[test]
fn a_partial_tile_is_loaded_with_a_pad_value() {
    check(
        &kernel(
            GEMM_PARAMS,
            r#"    for m in range(3):
        t = pto.load(a[m * 96:(m + 1) * 96, 0:64], pad=0.0)
        pto.store(c[m * 96:(m + 1) * 96, 0:64], pto.cast(t, F32))
        u = pto.load(a[m * 96:(m + 1) * 96, 0:64])
    for n in range(4):
        pto.store(c[0:16, n * 96:n * 96 + 96], pto.alloc((16, 96), F32))"#,
        ),
        expect![[r#"
            WSP208 `m * 96:(m + 1) * 96`: `m * 96:(m + 1) * 96` reaches rows 192:288 of `a`, which has 256 rows; to load a partial tile, name what fills the rest: `pto.load(a[m * 96:(m + 1) * 96, 0:64], pad=0.0)`
            WSP208 `n * 96:n * 96 + 96`: `n * 96:n * 96 + 96` reaches columns 288:384 of `c`, which has 256 columns
        "#]],
    );
}

/// A value used only by ops that read a JIT-style parameter is used: the untyped body lacks
/// those ops, so unused values are found in each binding's body.
#[test]
fn a_value_read_with_a_tensor_parameter_is_used() {
    check(
        &kernel(
            "a: In[Tile[256, 128, F16]], b: In[Tensor[F16]], c: Out[Tensor[F32]]",
            r#"    at = pto.load(a)
    acc = pto.alloc((256, 64), F32)
    for n in range(4):
        acc = pto.add(acc, pto.matmul(at, pto.load(b[:, n * 64:(n + 1) * 64])))
        unused = pto.exp(pto.load(b[:, 0:64]))
    pto.store(c[:, 0:64], acc)"#,
        ),
        expect![[r#"
            WSP207 `pto.exp(pto.load(b[:, 0:64]))`: the value of `pto.exp` is never used: store it (`pto.store(out, ...)`), use it in another op, or remove it
        "#]],
    );
}

#[test]
fn loop_mistakes_point_at_the_header() {
    check(
        &kernel(
            GEMM_PARAMS,
            r#"    for m in range(0):
        pass
    for n in range(K):
        pass
    for p in pto.range(2, num_stages=0):
        pass
    for q, r in range(2):
        pass
    for s in [1, 2]:
        pass
    for u in range(2):
        for u in range(2):
            pass
    for v in pto.range(2, num_stages=2, num_stages=3):
        pass
    for w in range(8192):
        for x in range(4096):
            pass
    pto.store(c, pto.alloc((256, 256), F32))"#,
        ),
        expect![[r#"
            WSP208 `for m in range(0):`: this loop runs no iteration (`range(0)` is empty): a kernel loop runs at least once
            WSP101 `K`: unknown name `K`
            WSP203 `num_stages=0`: `num_stages` is a pipelining depth from 1 to 8, not 0
            WSP002 `q, r`: a kernel loop binds one name: `for k in range(n):`
            WSP002 `[1, 2]`: a kernel loop runs over `range(n)`, `range(start, stop[, step])` or `pto.range(n, num_stages=s)`, of integer constants
            WSP103 `u`: `u` is already the variable of a loop around this one
            WSP203 `num_stages=3`: `num_stages` is given twice
            WSP208 `for x in range(4096):`: with the loops around it this loop runs 33554432 iterations per task; a kernel's loops run at most 16777216 in all
        "#]],
    );
}

#[test]
fn a_carried_value_keeps_its_type() {
    check(
        &kernel(
            GEMM_PARAMS,
            r#"    acc = pto.alloc((128, 128), F32)
    for k in range(2):
        acc = pto.cast(acc, F16)
    x = pto.load(a[0:128, 0:128])
    for k in range(2):
        y = pto.mul(x, k)
    pto.store(c, pto.alloc((256, 256), F32))"#,
        ),
        expect![[r#"
            WSP202 `acc`: `acc` is Tile[128,128] F32 before the loop but Tile[128,128] F16 after an iteration: a value carried across a loop's iterations keeps its type
            WSP210 `k`: `k` is a loop variable: a kernel uses it in the bounds of a slice of a tile parameter (`x[k*64:(k+1)*64, :]`), not as a tile value
        "#]],
    );
}

#[test]
fn slices_keep_a_constant_extent_and_both_dimensions() {
    check(
        &kernel(
            GEMM_PARAMS,
            r#"    for m in range(2):
        t = pto.load(a[0:m + 1, 0:64])
        u = pto.load(a[m, 0:64])
        v = pto.load(a[0:64, 0:64:2])
        pto.store(c[0:128, 0:128], pto.matmul(a[0:128, 0:64], b[0:64, 0:96]))"#,
        ),
        expect![[r#"
            WSP210 `0:m + 1`: the slice `0:m + 1` must keep a constant, positive extent (its end minus its start is `m + 1`); write it as `start:start + N`
            WSP210 `m`: a tile keeps both its dimensions: slice this one (`m:m + 1`)
            WSP002 `0:64:2`: a tile slice has no step: `lo:hi`
            WSP201 `pto.matmul(a[0:128, 0:64], b[0:64, 0:96])`: `pto.store`: `c[0:128, 0:128]` is [128,128] F32 but the value `pto.matmul(a[0:128, 0:64], b[0:64, 0:...` is [128,96] F32
        "#]],
    );
}

#[test]
fn stores_and_loads_keep_their_directions() {
    check(
        &kernel(
            GEMM_PARAMS,
            r#"    pto.store(a[0:128, 0:128], pto.load(c[0:128, 0:128]))"#,
        ),
        expect![[r#"
            WSP205 `c`: `Out` parameter `c` is never stored: add `pto.store(c, ...)`
            WSP204 `a`: `a` is `In` and cannot be stored here; make it `InOut` if the kernel writes it
            WSP204 `c`: `c` is `Out` and cannot be loaded here; make it `InOut` if the kernel reads it
        "#]],
    );
}

/// A loop where the language has none yet is reported at its header, saying how to write it.
#[test]
fn loops_elsewhere_are_reported_at_their_header() {
    check(
        r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((4, 16, 16), F32, init=ones())
Y = Tensor((4, 16, 16), F32)

@kernel
def k(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, x)

@kernel(cpp_src="y[0] = x[0];")
def c(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    for i in range(2):
        pass

@workload
def w():
    for i in range(4):
        k[i](x=X[i], y=Y[i])
    while True:
        pass
"#,
        expect![[r#"
            WSP210 `for i in range(2):`: a `cpp_src` kernel's body is `pass`: its code is the C++ string
            WSP210 `for i in range(4):`: a workload loops over axes: `for i in P(Dense[4]):` (or `P.seq(...)` for iterations in order); a `range` loop belongs in a kernel body, over tiles of its tensors
            WSP002 `while True:`: a `while` loop is not part of a workload body (loops over `P`, `with` blocks and tasks)
        "#]],
    );
}

/// A module-level loop over `range(...)` unrolls as Python runs it.
#[test]
fn a_module_level_range_loop_unrolls() {
    expect![[r#"
        Print([Text("1")])
        Print([Text("3")])
        Print([Text("5")])
        Print([Text("2")])
        Print([Text("1")])
    "#]]
    .assert_eq(&common::diagnostics_or_actions(
        "for i in range(1, 7, 2):\n    print(i)\nfor j in range(2, 0, -1):\n    print(j)\nfor e in range(3, 3):\n    print(e)\n",
    ));
    expect![[r#"
        WSP203 `1.5`: `range` takes `(stop)` or `(start, stop[, step])` of integer constants
        WSP203 `range(1, 2, 0)`: `range` takes `(stop)` or `(start, stop[, step])`, with a step other than 0
    "#]]
    .assert_eq(&common::diagnostics_or_actions(
        "for i in range(1.5):\n    print(i)\nfor i in range(1, 2, 0):\n    print(i)\n",
    ));
}

/// A loop kernel for the NPU: its buffers in flight are counted against L1 (WSP506, for every
/// program); a loop kernel that is not a GEMM is WSP507 at its first op of another form, where
/// the file is checked for the NPU.
#[test]
fn npu_limits_count_the_buffers_in_flight() {
    let deep = kernel(
        GEMM_PARAMS,
        r#"    acc = pto.alloc((256, 256), F32)
    for k in range(2):
        a_t = pto.load(a[0:256, k * 64:(k + 1) * 64])
        b_t = pto.load(b[k * 64:(k + 1) * 64, 0:256])
        acc = pto.matmul(a_t, b_t, acc=acc)
    pto.store(c, acc)"#,
    );
    check(
        &deep,
        expect![[r#"
            WSP506 `pto.matmul(a_t, b_t, acc=acc)`: kernel `k__256x128_f16__128x256_f16__256x256_f32` needs 262144 bytes (256 KiB) of L0C at this op, counting the buffers in flight of its pipelined loop; an Ascend 910B AICore has 131072 bytes (128 KiB)
        "#]],
    );
    let vector = kernel(
        GEMM_PARAMS,
        r#"    for m in range(2):
        t = pto.load(a[m * 128:(m + 1) * 128, 0:128])
        pto.store(c[m * 128:(m + 1) * 128, 0:128], pto.exp(pto.cast(t, F32)))"#,
    )
    .replace("target=\"cpu_sim\"", "target=\"ascend_npu\"");
    check(
        &vector,
        expect![[r#"
            WSP507 `pto.cast(t, F32)`: `wsp emit` cannot write kernel `k__256x128_f16__128x256_f16__256x256_f32` for an Ascend 910B (A2/A3): kernel `k__256x128_f16__128x256_f16__256x256_f32` loops over its tensors with `cast` (%1); `wsp emit` writes a loop kernel for an AICore when it is a GEMM: one matmul accumulated over a K loop, its operands loaded by slices in that loop and its result stored once after it
        "#]],
    );
}

/// Flash attention as a kernel engineer writes it, for `ascend_npu`: `stages` the loop's
/// `pto.range` arguments after the trip count, `bs` keys per tile, `extra` a line of the loop.
fn attention(stages: &str, bs: u64, extra: &str) -> String {
    format!(
        r#"from pto_wsp import *

F16 = DType.F16
F32 = DType.F32
Q = Tensor((128, 128), F16, init=randn(seed=1))
K = Tensor((1024, 128), F16, init=randn(seed=2))
V = Tensor((1024, 128), F16, init=randn(seed=3))
O = Tensor((128, 128), F32)
BS = {bs}
one = Dense[1]


@kernel
def fa(q: In[Tensor[F16]], k: In[Tensor[F16]], v: In[Tensor[F16]], o: Out[Tensor[F32]]):
    qt = pto.load(q)
    m = pto.sub(pto.alloc((128, 1), F32), 1e30)
    l = pto.alloc((128, 1), F32)
    acc = pto.alloc((128, 128), F32)
    for j in pto.range(1024 // BS{stages}):
        s = pto.mul(pto.matmul(qt, pto.transpose(pto.load(k[j * BS:(j + 1) * BS, :]))), 0.125)
        m_new = pto.maximum(m, pto.rowmax(s))
        p = pto.exp(pto.sub(s, m_new))
        alpha = pto.exp(pto.sub(m, m_new))
        l = pto.add(pto.mul(l, alpha), pto.rowsum(p))
        pv = pto.matmul(pto.cast(p, F16), pto.load(v[j * BS:(j + 1) * BS, :]))
        acc = pto.add(pto.mul(acc, alpha), pv)
{extra}        m = m_new
    pto.store(o, pto.div(acc, l))


@workload
def w(one):
    for i in P(one):
        fa[i](q=Q, k=K, v=V, o=O)

program = w(one).compile(target="ascend_npu")
"#
    )
}

/// The diagnostics of `text`, or none.
fn diagnostics(text: &str, expect: Expect) {
    let out = common::diagnostics_or_lowered(text, |_| "no diagnostics\n".to_string());
    expect.assert_eq(&out);
}

#[test]
fn attention_runs_as_one_mixed_launch_and_what_it_cannot_is_located() {
    diagnostics(
        &attention(", num_stages=2", 128, ""),
        expect![[r#"
            no diagnostics
        "#]],
    );
    // A ring of one slot: the cube could not run ahead.
    diagnostics(
        &attention(", num_stages=1", 128, ""),
        expect![[r#"
        WSP507 `for j in pto.range(1024 // BS, num_stages=1):`: `wsp emit` cannot write kernel `fa__128x128_f16__1024x128_f16__1024x128_f16__128x128_f32` as one mixed launch of an Ascend 910B (A2/A3) cube core and its vector cores: `num_stages=1` gives each hand-off ring one slot, so the cube could not run ahead of the vector cores: state 2 or more
    "#]],
    );
    // Each vector core's half of 256-key tiles, its loop unrolled, does not fit UB.
    diagnostics(
        &attention("", 256, ""),
        expect![[r#"
        WSP506 `pto.sub(s, m_new)`: kernel `fa__128x128_f16__1024x128_f16__1024x128_f16__128x128_f32` needs 229888 bytes (224.5 KiB) of UB at this op on its vector core (half of the 128 rows, its loop unrolled), counting what one iteration holds and what it hands on; an Ascend 910B AICore has 188416 bytes (184 KiB)
    "#]],
    );
    // Vector work the two vector cores cannot split by rows.
    diagnostics(
        &attention("", 128, "        cols = pto.colsum(p)\n"),
        expect![[r#"
            WSP207 `pto.colsum(p)`: the value of `pto.colsum` is never used: store it (`pto.store(out, ...)`), use it in another op, or remove it
            WSP507 `pto.colsum(p)`: `wsp emit` cannot write kernel `fa__128x128_f16__1024x128_f16__1024x128_f16__128x128_f32` as one mixed launch of an Ascend 910B (A2/A3) cube core and its vector cores: `colsum` does not work row by row, so the two vector cores cannot each take half of the rows
        "#]],
    );
    // A hand-off of other rows than the vector cores split.
    diagnostics(
        &attention(
            "",
            128,
            "        half = pto.rowmax(pto.matmul(pto.load(q[0:64, :]), pto.transpose(pto.load(k[j * BS:(j + 1) * BS, :]))))\n",
        ),
        expect![[r#"
            WSP207 `pto.rowmax(pto.matmul(pto.load(q[0:64, :]), pto.transpose(pto.load(k[j * BS:(j + 1) * BS, :]))))`: the value of `pto.rowmax` is never used: store it (`pto.store(out, ...)`), use it in another op, or remove it
            WSP507 `pto.rowmax(pto.matmul(pto.load(q[0:64, :]), pto.transpose(pto.load(k[j * BS:(j + 1) * BS, :]))))`: `wsp emit` cannot write kernel `fa__128x128_f16__1024x128_f16__1024x128_f16__128x128_f32` as one mixed launch of an Ascend 910B (A2/A3) cube core and its vector cores: vector work on 64 rows beside 128: the two vector cores split one row count
        "#]],
    );
}
