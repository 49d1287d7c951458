# Get trace events
task_events = program.trace.get_task_events()
kernel_events = program.trace.get_kernel_events("matmul_tile")

# Get statistics
summary = program.trace.summary()
print(f"Total kernel time: {summary['kernel_time_ms']:.2f}ms")
print(f"Avg task time: {summary['avg_task_time_us']:.2f}us")
