layer = combine(rms_norm, attention, ffn)  # Type: Combined
