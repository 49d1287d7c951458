class Dense(Generic[N]):
    """Static size axis."""
    size: int  # Compile-time constant N

class DenseDyn:
    """Dynamic size axis."""
    size: int  # Runtime value

    def __init__(self, size: int | IntVar): ...

class Ragged:
    """Variable length per outer element."""
    outer_size: int
    lengths: list[int]

    def __init__(self, outer_size: int, lengths: list[int]): ...
    def length(self, idx: int) -> int: ...
    def total(self) -> int: ...

class Sparse:
    """CSR format for sparse iteration."""
    outer_size: int
    indptr: list[int]   # Row pointers
    indices: list[int]  # Column indices

    def __init__(self, outer_size: int, indptr: list[int], indices: list[int]): ...
    def nnz(self) -> int: ...
    def row_nnz(self, row: int) -> int: ...
