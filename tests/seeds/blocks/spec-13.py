@workload
def scan(seq_len):
    for i in P.seq(seq_len):               # Type: Sequential
        scan_step[i](input[i], output[i])
