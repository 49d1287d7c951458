//! Memory facts of the targets: how much global memory holds a program's tensors, and what a
//! tensor needs. The analyzer (WSP505) and the runtime (before allocating) read them here.

use crate::schedule::Target;
use crate::types::DType;

/// Global memory of an Ascend 910B (HBM), which every tensor of an `ascend_npu` program lives in.
pub const ASCEND_910B_GLOBAL_MEMORY: u64 = 64 << 30;

impl Target {
    /// Bytes of memory the target's tensors live in: the device's global memory for the NPU;
    /// for `cpu_sim`, whose tensors are host buffers, this host's physical memory.
    pub fn memory_bytes(self) -> u64 {
        match self {
            Target::CpuSim => host_memory_bytes(),
            Target::AscendNpu => ASCEND_910B_GLOBAL_MEMORY,
        }
    }

    /// "the 64 GiB of global memory of ascend_npu", for messages.
    pub fn memory_text(self) -> String {
        match self {
            Target::CpuSim => format!(
                "this host's {} of memory, where cpu_sim keeps tensors",
                bytes_text(self.memory_bytes())
            ),
            Target::AscendNpu => format!(
                "the {} of global memory of ascend_npu (Ascend 910B)",
                bytes_text(self.memory_bytes())
            ),
        }
    }
}

/// This host's physical memory in bytes (`u64::MAX` if the system does not say).
pub fn host_memory_bytes() -> u64 {
    // SAFETY: sysconf reads system constants; it has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    match (u64::try_from(pages), u64::try_from(page)) {
        (Ok(n), Ok(p)) if n > 0 && p > 0 => n.saturating_mul(p),
        _ => u64::MAX,
    }
}

/// Bytes a tensor of `shape` and `dtype` needs; `None` past `u64::MAX`.
pub fn tensor_bytes(shape: &[u64], dtype: DType) -> Option<u64> {
    shape
        .iter()
        .try_fold(dtype.size_bytes() as u64, |n, &d| n.checked_mul(d))
}

/// `37.3 GiB`, or `512.0 MiB` below a GiB.
pub fn bytes_text(bytes: u64) -> String {
    if bytes < 1 << 30 {
        return format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64);
    }
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// What a tensor needs, for messages: `40000000000 bytes (37.3 GiB)`.
pub fn size_text(bytes: Option<u64>) -> String {
    match bytes {
        Some(b) => format!("{b} bytes ({})", bytes_text(b)),
        None => "more than 2^64 bytes".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_bytes_is_checked() {
        assert_eq!(
            tensor_bytes(&[100_000, 100_000], DType::F32),
            Some(40_000_000_000)
        );
        assert_eq!(tensor_bytes(&[1 << 40, 1 << 40], DType::F16), None);
        assert_eq!(tensor_bytes(&[], DType::F64), Some(8));
        assert_eq!(
            size_text(Some(40_000_000_000)),
            "40000000000 bytes (37.3 GiB)"
        );
        assert!(host_memory_bytes() > 1 << 20);
    }
}
