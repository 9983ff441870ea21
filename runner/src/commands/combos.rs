//! `plan` and `table`: the two steps of `bench/decode-combos` that need the core.

use std::path::{Path, PathBuf};

use ocr_bench::combos::plan::plan;
use ocr_bench::combos::table::{load_combination, table};

use super::EXIT_USAGE;

/// Prints one query per configuration; 0, or 2 with the core's message for the first bad one.
pub fn plan_command(base: &str, combinations: &[String]) -> u8 {
    match plan(base, combinations) {
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
pub fn table_command(against: &Path, files: &[PathBuf], ncer_tolerance: f64) -> u8 {
    let loaded = load_combination(against).and_then(|reference| {
        let others = files
            .iter()
            .map(|f| load_combination(f))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((reference, others))
    });
    match loaded {
        Ok((reference, others)) => {
            print!("{}", table(&reference, &others, ncer_tolerance).render());
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
