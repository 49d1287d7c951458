from pto_wsp import Deps, DepsMode, ReadyPolicy, Pools

program = (attention()
    .task_graph(
        deps=Deps(mode=DepsMode.tensor_map_exact),  # Exact tensor dependency
        ready=ReadyPolicy.work_steal(),              # Work-stealing scheduler
        pools=Pools.by_exec_unit()                   # Per-unit task pools
    )
    .compile())
