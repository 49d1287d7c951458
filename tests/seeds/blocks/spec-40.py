from pto_wsp import Event, record, synchronize, query

# Create event
event = Event("sync")

# Signal completion (blocks until receiver ready)
record(event)

# Wait for completion (blocks until sender ready)
synchronize(event)

# Non-blocking check
if query(event):
    print("Event signaled")
