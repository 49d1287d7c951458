from pto_wsp import (
    kernel, workload, P,
    Dense, Tensor, DType,
    tl, In, Out, Tile,
)

# 1. Define a kernel with tile operations
F32 = DType.F32

@kernel
def add_kernel(a: In[Tile[32, 32, F32]], b: In[Tile[32, 32, F32]], c: Out[Tile[32, 32, F32]]):
    x = tl.load(a)
    y = tl.load(b)
    z = tl.add(x, y)
    tl.store(c, z)

# 2. Define axes (iteration dimensions)
batch = Dense[4]()

# 3. Define a workload using the kernel
@workload
def simple_add():
    for b in P(batch):
        add_kernel[b](a=A[b], b=B[b], c=C[b])

# 4. Compile and execute
program = simple_add().compile()
program.execute()
program.synchronize()

print(f"Executed {program.stats.task_count} tasks")
