# Compile to executable program (CPU simulation)
program = workload.compile(target="cpu_sim")

# Emit NPU sources (emit-only in this environment)
program = workload.compile(target="ascend_npu")
print(program.codegen_artifact_dir)
