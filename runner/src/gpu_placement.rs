//! Where a run's GPU bytes live: in a software adapter's ordinary process memory (inside PSS)
//! or in a real GPU's device memory (outside it), from the adapters the page recorded. Plain
//! data that the sampler, the memory model, the reports and the export share.

use ocr_bench_core::record::PageSummary;
use serde_json::Value;

/// Where the GPU bytes of a run live, from the adapters the page recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuPlacement {
    /// A software adapter (SwiftShader, llvmpipe, lavapipe, a fallback adapter): its buffers
    /// are ordinary memory of a browser process, so they are inside PSS.
    Software,
    /// A real GPU: the buffers are in device memory, outside PSS (driver VRAM sees them).
    Device,
    /// No adapter says which.
    Unknown,
}

impl GpuPlacement {
    /// The cell of the summary's "GPU in PSS" column.
    pub fn describe(self) -> &'static str {
        match self {
            GpuPlacement::Software => "yes (software)",
            GpuPlacement::Device => "no (GPU)",
            GpuPlacement::Unknown => "? (no adapter)",
        }
    }
}

/// Names of software rasterisers in an adapter's description, vendor, architecture or device.
const SOFTWARE_NAMES: [&str; 3] = ["swiftshader", "llvmpipe", "lavapipe"];

/// One adapter's answer: the page's own `software` verdict where recorded, else the fallback
/// flag or a software rasteriser's name (records written before `software` existed).
pub fn adapter_is_software(adapter: &Value) -> Option<bool> {
    if let Some(software) = adapter.get("software").and_then(Value::as_bool) {
        return Some(software);
    }
    let named = ["description", "vendor", "architecture", "device"]
        .iter()
        .filter_map(|key| adapter.get(key).and_then(Value::as_str))
        .any(|name| {
            let name = name.to_ascii_lowercase();
            SOFTWARE_NAMES
                .iter()
                .any(|software| name.contains(software))
        });
    match adapter.get("isFallbackAdapter").and_then(Value::as_bool) {
        Some(true) => Some(true),
        _ if named => Some(true),
        fallback => fallback,
    }
}

/// The placement of a run's GPU bytes: software where any realm's adapter is, a real GPU
/// where some adapter says so and none is software.
pub fn gpu_placement(summary: &PageSummary) -> GpuPlacement {
    let environment = &summary.environment;
    let answers: Vec<bool> = std::iter::once(&environment.adapter)
        .chain(environment.worker_adapter.as_ref())
        .chain(environment.decoder_worker_adapter.as_ref())
        .filter_map(adapter_is_software)
        .collect();
    if answers.contains(&true) {
        GpuPlacement::Software
    } else if answers.contains(&false) {
        GpuPlacement::Device
    } else {
        GpuPlacement::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_adapter_says_whether_gpu_bytes_are_process_memory() {
        let cases = [
            (
                json!({ "software": true, "isFallbackAdapter": false }),
                Some(true),
            ),
            (
                json!({ "software": false, "description": "llvmpipe" }),
                Some(false),
            ),
            (
                json!({ "isFallbackAdapter": true, "description": "" }),
                Some(true),
            ),
            (
                json!({ "isFallbackAdapter": null, "description": "Google SwiftShader" }),
                Some(true),
            ),
            (
                json!({ "vendor": "mesa", "device": "LLVMPIPE (LLVM 15)" }),
                Some(true),
            ),
            (
                json!({ "isFallbackAdapter": false, "description": "NVIDIA H200" }),
                Some(false),
            ),
            (json!({ "description": "NVIDIA H200" }), None),
            (Value::Null, None),
        ];
        for (adapter, expected) in cases {
            assert_eq!(adapter_is_software(&adapter), expected, "{adapter}");
        }
    }
}
