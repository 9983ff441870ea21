//! `sweep`: every combination of parameter values in every listed browser, resumable.

use anyhow::{Context, Result};

use ocr_bench::procfs;
use ocr_bench::sweep::{sweep, SweepEnd, SweepOptions};

use super::EXIT_INTERRUPTED;

/// 0 when every combination ended with the page's result or its own error, 1 when any timed
/// out, crashed or left processes behind, 130 interrupted.
pub async fn sweep_command(options: SweepOptions) -> Result<u8> {
    procfs::become_subreaper().context("becoming a child subreaper")?;
    Ok(match sweep(options).await? {
        SweepEnd::Complete => 0,
        SweepEnd::Failures => 1,
        SweepEnd::Interrupted => EXIT_INTERRUPTED,
    })
}
