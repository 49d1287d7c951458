from pto_wsp import Channel, process, send, consume, connect

# Create channels
load_to_compute = Channel(capacity=4)
compute_to_store = Channel(capacity=4)

# Define processes
loader = (process("loader")
    .produces(load_to_compute)
    .body(for_each(tiles, lambda t:
        send(load_to_compute, task("load", [t], [...]))))
)

computer = (process("computer")
    .consumes(load_to_compute)
    .produces(compute_to_store)
    .body(consume(load_to_compute, lambda t:
        send(compute_to_store, task("compute", [t], [...]))))
)

storer = (process("storer")
    .consumes(compute_to_store)
    .body(consume(compute_to_store, lambda t:
        task("store", [t], [...])))
)

# Connect processes into pipeline
pipeline = connect([loader, computer, storer], [load_to_compute, compute_to_store])
