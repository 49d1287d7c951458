# Create schedule from workload using combinator style
program = (workload
    .dispatch(DispatchPolicy.round_robin(4))
    .task_graph(window=TaskWindow(8192, "tasks", WindowMode.STALL))
    .compile(target="cpu_sim"))

# Notes (v9):
# - `streams/stream_by/timing` exist as schedule API but are not fully enforced in v9 artifacts.
# - Layout is a tensor type refinement; use `TensorLayout` + `relayout(...)` (not `schedule.layout(...)`).
