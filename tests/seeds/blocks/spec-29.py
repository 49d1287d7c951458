program = (workload
    .dispatch(DispatchPolicy.round_robin(4))
    .task_graph(window=TaskWindow(8192, "tasks", WindowMode.STALL))
    .compile(target="cpu_sim"))
