# Round-robin across N executors
DispatchPolicy.round_robin(4)

# Affinity-based (tasks with same key go to same executor)
DispatchPolicy.affinity(lambda t: t.get("batch"))

# Hash-based distribution
DispatchPolicy.hash(lambda t: (t.get("batch"), t.get("head")))

# Work-stealing for dynamic load balancing
DispatchPolicy.work_steal()
