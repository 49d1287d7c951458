# Memory operations
data = tl.load(ptr)        # Load from memory
tl.store(ptr, data)        # Store to memory

# Arithmetic
z = tl.add(x, y)           # Element-wise add
z = tl.sub(x, y)           # Element-wise subtract
z = tl.mul(x, y)           # Element-wise multiply
z = tl.div(x, y)           # Element-wise divide

# Matrix operations
c = tl.matmul(a, b)        # Matrix multiplication

# Reductions
s = tl.rowsum(x)           # Sum across rows
m = tl.rowmax(x)           # Max across rows
mean = tl.rowmean(x)       # Mean across rows

# Elementwise functions
y = tl.exp(x)              # Exponential
y = tl.rsqrt(x)            # Reciprocal square root
y = tl.silu(x)             # SiLU activation
y = tl.softmax(x)          # Softmax
