from pto_wsp import Dense, DenseDyn, Ragged, Sparse

# Static size axis
batch = Dense[4]        # 4 elements, known at compile time
heads = Dense[8]        # 8 elements

# Dynamic size axis
batch = DenseDyn(batch_size)    # Runtime size
seq = DenseDyn(seq_len)

# Ragged axis (variable lengths per outer element)
tokens = Ragged(batch_size, lengths)  # lengths[i] = tokens in batch i

# Sparse axis (CSR format)
routing = Sparse(batch_size, indptr, indices)  # MoE routing
