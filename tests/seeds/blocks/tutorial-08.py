from pto_wsp import combine, sequential

# Independent workloads (can run in parallel)
combined = combine(workload_a(), workload_b())

# Sequential workloads (must run in order)
pipeline = sequential(load_stage(), compute_stage(), store_stage())
