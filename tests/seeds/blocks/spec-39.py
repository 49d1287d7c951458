from pto_wsp import ExternalKernel

# Legacy external kernel registration
flash_attn_v2 = ExternalKernel(
    name="flash_attn_v2",
    impl_path="kernels/flash_attn_v2.cpp",
    inputs=["Q", "K", "V"],
    outputs=["O"],
)
