//! Numbers end to end, checked against NumPy: infinities (a running max initialised with
//! `full(-math.inf)`, `-math.inf` as an op operand and as a scalar default reach the C++
//! kernels and the tensors intact; they once crashed `wsp run` with "malformed job"), `randn`
//! equal to NumPy's samples, and views reading and writing their base's bytes.

mod common;

const ROWMAX: &str = r#"from pto_wsp import *
import math

F32 = DType.F32
X = Tensor((2, 16, 64), F32, init=randn(seed=3))
M = Tensor((2, 16, 1), F32, init=full(-math.inf))
N = Tensor((2, 16, 1), F32, init=full(float("-inf")))

@kernel
def rowmax(x: In[Tile[16, 64, F32]], m: InOut[Tile[16, 1, F32]], n: InOut[Tile[16, 1, F32]], floor: Scalar[F32] = -math.inf):
    pto.store(m, pto.max(pto.max(pto.load(m), pto.rowmax(pto.load(x))), floor))
    pto.store(n, pto.max(pto.load(n), -math.inf))

@workload
def w():
    for b in P(Dense[2]):
        rowmax[b](x=X[b], m=M[b], n=N[b])

program = w().compile(target="cpu_sim")
program.execute()
"#;

const CHECK: &str = r#"
import sys, numpy as np
d = sys.argv[1]
X, M, N = (np.load(f"{d}/{n}.npy") for n in "XMN")
assert np.array_equal(M[..., 0], X.max(-1)), (M[..., 0], X.max(-1))
assert np.all(np.isneginf(N)), N
print("ok")
"#;

#[test]
fn infinities_reach_the_kernels_and_tensors() {
    common::run_and_check("parity_numbers", "rowmax", ROWMAX, &[], CHECK);
}

const RANDN: &str = r#"from pto_wsp import *

A = Tensor((3, 64, 128), DType.F32, init=randn(seed=0))
B = Tensor((2, 1000), DType.F32, init=randn(seed=11, std=0.1))
C = Tensor((64, 64), DType.F16, init=randn(seed=7, std=2.0))
D = Tensor((8, 9), DType.F64, init=randn(seed=12345))
E = Tensor((1024, 1024), DType.F32, init=randn(seed=3))
Y = Tensor((64, 64), DType.F16)

@kernel
def copy(x: In[Tile[64, 64, DType.F16]], y: Out[Tile[64, 64, DType.F16]]):
    pto.store(y, x)

@workload
def w():
    copy[0](x=C, y=Y)

program = w().compile(target="cpu_sim")
program.execute()
"#;

/// `randn(seed, std)` is NumPy's `np.float32(std) * default_rng(seed).standard_normal(shape,
/// dtype=np.float32)` converted to the tensor's dtype, bit for bit, so inputs can be rebuilt in
/// NumPy (1.2 M samples, the ziggurat's slow paths among them).
const RANDN_CHECK: &str = r#"
import sys, numpy as np
d = sys.argv[1]
def want(shape, seed, std=1.0):
    return np.float32(std) * np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
for name, ref in [
    ("A", want((3, 64, 128), 0)),
    ("B", want((2, 1000), 11, 0.1)),
    ("C", want((64, 64), 7, 2.0).astype(np.float16)),
    ("D", want((8, 9), 12345).astype(np.float64)),
]:
    ours = np.load(f"{d}/{name}.npy")
    assert ours.dtype == ref.dtype and np.array_equal(ours, ref), (name, ours.ravel()[:4], ref.ravel()[:4])
big = np.random.default_rng(3).standard_normal(1 << 20, dtype=np.float32)
assert np.array_equal(np.load(f"{d}/E.npy").ravel(), big)
print("ok")
"#;

#[test]
fn randn_is_numpys_standard_normal() {
    common::run_and_check("parity_numbers", "randn", RANDN, &[], RANDN_CHECK);
}

const VIEWS: &str = r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((2, 16, 32), F32, init=randn(seed=1))
Xt = X.transpose(0, 2, 1)
Y = Tensor((2, 32, 16), F32)
Z = Tensor((2, 16, 32), F32)
Zt = Z.transpose(0, 2, 1)
A = Tensor((64, 64), F32, init=randn(seed=2))
At = A.reshape(4, 16, 4, 16).transpose(0, 2, 1, 3)
S = Tensor((64, 1), F32)

