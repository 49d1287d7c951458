pipeline = sequential(load, compute, store)  # Type: Sequential
