from pto_wsp import kernel, In, Out, Tensor

@kernel
def flash_attn(
    Q: In[Tensor],        # Input tensor
    K: In[Tensor],
    V: In[Tensor],
    O: Out[Tensor],       # Output tensor
):
    """Flash attention kernel.

    The body can be:
    1. Traced `pto.*` ops (JIT kernel IR)
    2. Empty + a custom implementation (Path A):
       - `@ptoisa_kernel` (Python authoring → emitted C++ body), or
       - `@kernel(cpp_src=..., cpp_includes=...)` (manual C++ body)
    """
    pass  # Implementation provided externally or via CPU sim
