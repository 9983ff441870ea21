//! One finished run as the report reads it: the page's summary and the process memory beside it.
//! Its own file because both the summary and the decomposition take it.

use ocr_bench_core::record::PageSummary;

use crate::memory::ProcessMemory;

/// One finished run, as the summary and the decomposition need it.
#[derive(Debug, Clone)]
pub struct FinishedRun<'a> {
    pub summary: &'a PageSummary,
    pub memory: Option<&'a ProcessMemory>,
}
