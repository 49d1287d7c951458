from pto_wsp import Tensor, DType, Location

class DType(Enum):
    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"
    F64 = "f64"
    I8 = "i8"
    I16 = "i16"
    I32 = "i32"
    I64 = "i64"
    U8 = "u8"
    U16 = "u16"
    U32 = "u32"
    U64 = "u64"

class Location(Enum):
    Global = "global"   # Global memory (HBM)
    L2 = "l2"          # L2 cache
    UB = "ub"          # Unified Buffer (AICore local)
    L1 = "l1"          # L1 buffer

class Tensor:
    data: Any           # Pointer/handle to data
    shape: tuple[int, ...]
    dtype: DType
    location: Location
    layout: TensorLayout      # NEW: Layout refinement (R8, R10)

    def __getitem__(self, idx: int) -> Tensor: ...
    def slice(self, start: int, end: int) -> Tensor: ...
    def nbytes(self) -> int: ...
