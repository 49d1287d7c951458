# Compile
program = workload().compile()

# Execute (non-blocking)
program.execute()

# Wait for completion
program.synchronize()

# Check statistics
print(f"Tasks: {program.stats.task_count}")
print(f"Compile time: {program.stats.compile_time_ms:.2f}ms")
print(f"Execute time: {program.stats.execute_time_ms:.2f}ms")
