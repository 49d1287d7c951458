from pto_wsp import jit_kernel, pto, DType

@jit_kernel
def my_kernel(x: In[Tile[M, N, DType.F16]], out: Out[Tile[M, N, DType.F16]]):
    pto.store(out, pto.mul(x, x))

# Compile to specific target
compiled = my_kernel.compile(target="ascend_npu")

# Access generated IR
print(my_kernel.ir.dump())  # View kernel IR

# Generated code
print(compiled.code)  # Backend-specific code
