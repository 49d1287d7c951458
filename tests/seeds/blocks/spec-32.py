from pto_wsp import jit_kernel, pto, In, Out, Tile, Scalar, DType

@jit_kernel
def rmsnorm(
    x: In[Tile[32, 128, DType.F16]],
    out: Out[Tile[32, 128, DType.F16]],
    eps: Scalar[DType.F32] = 1e-6
):
    """RMS normalization kernel using typed Value objects.

    No string-based references - all operations return typed Values.
    """
    # All operations return Value objects (no strings!)
    sq = pto.mul(x, x)              # sq: Value
    mean = pto.rowmean(sq)          # mean: Value
    rsqrt_val = pto.rsqrt(mean)     # rsqrt_val: Value
    pto.store(out, pto.mul(x, rsqrt_val))
