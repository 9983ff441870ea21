//! `compare`: the token ids of one finished run from each of two results files.

use std::path::Path;

use ocr_bench::compare::{compare, load_run};

use super::EXIT_USAGE;

/// Prints the comparison; 0 identical, 1 any difference, 2 bad input.
pub fn compare_command(a: &Path, b: &Path, run_a: Option<&str>, run_b: Option<&str>) -> u8 {
    let runs = load_run(a, run_a).and_then(|ra| Ok((ra, load_run(b, run_b)?)));
    match runs {
        Ok((ra, rb)) => {
            let comparison = compare(ra, rb);
            print!("{}", comparison.render());
            if comparison.identical() {
                0
            } else {
                1
            }
        }
        Err(e) => {
            eprintln!("ocr-bench: {e}");
            EXIT_USAGE
        }
    }
}