@kernel
def copy(x: In[Tile[32, 16, F32]], y: Out[Tile[32, 16, F32]]):
    pto.store(y, x)

@kernel
def double(x: In[Tile[32, 16, F32]], y: Out[Tile[32, 16, F32]]):
    pto.store(y, pto.mul(x, 2.0))

@kernel
def bump(t: InOut[Tile[16, 16, F32]]):
    pto.store(t, pto.add(pto.load(t), 1.0))

@kernel
def rowsum(a: In[Tile[16, 64, F32]], s: Out[Tile[16, 1, F32]]):
    pto.store(s, pto.rowsum(a))

@workload
def w():
    for b in P(Dense[2]):
        copy[b](x=Xt[b], y=Y[b])
        double[b](x=Xt[b], y=Zt[b])
    for i, j in P(Dense[4], Dense[4]):
        bump[i, j](t=At[i, j])
    for r in P(Dense[4]):
        rowsum[r](a=A[r*16:(r+1)*16], s=S[r*16:(r+1)*16])

program = w().compile(target="cpu_sim")
program.execute()
"#;

/// Views read and write their base's bytes: a transposed read and write, a re-tiled `InOut`
/// update, and a read of the base after it ordered behind the writes through the view.
const VIEWS_CHECK: &str = r#"
import sys, numpy as np
d = sys.argv[1]
X, Y, Z, A, S = (np.load(f"{d}/{n}.npy") for n in "XYZAS")
A0 = np.random.default_rng(2).standard_normal((64, 64), dtype=np.float32)
assert np.array_equal(Y, X.transpose(0, 2, 1))
assert np.array_equal(Z, 2 * X)
assert np.array_equal(A, A0 + 1)
assert np.allclose(S[:, 0], (A0 + 1).sum(1), rtol=1e-5)
import os
assert not os.path.exists(f"{d}/Xt.npy"), "views have no bytes of their own to dump"
print("ok")
"#;

#[test]
fn views_read_and_write_their_bases_bytes() {
    common::run_and_check(
        "parity_numbers",
        "views",
        VIEWS,
        &["--workers", "2"],
        VIEWS_CHECK,
    );
}

/// The tutorial's three collectives on a 2-device mesh, each read by a task: `allreduce` and
/// `reduce_scatter` sum the partials over the sharded dimension (one memory holds every
/// device's data, so their values are the same), `allgather` keeps every shard.
const COLLECTIVES: &str = r#"from pto_wsp import *

F32 = DType.F32
Part = Tensor((2, 64, 16), F32, init=randn(seed=1), layout=TensorLayout.sharded(dim=0, rank=3, mesh_axis=0))
result = allreduce(Part, op="sum", mesh_axis=0)
gathered = allgather(Part, mesh_axis=0)
scattered = reduce_scatter(Part, op="sum", mesh_axis=0)
R = Tensor((64, 16), F32)
G = Tensor((2, 64, 16), F32)
S = Tensor((64, 16), F32)

@kernel
def copy(x: In[Tile[64, 16, F32]], y: Out[Tile[64, 16, F32]]):
    pto.store(y, pto.load(x))

@workload
def read_results():
    copy[0](x=result, y=R)
    for d in P(Dense[2]):
        copy[d](x=gathered[d], y=G[d])
    copy[0](x=scattered, y=S)

program = read_results().spatial_map(grid=(2,)).compile()
program.execute()
"#;

const COLLECTIVES_CHECK: &str = r#"
import sys, numpy as np
d = sys.argv[1]
Part, R, G, S = (np.load(f"{d}/{n}.npy") for n in ("Part", "R", "G", "S"))
assert np.allclose(R, Part.sum(0), rtol=1e-6), abs(R - Part.sum(0)).max()
assert np.array_equal(G, Part)
assert np.array_equal(S, R)
print("ok")
"#;

#[test]
fn collectives_sum_and_gather_the_shards() {
    common::run_and_check(
        "parity_numbers",
        "collectives",
        COLLECTIVES,
        &[],
        COLLECTIVES_CHECK,
    );
}
