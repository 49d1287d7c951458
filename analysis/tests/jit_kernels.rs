//! JIT-style kernels (the spec's `@kernel def attn(Q: In[Tensor], ...)`): each task's views
//! bind the tile types, and each distinct binding is an instance of its own: checked with its
//! types (errors at the kernel, with the task that bound them), lowered under its own name.

mod common;

use expect_test::{Expect, expect};

const HEADER: &str = r#"from pto_wsp import *

F32 = DType.F32
F16 = DType.F16
A = Tensor((4, 32, 64), F32, init=randn(seed=1))
B = Tensor((4, 16, 128), F32, init=randn(seed=2))
H = Tensor((4, 16, 128), F16)
OA = Tensor((4, 32, 64), F32)
OB = Tensor((4, 16, 128), F32)
"#;

/// The diagnostics, or the lowered kernels and workloads.
fn check(body: &str, expect: Expect) {
    expect.assert_eq(&common::diagnostics_or_lowered(
        &format!("{HEADER}{body}"),
        |p| {
            let text = p.to_string();
            let from = text.find("\nkernel").unwrap_or(0);
            let to = text.find("\nroot").unwrap_or(text.len());
            text[from..to].to_string()
        },
    ));
}

#[test]
fn two_shapes_make_two_instances() {
    check(
        r#"
@kernel
def add2(x: In[Tensor], y: In[Tensor], z: Out[Tensor[F32]]):
    pto.store(z, pto.add(x, y))

@workload
def both():
    for b in P(Dense[4]):
        add2[b](x=A[b], y=A[b], z=OA[b])
        add2[b](B[b], B[b], OB[b])
        add2[b](x=A[b], y=A[b], z=OA[b])

program = both().compile(target="cpu_sim")
"#,
        expect![[r#"

            kernel add2__32x64_f32__32x64_f32__32x64_f32(x: In Tile[32,64] F32, y: In Tile[32,64] F32, z: Out Tile[32,64] F32)
              %0 = add(x, y) : Tile[32,64] F32
              store(z, %0)

            kernel add2__16x128_f32__16x128_f32__16x128_f32(x: In Tile[16,128] F32, y: In Tile[16,128] F32, z: Out Tile[16,128] F32)
              %0 = add(x, y) : Tile[16,128] F32
              store(z, %0)

            workload #0 both()
              loop Independent b in range Dense x4
                task #0 add2__32x64_f32__32x64_f32__32x64_f32[b] fields (b) (x: In A[b], y: In A[b], z: Out OA[b])
                task #1 add2__16x128_f32__16x128_f32__16x128_f32[b] fields (b) (x: In B[b], y: In B[b], z: Out OB[b])
                task #2 add2__32x64_f32__32x64_f32__32x64_f32[b] fields (b) (x: In A[b], y: In A[b], z: Out OA[b])
        "#]],
    );
}

#[test]
fn a_binding_is_checked_with_its_types() {
    check(
        r#"
@kernel
def add2(x: In[Tensor], y: In[Tensor], z: Out[Tensor[F32]]):
    pto.store(z, pto.add(x, y))

@kernel(cpp_src="z[0] = x[0];")
def custom(x: In[Tensor], z: Out[Tile[16, 128, F32]]):
    pass

@kernel
def bad(x: In[Tensor[1]], y: Out[Tensor[F32, F32]]):
    pto.store(y, x)

@workload
def both():
    for b in P(Dense[4]):
        add2[b](x=A[b], y=B[b], z=OA[b])
        add2[b](x=A, y=B[b], z=H[b])
        add2[b](x=A[b], y=A[b], z=B[b])

program = both().compile(target="cpu_sim")
"#,
        expect![[r#"
            WSP201 `pto.add(x, y)`: `pto.add`: `x` is [32,64] F32 and `y` is [16,128] F32; the shapes do not broadcast
            WSP201 `pto.add(x, y)`: `pto.store`: `z` is [16,128] F32 but the value `pto.add(x, y)` is [32,64] F32
            WSP210 `x`: a `cpp_src` kernel's C++ is written for fixed tiles: give `x` a tile type, `In[Tile[M, N, dtype]]`
            WSP210 `1`: expected a dtype (`DType.F32`, ...), not the integer 1
            WSP210 `Tensor[F32, F32]`: a JIT-style tile parameter is `In[Tensor]` or `In[Tensor[dtype]]`
            WSP206 `A`: `x` takes its tile from the view, a 2-D one, but `A` is [4,32,64]: index it down to two dimensions
            WSP206 `H[b]`: `z` takes F32 tiles but `H[b]` is F16
        "#]],
    );
}
