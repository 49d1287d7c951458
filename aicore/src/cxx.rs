//! The C++ spellings the CPU kernels and the AICore kernels share: storage and compute types
//! of a dtype, exact `double` literals, and the CPU kernel ABI's symbol, which an AICore kernel
//! also defines so the host replay can run it in PTO-ISA's CPU simulation.

use wsp_ir::DType;

/// The exported symbol of a kernel.
pub fn symbol(kernel: &str) -> String {
    format!("wsp_kernel_{kernel}")
}

/// The C++ type a dtype is stored as.
pub fn storage(d: DType) -> &'static str {
    match d {
        DType::F16 | DType::BF16 => "uint16_t",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::I8 => "int8_t",
        DType::I16 => "int16_t",
        DType::I32 => "int32_t",
        DType::I64 => "int64_t",
        DType::U8 => "uint8_t",
        DType::U16 => "uint16_t",
        DType::U32 => "uint32_t",
        DType::U64 => "uint64_t",
    }
}

/// The C++ type a dtype is computed in.
pub fn compute(d: DType) -> &'static str {
    match d {
        DType::F16 | DType::BF16 => "float",
        _ => storage(d),
    }
}

/// A `double` literal that reads back to the same bits.
pub fn double(v: f64) -> String {
    if v.is_nan() {
        // The compiler's own: the CPU kernels include no standard header.
        "__builtin_nan(\"\")".into()
    } else if v.is_infinite() {
        let s = if v < 0.0 { "-" } else { "" };
        format!("{s}__builtin_inf()")
    } else {
        // Rust prints the shortest text that reads back exactly; C++ parses it the same way.
        let s = format!("{v:?}");
        if s.contains(['.', 'e', 'E']) {
            s
        } else {
            format!("{s}.0")
        }
    }
}

/// Event IDs 4 to `used` - 1 defined where PTO-ISA does not: its CPU simulation and cost model
/// name EVENT_ID0 to EVENT_ID3 (plain ints); the chip's toolchain names all it has. Empty
/// for `used` <= 4.
pub fn event_ids(used: u32) -> String {
    if used <= 4 {
        return String::new();
    }
    let mut out = String::from("#if defined(__CPU_SIM) || defined(__COSTMODEL)\n");
    for e in 4..used {
        out.push_str(&format!(
            "#ifndef EVENT_ID{e}\n#define EVENT_ID{e} {e}\n#endif\n"
        ));
    }
    out.push_str("#endif\n\n");
    out
}
