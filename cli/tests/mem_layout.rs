//! A tensor in another memory order (`TensorLayout(dims, mem=MemLayout.col_major(shape))`):
//! its values are the ones its `init` gives in its own order, kernels read its tiles through
//! the order's strides, and `save_npy`/`--dump-tensors` write its values (and its storage,
//! `NAME.storage`, in memory order).

mod common;

#[test]
fn a_column_major_tensor_reads_and_saves_in_its_own_order() {
    let (dir, stdout) = common::wsp_run(
        "mem_layout",
        "col_major",
        r#"from pto_wsp import *

F32 = DType.F32
Xc = Tensor((8, 4), F32, init=arange(),
            layout=TensorLayout((TensorReplicate(), TensorReplicate()), mem=MemLayout.col_major((8, 4))))
Y = Tensor((2, 4, 4), F32)

@kernel
def dbl(x: In[Tile[4, 4, F32]], y: Out[Tile[4, 4, F32]]):
    pto.store(y, pto.add(x, x))

@workload
def w():
    for i in P(Dense[2]):
        dbl[i](x=Xc[i*4:(i+1)*4, 0:4], y=Y[i])

program = w().compile(target="cpu_sim")
program.execute()
print(Xc)
print(Y)
"#,
        &["--dump-tensors", "dump"],
    );
    let dump = dir.join("dump");
    let printed = format!("{}\n", common::printed(&stdout));
    expect_test::expect![[r#"
        [[ 0.  1.  2.  3.]
         [ 4.  5.  6.  7.]
         [ 8.  9. 10. 11.]
         [12. 13. 14. 15.]
         [16. 17. 18. 19.]
         [20. 21. 22. 23.]
         [24. 25. 26. 27.]
         [28. 29. 30. 31.]]
        [[[ 0.  2.  4.  6.]
          [ 8. 10. 12. 14.]
          [16. 18. 20. 22.]
          [24. 26. 28. 30.]]

         [[32. 34. 36. 38.]
          [40. 42. 44. 46.]
          [48. 50. 52. 54.]
          [56. 58. 60. 62.]]]
    "#]]
    .assert_eq(&printed);
    // The storage is the transpose, as NumPy's Fortran order keeps it.
    for name in ["Xc.npy", "Xc.storage.npy", "Y.npy"] {
        assert!(dump.join(name).is_file(), "{name}");
    }
}
