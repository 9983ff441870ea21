//! `report`: the markdown summary of results files, and with `--out` the static HTML report.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use ocr_bench::exit::Cause;
use ocr_bench::report_html::{self, ReportError};

/// Prints the markdown (and writes `out/index.html`); 0 done, 2 bad input, 6 the report
/// could not be written.
pub fn report_command(root: Option<&Path>, files: &[PathBuf], out: Option<&Path>) -> u8 {
    match report(root, files, out) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("ocr-bench: {e}");
            match e {
                ReportError::Input(_) => Cause::Usage.code(),
                ReportError::Write(_) => Cause::WriteFailed.code(),
            }
        }
    }
}

fn report(root: Option<&Path>, files: &[PathBuf], out: Option<&Path>) -> Result<(), ReportError> {
    let read = report_html::read_all(files)?;
    for warning in read.iter().flat_map(|f| &f.warnings) {
        eprintln!("ocr-bench: {warning}");
    }
    if let Some(out) = out {
        let root = root.ok_or_else(|| {
            ReportError::Write("no repository root to take the report's page from".to_owned())
        })?;
        let written = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        let page = report_html::write_static(&read, root, out, &written)?;
        eprintln!("ocr-bench: wrote {}", page.display());
    }
    print!("{}", report_html::markdown(&read));
    Ok(())
}
