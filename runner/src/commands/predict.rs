//! `predict`: the memory each configuration is expected to take, per phase, from the manifest
//! it names and the fitted constants of `memory_model::predict`, before any browser starts;
//! with `--adapter`, its largest buffer against a recorded adapter's limits.

use std::path::Path;

use ocr_bench::combos::plan::plan;
use ocr_bench::gpu_placement::GpuPlacement;
use ocr_bench::memory_model::predict::{
    adapter_limits, largest_buffer, over_limits, predict, recorded_placement, render, AdapterLimits,
};
use ocr_bench::memory_model::release_steps;

use super::EXIT_USAGE;

/// Prints each configuration's prediction; 0, 1 when one exceeds the adapter's limits, or 2
/// on bad input.
pub fn predict_command(root: &Path, base: &str, queries: &[String], adapter: Option<&Path>) -> u8 {
    match run(root, base, queries, adapter) {
        Ok((text, exceeded)) => {
            print!("{text}");
            u8::from(exceeded)
        }
        Err(e) => {
            eprintln!("ocr-bench: {e}");
            EXIT_USAGE
        }
    }
}

fn run(
    root: &Path,
    base: &str,
    queries: &[String],
    adapter: Option<&Path>,
) -> Result<(String, bool), String> {
    // Without a recorded adapter the GPU bytes are taken to be device memory (a real GPU).
    let (limits, placement): (Option<AdapterLimits>, GpuPlacement) = match adapter {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("--adapter {}: {e}", file.display()))?;
            let limits =
                adapter_limits(&text).map_err(|e| format!("--adapter {}: {e}", file.display()))?;
            (Some(limits), recorded_placement(&text))
        }
        None => (None, GpuPlacement::Device),
    };
    let plan = plan(base, queries).map_err(|e| e.to_string())?;
    let mut out = String::new();
    let mut exceeded = false;
    for planned in &plan.planned {
        let config = ocr_bench_core::parse_query(&planned.query).map_err(|e| e.to_string())?;
        let (shown, manifest) =
            ocr_bench::model_manifest::read(root, ocr_bench::run::DEFAULT_PAGE, &config.manifest)?;
        let refused = |e: String| format!("{:?} on the manifest {shown}: {e}", planned.query);
        let predictions = predict(&manifest, &config, placement).map_err(refused)?;
        let (largest, tensor) = largest_buffer(&manifest, &config).map_err(refused)?;
        out.push_str(&format!(
            "{} · {shown}\nexpected peak per phase, MiB (GPU: every realm's device; wasm: \
             WebAssembly heaps per realm; PSS rise: above the idle browser, {}):\n",
            if planned.query.is_empty() {
                "default configuration"
            } else {
                &planned.query
            },
            if placement == GpuPlacement::Software {
                "the GPU bytes in it: the adapter is software"
            } else {
                "the GPU bytes outside it, in device memory"
            }
        ));
        out.push_str(&render(&predictions));
        out.push_str(&release_steps::render(
            &predictions,
            &config,
            placement == GpuPlacement::Software,
        ));
        let largest_line = format!("largest buffer {largest} bytes ({tensor})");
        match &limits {
            None => out.push_str(&format!(
                "{largest_line}; no adapter checked (--adapter FILE)\n"
            )),
            Some(limits) => {
                let over = over_limits(largest, limits);
                if over.is_empty() {
                    out.push_str(&format!(
                        "{largest_line}: within the adapter's maxBufferSize {} and \
                         maxStorageBufferBindingSize {}\n",
                        limits.max_buffer_size, limits.max_storage_buffer_binding_size
                    ));
                } else {
                    exceeded = true;
                    out.push_str(&format!(
                        "{largest_line}: EXCEEDS the adapter's {}\n",
                        over.join(", ")
                    ));
                }
            }
        }
        out.push('\n');
    }
    Ok((out, exceeded))
}
