from pto_wsp import TimingPolicy

# Issue immediately when dependencies satisfied
schedule.timing(TimingPolicy.immediate)

# Batch N tasks before issuing
schedule.timing(TimingPolicy.batched(n))

# Interleaved across streams
schedule.timing(TimingPolicy.interleaved(streams))

# Rate limiting
schedule.timing(TimingPolicy.rate_limit(tasks_per_ms))
