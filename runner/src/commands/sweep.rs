//! `sweep`: every combination of parameter values in every listed browser, resumable.

use anyhow::{Context, Result};

use ocr_bench::procfs;
use ocr_bench::sweep::{sweep, SweepEnd, SweepOptions};

use ocr_bench::exit::Cause;
use ocr_bench::server::{Hold, Injection};

use super::run::check_evaluation_set;

/// 0 when every combination ended with the page's result or its own error; else the exit
/// status of the worst cause (the same as `run`'s for it), 130 interrupted.
pub async fn sweep_command(options: SweepOptions) -> Result<u8> {
    // Bad values are the sweep's own to report; only the sets of valid ones are looked for.
    let configs = ocr_bench_core::expand_sweep(&options.params).unwrap_or_default();
    let checked = Injection::from_env()
        .and_then(|_| Hold::from_env())
        .map(|_| ())
        .and_then(|()| {
            configs
                .iter()
                .try_for_each(|config| check_evaluation_set(&options.run.root, config))
        });
    if let Err(message) = checked {
        eprintln!("ocr-bench: {message}");
        return Ok(Cause::Usage.code());
    }
    procfs::become_subreaper().context("becoming a child subreaper")?;
    Ok(match sweep(options).await? {
        SweepEnd::Complete => 0,
        SweepEnd::Failed(cause) => cause.code(),
        SweepEnd::Interrupted => Cause::Interrupted.code(),
    })
}
