from pto_wsp import DispatchPolicy, TimingPolicy

program = (attention()
    .dispatch(DispatchPolicy.round_robin(4))   # 4 executors
    .streams(2)                                 # 2 concurrent streams
    .timing(TimingPolicy.immediate)             # Execute ASAP
    .compile())
