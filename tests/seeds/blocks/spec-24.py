from pto_wsp import DispatchPolicy

# Round-robin across AICPUs
schedule.dispatch(DispatchPolicy.round_robin(num_aicpus=4))

# Same axis value → same AICPU
schedule.dispatch(DispatchPolicy.affinity(lambda t: t.batch))

# Hash-based
schedule.dispatch(DispatchPolicy.hash(lambda t: t.key))

# Custom function
schedule.dispatch(DispatchPolicy.dispatch_by(lambda t: custom_logic(t)))

# Note (v9): DispatchPolicy.work_steal() exists as API but is currently diagnosed/unsupported in v9 artifacts.
