# Stream assignment by key function
schedule = workload.streams(4).stream_by(lambda t: t.get("head") % 4)
