//! `export`: one flat row per run of results files, as CSV or JSON lines, for a notebook.
//! The columns and cells are `ocr_bench::export`'s; this file writes them.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use ocr_bench::exit::Cause;
use ocr_bench::export::{Cell, Table};
use ocr_bench::runs::read_runs;

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

/// Writes the table's rows in `format`.
fn write(table: &Table, format: Format, out: impl Write) -> std::io::Result<()> {
    match format {
        Format::Csv => {
            let mut writer = csv::Writer::from_writer(out);
            writer.write_record(&table.columns)?;
            for row in &table.rows {
                writer.write_record(row.iter().map(Cell::csv))?;
            }
            writer.flush()
        }
        Format::Jsonl => {
            let mut out = std::io::BufWriter::new(out);
            for row in &table.rows {
                serde_json::to_writer(&mut out, &table.json_row(row))?;
                out.write_all(b"\n")?;
            }
            out.flush()
        }
    }
}

/// Writes the rows of every file's runs, in file order, to `out` (stdout without it), every
/// column with `all_columns`, else those some run holds; 0 done, 2 bad input (nothing is
/// written then), 6 the rows could not be written.
pub fn export_command(
    files: &[PathBuf],
    format: Format,
    out: Option<&Path>,
    all_columns: bool,
) -> u8 {
    let mut runs = Vec::new();
    for file in files {
        match read_runs(file) {
            Ok(of_file) => runs.extend(of_file),
            Err(e) => {
                eprintln!("ocr-bench: {e}");
                return Cause::Usage.code();
            }
        }
    }
    let table = Table::of(&runs, all_columns);
    let written = match out {
        Some(path) => File::create(path)
            .and_then(|file| write(&table, format, file))
            .map_err(|e| format!("writing {}: {e}", path.display())),
        None => write(&table, format, std::io::stdout().lock())
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
