//! `export`: one flat row per run of a results file, as CSV or JSON lines, for a notebook.
//! The columns and cells are `ocr_bench::export`'s; this file writes them.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use ocr_bench::exit::Cause;
use ocr_bench::export::{columns, json_row, row, Cell};
use ocr_bench::runs::{read_runs, Run};

/// How rows are written: `csv` (a header of the columns, then a line per run) or `jsonl` (an
/// object per run, every column a key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Jsonl,
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "csv" => Ok(Format::Csv),
            "jsonl" => Ok(Format::Jsonl),
            other => Err(format!("unknown format {other:?}; allowed: csv, jsonl")),
        }
    }
}

/// Writes one row per run in `format`.
fn write(runs: &[Run], format: Format, out: impl Write) -> std::io::Result<()> {
    match format {
        Format::Csv => {
            let mut writer = csv::Writer::from_writer(out);
            writer.write_record(columns())?;
            for run in runs {
                writer.write_record(row(run).iter().map(Cell::csv))?;
            }
            writer.flush()
        }
        Format::Jsonl => {
            let mut out = std::io::BufWriter::new(out);
            for run in runs {
                serde_json::to_writer(&mut out, &json_row(run))?;
                out.write_all(b"\n")?;
            }
            out.flush()
        }
    }
}

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
            .and_then(|file| write(&runs, format, file))
            .map_err(|e| format!("writing {}: {e}", path.display())),
        None => write(&runs, format, std::io::stdout().lock())
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
