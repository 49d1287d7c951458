@kernel
def rmsnorm(x: In[Tile[32, 128, F16]], out: Out[Tile[32, 128, F16]]):
    data = tl.load(x)
    sq = tl.mul(data, data)
    mean = tl.rowmean(sq)
    rsqrt_val = tl.rsqrt(mean)
    result = tl.mul(data, rsqrt_val)
    tl.store(out, result)

# Trace kernel to inspect IR
ir = rmsnorm.trace()
print(f"Operations: {len(ir.ops)}")
for op in ir.ops:
    print(f"  {op}")
