# AOT compilation (default)
program = attention.compile(target="ascend_npu")

# Force eager compilation of specific kernel
flash_attn.compile(target="ascend_npu", BLOCK_M=128, BLOCK_N=64)
