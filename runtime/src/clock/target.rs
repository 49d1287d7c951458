//! The simulated target's figures, read from a TOML description (defaults:
//! `targets/ascend_910b.toml`). The clock is a pure function of these, the program and its
//! inputs.

use serde::Deserialize;

use super::kernel_model::InstrTable;

pub const DEFAULT: &str = include_str!("../../targets/ascend_910b.toml");
/// `DEFAULT` as JSON (`build.rs`), which reads faster.
const DEFAULT_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/ascend_910b.json"));

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetDesc {
    pub name: String,
    pub clock_ghz: f64,
    pub aicpus: u32,
    pub cube_cores: u32,
    pub vector_cores: u32,
    pub ub_kib: u64,
    pub l1_kib: u64,
    pub gm_bandwidth_gib_s: f64,
    pub dispatch_latency: u64,
    pub batch_issue: u64,
    /// Core cycles from receiving a task to starting its kernel.
    pub core_pickup: u64,
    /// Cycles from a kernel's end until its AICPU sees it.
    pub completion_latency: u64,
    /// Extra AICPU cycles to take a task from another AICPU's queue (work stealing).
    pub steal_latency: u64,
    /// Global-memory bandwidth of the whole chip, shared by the cores moving data at once.
    pub chip_gm_gb_s: f64,
    /// Each AICPU hands tasks only to the AICore clusters it owns.
    pub aicpu_owns_clusters: bool,
    /// Each instruction's cycles (`kernel_model`).
    pub instructions: InstrTable,
}

impl Default for TargetDesc {
    /// Read once per process: a notebook's run process runs a job per cell.
    fn default() -> Self {
        static DESC: std::sync::OnceLock<TargetDesc> = std::sync::OnceLock::new();
        DESC.get_or_init(|| {
            serde_json::from_str(DEFAULT_JSON).expect("the built-in target description parses")
        })
        .clone()
    }
}

impl TargetDesc {
    /// A description file; keys it leaves out keep the defaults.
    pub fn parse(text: &str) -> Result<TargetDesc, String> {
        let mut base: toml::Table = toml::from_str(DEFAULT).expect("built-in");
        let over: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
        merge(&mut base, over);
        let desc: TargetDesc = toml::Value::Table(base)
            .try_into()
            .map_err(|e: toml::de::Error| e.to_string())?;
        if desc.aicpus == 0 || desc.cube_cores == 0 || desc.vector_cores == 0 {
            return Err("aicpus, cube_cores and vector_cores must be at least 1".into());
        }
        if desc.gm_bandwidth_gib_s <= 0.0 || desc.clock_ghz <= 0.0 || desc.chip_gm_gb_s <= 0.0 {
            return Err("clock_ghz, gm_bandwidth_gib_s and chip_gm_gb_s must be positive".into());
        }
        Ok(desc)
    }

    /// Cycles to move `bytes` between global memory and one core's buffer.
    pub fn transfer_cycles(&self, bytes: u64) -> u64 {
        let bytes_per_cycle =
            self.gm_bandwidth_gib_s * (1u64 << 30) as f64 / (self.clock_ghz * 1e9);
        (bytes as f64 / bytes_per_cycle).ceil() as u64
    }
}

fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON `build.rs` writes reads as the TOML does.
    #[test]
    fn the_built_in_description_reads_the_same_from_json() {
        let toml: TargetDesc = toml::from_str(DEFAULT).unwrap();
        assert_eq!(format!("{toml:?}"), format!("{:?}", TargetDesc::default()));
    }
}
