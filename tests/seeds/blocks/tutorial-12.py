# Execute immediately when ready
TimingPolicy.immediate

# Batch tasks before execution
TimingPolicy.batched(batch_size=16)

# Interleave with other streams
TimingPolicy.interleaved(priority=1)
