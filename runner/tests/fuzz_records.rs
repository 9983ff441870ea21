//! The readers of results files over bad bytes: whatever a file holds, the record reader
//! (`record::parse_records`) and the results-file reader (`runs::read_runs`) answer with
//! records or with the line that is wrong, never a panic; what they read groups into runs
//! whose rows `export` writes and which `compare` takes.

mod mutate;

use std::path::Path;

use ocr_bench::record::{parse_lines, parse_records};
use ocr_bench::runs::{group, read_runs};
use proptest::prelude::*;

/// Reads `text` as every reader does, checking what each answers.
fn read_every_way(text: &str) {
    let lines = text.lines().count();
    let numbered = |line: usize| (1..=lines).contains(&line);
    for parsed in parse_lines(text) {
        if let Err(bad) = parsed {
            assert!(numbered(bad.line) && !bad.message.is_empty(), "{bad:?}");
        }
    }
    match parse_records(text) {
        Ok(records) => {
            assert!(records.torn.iter().all(|bad| numbered(bad.line)));
            let read = records.lines.len();
            let runs = group(records.lines);
            assert_eq!(runs.iter().map(|run| run.lines.len()).sum::<usize>(), read);
            for run in &runs {
                assert!(numbered(run.first_line()));
                let row = ocr_bench::export::row(run);
                assert_eq!(row.len(), ocr_bench::export::columns().len());
            }
            // What `export` writes: every column, and only those some run holds.
            for all_columns in [true, false] {
                let table = ocr_bench::export::Table::of(&runs, all_columns);
                assert!(table
                    .rows
                    .iter()
                    .all(|row| row.len() == table.columns.len()));
                for row in &table.rows {
                    table.json_row(row);
                }
            }
        }
        Err(bad) => assert!(numbered(bad.line) && !bad.message.is_empty(), "{bad:?}"),
    }
    let file = Path::new("fuzzed.jsonl");
    if let (Ok(a), Ok(b)) = (
        ocr_bench::compare::parse_run(text, file, None),
        ocr_bench::compare::parse_run(text, file, None),
    ) {
        ocr_bench::compare::compare(a, b).render();
    }
}

proptest! {
    #![proptest_config(mutate::config(1000))]

    #[test]
    fn any_bytes_are_records_or_a_named_line(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        read_every_way(&String::from_utf8_lossy(&bytes));
    }
}

proptest! {
    #![proptest_config(mutate::config(600))]

    #[test]
    fn mutated_real_files_are_records_or_a_named_line(text in mutate::mutated_file()) {
        read_every_way(&text);
    }
}

proptest! {
    #![proptest_config(mutate::config(300))]

    /// Through the file, as `export`, `report` and `sweep` read it (invalid UTF-8 included).
    #[test]
    fn a_results_file_of_any_bytes_is_runs_or_an_error(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..4096),
            mutate::mutated_file().prop_map(String::into_bytes),
        ]
    ) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("results.jsonl");
        std::fs::write(&file, &bytes).unwrap();
        match read_runs(&file) {
            Ok(runs) => prop_assert!(runs.iter().all(|run| !run.lines.is_empty())),
            Err(message) => prop_assert!(message.contains("results.jsonl"), "{}", message),
        }
        let report = ocr_bench::report_html::read_all(&[file]);
        if let Err(e) = report {
            prop_assert!(!e.to_string().is_empty());
        }
    }
}

/// Every committed results file reads as it is: the mutations start from good records.
#[test]
fn the_committed_files_read_whole() {
    for text in mutate::FILES {
        let records = parse_records(text).unwrap();
        assert!(records.torn.is_empty());
        assert_eq!(
            records.lines.len(),
            text.lines().filter(|l| !l.trim().is_empty()).count()
        );
    }
}
