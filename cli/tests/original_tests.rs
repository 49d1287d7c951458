//! The original framework's own codegen tests (uv-xiao/pto-wsp `tests/test_codegen_*.py`),
//! ported as a user would, with the assertions they make: `P.sel` over a whole Sparse axis,
//! `Ragged(outer_size=...)` iterated whole, `.named(...)`, `program.using_cpp_backend`.
//! (Their `set_symbol_ptr` rebinding of lengths and indices is a tensor's data here: new data
//! needs no rebuild either.)

mod common;

/// What `wsp run` prints of `program`.
fn printed(name: &str, program: &str) -> String {
    common::printed(&common::wsp_run("original_tests", name, program, &[]).1)
}

const MARK: &str = r#"from pto_wsp import *

I32 = DType.I32

@kernel
def mark(y_tile: InOut[Tile[1, 1, I32]]):
    v = pto.load(y_tile)
    one = pto.constant(1.0, I32)
    v1 = pto.add(v, one)
    pto.store(y_tile, v1)
"#;

/// test_codegen_select_sparse.py: every entry of every row, each marking its column.
#[test]
fn select_over_a_whole_sparse_axis_visits_every_entry() {
    let out = printed(
        "select_sparse",
        &format!(
            r#"{MARK}
y = Tensor((4, 1, 1), I32)
sparse = Sparse(outer_size=2, indptr=[0, 2, 3], indices=[0, 2, 1])  # nnz=3

@workload
def wl():
    for e in P.sel(sparse, name="e"):
        mark[e](y_tile=y[e])

program = wl().named("dyn_sparse_select").compile(target="cpu_sim")
print(program.using_cpp_backend)
program.execute()
program.synchronize()
print(program.stats.task_count)
save_npy(y, "y.npy")
print(y)
"#
        ),
    );
    expect_test::expect![[r#"
        True
        3
        [[[1]]

         [[1]]

         [[1]]

         [[0]]]"#]]
    .assert_eq(&out);
}

/// test_codegen_ragged_axis.py: a whole Ragged axis, row by row, in order.
#[test]
fn a_whole_ragged_axis_runs_in_order_with_outer_size() {
    let out = printed(
        "ragged",
        &format!(
            r#"{MARK}
y = Tensor((3, 1, 1), I32)
ragged = Ragged(outer_size=2, lengths=[1, 1])

@workload
def wl():
    for t in P.seq(ragged, name="t"):
        mark[t](y_tile=y[t])

program = wl().named("dyn_ragged").compile(target="cpu_sim")
assert_text = program.using_cpp_backend
program.execute()
program.synchronize()
print(assert_text, program.stats.task_count)
print(y)
"#
        ),
    );
    expect_test::expect![[r#"
        True 2
        [[[1]]

         [[1]]

         [[0]]]"#]]
    .assert_eq(&out);
}

/// test_codegen_custom_kernel_cpp.py: a `cpp_src` body written with PTO-ISA's tile API and the
/// original's descriptor (`task->tensor_ptrs`, `task->tensor_strides`). With `PTO_ISA_PATH`
/// set, it is compiled against that checkout's CPU simulation and copies the vector; without,
/// the error names `PTO_ISA_PATH`, at the body.
#[test]
fn a_cpp_body_with_pto_isas_tile_api_runs_against_pto_isa_path() {
    let dir = common::scratch("original_tests", "custom_kernel_cpp");
    let file = dir.join("t.wsp");
    std::fs::write(
        &file,
        r#"from pto_wsp import *

F32 = DType.F32
batch = Dense[1]()
x = Tensor((1, 1, 1, 32), F32, init=arange())
y = Tensor((1, 1, 1, 32), F32)

@kernel(
    cpp_src=r"""
  // Copy a 1xN vector tile using PTO-ISA primitives (CPU-sim cycle counted).
  float* x_ptr = (float*)task->tensor_ptrs[0];
  float* y_ptr = (float*)task->tensor_ptrs[1];

  const int vr = 1;
  const int vc = 32;

  using Shape = pto::Shape<1, 1, 1, pto::DYNAMIC, pto::DYNAMIC>;
  using Stride = pto::Stride<1, 1, 1, pto::DYNAMIC, pto::DYNAMIC>;

  pto::GlobalTensor<float, Shape, Stride, pto::Layout::ND> gx(
      x_ptr, Shape(vr, vc), Stride((int)task->tensor_strides[0], (int)task->tensor_strides[1]));
  pto::GlobalTensor<float, Shape, Stride, pto::Layout::ND> gy(
      y_ptr, Shape(vr, vc), Stride((int)task->tensor_strides[2], (int)task->tensor_strides[3]));

  pto::Tile<pto::TileType::Vec, float, 1, 32, pto::BLayout::RowMajor, pto::DYNAMIC, pto::DYNAMIC> t(
      (size_t)vr, (size_t)vc);

  pto_wsp::ptoisa::TLOAD(t, gx);
  pto_wsp::ptoisa::TSTORE(gy, t);
""",
)
def copy_vec(inp: In[Tile[1, 32, F32]], out: Out[Tile[1, 32, F32]]):
    # C++-implemented kernel: body intentionally empty.
    pass

@workload
def wl():
    for b in P(batch):
        copy_vec[b](inp=x[b][0], out=y[b][0])

program = wl().named("custom_cpp_kernel_copy").compile(target="cpu_sim")
program.execute()
program.synchronize()
print(y)
"#,
    )
    .unwrap();
    let out = common::wsp().arg("run").arg(&file).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if std::env::var_os("PTO_ISA_PATH").is_some_and(|p| !p.is_empty()) {
        assert!(out.status.success(), "{stderr}");
        assert!(stdout.starts_with("[[[[ 0.  1.  2."), "{stdout}");
        assert!(stdout.contains("29. 30. 31.]]]]"), "{stdout}");
    } else {
        assert!(!out.status.success());
        assert!(
            stderr.contains("error[WSP601]")
                && stderr.contains("set PTO_ISA_PATH to a PTO-ISA checkout"),
            "{stderr}"
        );
        assert!(stderr.contains("t.wsp:9:1"), "{stderr}");
    }
}

/// test_codegen_dynamic_symbols.py: a kernel's `Scalar` from a run-time symbol, bound with
/// `set_symbol_f32` between runs without a rebuild; the cycles do not change.
#[test]
fn an_f32_symbol_feeds_a_scalar_without_a_rebuild() {
    let out = printed(
        "dynamic_symbols",
        r#"from pto_wsp import DType, In, Out, Scalar, Symbol, Tensor, Tile, kernel, pto, workload

x = Tensor((4, 4), DType.F32, init=arange())
y = Tensor((4, 4), DType.F32)

@kernel
def scale(
    x_tile: In[Tile[4, 4, DType.F32]],
    y_tile: Out[Tile[4, 4, DType.F32]],
    s: Scalar[DType.F32],
):
    out = pto.mul(x_tile, s)
    pto.store(y_tile, out)

@workload
def wl():
    scale(x_tile=x, y_tile=y, s=Symbol("scale_s"))

program = wl().named("dyn_scalar_symbol").compile(target="cpu_sim")
assert_cpp = program.using_cpp_backend

# Run 1: s=2.0
program.set_symbol_f32("scale_s", 2.0)
program.execute()
program.synchronize()
print(y)
cycles2 = program.stats.total_cycles
print(program.stats.total_cycles)

# Run 2: s=3.0 (same compiled artifact; just different runtime symbol)
program.set_symbol_f32("scale_s", 3.0)
program.execute()
program.synchronize()
print(y)
print(program.stats.total_cycles)
"#,
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "[[ 0.  2.  4.  6.]", "{out}");
    assert_eq!(lines[5], "[[ 0.  3.  6.  9.]", "{out}");
    assert_eq!(
        lines[4], lines[9],
        "the cycles do not depend on the value: {out}"
    );
}

/// test_codegen_slots_tensor_predicate.py, with its imports from the original's submodules:
/// module-level `Workload("task", ...)`, `slot_load_u64(...)` and `cond(...)` composed with
/// `sequential(...)`; `cpp_src` bodies on the original's descriptor
/// with `#if defined(__CPU_SIM)`; the slot a kernel's output fills picks the branch.
#[test]
fn module_level_tasks_slot_loads_and_cond_compose() {
    let out = printed("slots_tensor_predicate", SLOTS);
    expect_test::expect![[r#"
        [[[[0]]]] [[[[3]]]]
        [[[[1]]]] [[[[7]]]]"#]]
    .assert_eq(&out);
}

const SLOTS: &str = r#"from pto_wsp import DType, Dense, In, Out, Tensor, Tile, kernel
from pto_wsp.primitives import cond, sequential, slot_load_u64
from pto_wsp.scalar_expr import slot_u64
from pto_wsp.workload import Workload

F32 = DType.F32
I32 = DType.I32
x = Tensor((1, 1, 1, 1), F32, init=full(-1.0))
x_pos = Tensor((1, 1, 1, 1), F32, init=full(1.0))
flag = Tensor((1, 1, 1, 1), I32)
y = Tensor((1, 1, 1, 1), I32)

@kernel(
    cpp_src=r"""
  float* x_ptr = (float*)task->tensor_ptrs[0];
  int32_t* flag_ptr = (int32_t*)task->tensor_ptrs[1];
  const uint64_t x_s3 = task->tensor_strides[0];
  const uint64_t x_s4 = task->tensor_strides[1];
  const uint64_t f_s3 = task->tensor_strides[2];
  const uint64_t f_s4 = task->tensor_strides[3];
  const float v = x_ptr[0 * (int64_t)x_s3 + 0 * (int64_t)x_s4];
  flag_ptr[0 * (int64_t)f_s3 + 0 * (int64_t)f_s4] = (v > 0.0f) ? 1 : 0;
#if defined(__CPU_SIM)
  pto::cpu_sim::add_cycles(1);
#endif
""",
)
def write_flag(x_in: In[Tile[1, 1, F32]], flag_out: Out[Tile[1, 1, I32]]):
    pass

@kernel(
    cpp_src=r"""
  int32_t* y_ptr = (int32_t*)task->tensor_ptrs[0];
  const uint64_t y_s3 = task->tensor_strides[0];
  const uint64_t y_s4 = task->tensor_strides[1];
  y_ptr[0 * (int64_t)y_s3 + 0 * (int64_t)y_s4] = 7;
#if defined(__CPU_SIM)
  pto::cpu_sim::add_cycles(1);
#endif
""",
)
def fill_true(y_out: Out[Tile[1, 1, I32]]):
    pass

@kernel(
    cpp_src=r"""
  int32_t* y_ptr = (int32_t*)task->tensor_ptrs[0];
  const uint64_t y_s3 = task->tensor_strides[0];
  const uint64_t y_s4 = task->tensor_strides[1];
  y_ptr[0 * (int64_t)y_s3 + 0 * (int64_t)y_s4] = 3;
#if defined(__CPU_SIM)
  pto::cpu_sim::add_cycles(1);
#endif
""",
)
def fill_false(y_out: Out[Tile[1, 1, I32]]):
    pass

# Sequential: 1) write flag tensor from x; 2) load flag[0,0] -> slot 0; 3) branch on slot 0
write = Workload("task", kernel=write_flag, params=[0], resources={"x_in": x[0][0], "flag_out": flag[0][0]})
load = slot_load_u64(0, flag[0][0], row=0, col=0)
t = Workload("task", kernel=fill_true, params=[0], resources={"y_out": y[0][0]})
f = Workload("task", kernel=fill_false, params=[0], resources={"y_out": y[0][0]})
br = cond(slot_u64(0) != 0, t, f)
program = sequential(write, load, br).named("slot_tensor_predicate").compile(target="cpu_sim")

# Run 1: x <= 0 -> false branch.
program.execute()
program.synchronize()
print(flag, y)

# Run 2: x > 0 -> true branch (the original refills x in place; here another tensor holds it).
write_pos = Workload("task", kernel=write_flag, params=[0], resources={"x_in": x_pos[0][0], "flag_out": flag[0][0]})
again = sequential(write_pos, load, br).compile(target="cpu_sim")
again.execute()
print(flag, y)
"#;
