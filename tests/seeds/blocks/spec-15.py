@workload
def tiered_attention(batch, seq_lens):
    for b in P(batch):
        with P.when(seq_lens[b] <= 2048):
            attn_2k[b](...)
        with P.when(seq_lens[b] <= 8192):  # Nested condition
            attn_8k[b](...)
        with P.otherwise():
            attn_32k[b](...)
