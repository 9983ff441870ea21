//! `plan` and `table`, the two steps of `bench/decode-combos` that need the core, and
//! `pool-table`, the last of `bench/pool-sizes`.

use std::path::{Path, PathBuf};

use ocr_bench::combos::plan::{plan, Planned};
use ocr_bench::combos::pool_sizes::{load_pool_size, render};
use ocr_bench::combos::table::{load_combination, table};
use ocr_bench::combos::InputError;
use ocr_bench::table::Format;
use ocr_bench_core::error::quoted;

use super::EXIT_USAGE;

/// `--format` of `table` and `pool-table`: one table, written in any of the formats.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TableFormat {
    /// `markdown` (with what the figures are said around the tables), `csv` (the rows only,
    /// figures plain in the unit the header names) or `html` (the markdown's content as HTML).
    #[arg(long, default_value = "markdown", value_name = "markdown|csv|html")]
    pub format: Format,
}

/// Prints one query per configuration; 0, or 2 with the core's message for the first bad one.
pub fn plan_command(root: &Path, base: &str, combinations: &[String]) -> u8 {
    let checked = plan(base, combinations).and_then(|plan| {
        for planned in &plan.planned {
            // Numbered as given, as the core's refusals in `plan` are.
            let number = combinations
                .iter()
                .position(|given| *given == planned.given)
                .map_or(0, |index| index + 1);
            check_planned_manifest(root, base, number, planned)?;
        }
        Ok(plan)
    });
    match checked {
        Ok(plan) => {
            for (dropped, kept) in &plan.duplicates {
                eprintln!(
                    "ocr-bench: {dropped:?} is the same configuration as {kept:?}; it runs once"
                );
            }
            for planned in &plan.planned {
                println!("{}", planned.query);
            }
            0
        }
        Err(e) => {
            eprintln!("ocr-bench: {e}");
            EXIT_USAGE
        }
    }
}

/// Prints the table; 0, or 2 on a file that cannot be read as one combination.
pub fn table_command(against: &Path, files: &[PathBuf], ncer_tolerance: f64, format: Format) -> u8 {
    let loaded = load_combination(against).and_then(|reference| {
        let others = files
            .iter()
            .map(|f| load_combination(f))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((reference, others))
    });
    match loaded {
        Ok((reference, others)) => {
            print!(
                "{}",
                table(&reference, &others, ncer_tolerance).render_as(format)
            );
            0
        }
        Err(e) => {
            eprintln!("ocr-bench: {e}");
            EXIT_USAGE
        }
    }
}

/// Prints the pool sizes' table; 0, or 2 on a file that cannot be read as one pool size.
pub fn pool_table_command(files: &[PathBuf], format: Format) -> u8 {
    match files
        .iter()
        .map(|f| load_pool_size(f))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(sizes) => {
            print!("{}", render(&sizes, format));
            0
        }
        Err(e) => {
            eprintln!("ocr-bench: {e}");
            EXIT_USAGE
        }
    }
}

/// `--ncer-within`: a difference of nCER, a finite number from 0.
pub fn parse_ncer_tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!(
            "{text:?} is not an nCER difference; allowed: a number from 0, such as 0.005"
        )),
    }
}

/// The manifest a planned combination names, read under `root` as the benchmark page fetches
/// it, must offer its tier and decoder (and allow its capture and verify), and its evaluation
/// set must be there, as `run` and `sweep` check before a browser starts.
fn check_planned_manifest(
    root: &Path,
    base: &str,
    number: usize,
    planned: &Planned,
) -> Result<(), InputError> {
    let refused = |e: String| {
        InputError(format!(
            "combination {number} {} over the base {}: {e}",
            quoted(&planned.given),
            quoted(base)
        ))
    };
    let config = ocr_bench_core::parse_query(&planned.query).map_err(|e| refused(e.to_string()))?;
    ocr_bench::run::check_manifest(root, ocr_bench::run::DEFAULT_PAGE, &config)
        .map_err(&refused)?;
    ocr_bench::run::check_runtime(root, &config).map_err(&refused)?;
    super::run::check_evaluation_set(root, &config).map_err(refused)
}
