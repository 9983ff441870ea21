//! `export`: one flat row per run of a results file, as CSV or JSON lines, for a notebook.

use std::fs::File;
use std::path::Path;

use ocr_bench::exit::Cause;
use ocr_bench::export::{self, Format};
use ocr_bench::runs::read_runs;

/// Writes the rows to `out` (stdout without it); 0 done, 2 bad input, 6 the rows could not
/// be written.
pub fn export_command(results: &Path, format: Format, out: Option<&Path>) -> u8 {
    let runs = match read_runs(results) {
        Ok(runs) => runs,
        Err(e) => {
            eprintln!("ocr-bench: {e}");
            return Cause::Usage.code();
        }
    };
    let written = match out {
        Some(path) => File::create(path)
            .and_then(|file| export::write(&runs, format, file))
            .map_err(|e| format!("writing {}: {e}", path.display())),
        None => export::write(&runs, format, std::io::stdout().lock())
            .map_err(|e| format!("writing to stdout: {e}")),
    };
    match written {
        Ok(()) => {
            if let Some(path) = out {
                eprintln!(
                    "ocr-bench: wrote {} run(s) to {}",
                    runs.len(),
                    path.display()
                );
            }
            0
        }
        Err(e) => {
            eprintln!("ocr-bench: {e}");
            Cause::WriteFailed.code()
        }
    }
}
