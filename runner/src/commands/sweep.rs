//! `sweep`: every combination of parameter values in every listed browser, resumable.

use anyhow::{Context, Result};

use ocr_bench::procfs;
use ocr_bench::sweep::{sweep, SweepEnd, SweepOptions};

use ocr_bench::exit::Cause;

/// 0 when every combination ended with the page's result or its own error; else the exit
/// status of the worst cause (the same as `run`'s for it), 130 interrupted.
pub async fn sweep_command(options: SweepOptions) -> Result<u8> {
    procfs::become_subreaper().context("becoming a child subreaper")?;
    Ok(match sweep(options).await? {
        SweepEnd::Complete => 0,
        SweepEnd::Failed(cause) => cause.code(),
        SweepEnd::Interrupted => Cause::Interrupted.code(),
    })
}
