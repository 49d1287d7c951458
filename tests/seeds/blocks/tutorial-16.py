from pto_wsp import Event, record, synchronize, query

# Create event
completion = Event()

# Record event after operation
record(completion, after=compute_task)

# Check if event completed (non-blocking)
if query(completion):
    print("Compute done!")

# Wait for event (blocking)
synchronize(completion)
