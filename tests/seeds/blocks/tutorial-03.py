from pto_wsp import kernel, tl, In, Out, InOut, Tile, Scalar, DType

F16 = DType.F16
F32 = DType.F32

@kernel
def matmul_tile(
    a: In[Tile[128, 64, F16]],     # Input tile
    b: In[Tile[64, 128, F16]],     # Input tile
    c: Out[Tile[128, 128, F32]],   # Output tile
):
    """Tiled matrix multiplication."""
    a_data = tl.load(a)
    b_data = tl.load(b)
    result = tl.matmul(a_data, b_data)
    tl.store(c, result)
