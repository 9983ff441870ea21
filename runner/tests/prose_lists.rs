//! Lists and counts of names in the prose, held to the code they describe: the commands of
//! `ocr-bench --help`, the closing record's outcomes and the count of page parameters, so that
//! a command, outcome or parameter added in the code fails here until the docs name it.

use std::path::Path;
use std::process::Command;

use ocr_bench::run::Outcome;

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The commands `ocr-bench --help` lists, clap's own `help` left out.
fn commands() -> Vec<String> {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let listed: Vec<String> = help
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    assert!(listed.len() > 5, "no commands read from --help:\n{help}");
    listed
}

/// The names of `names` that `text` never writes in backquotes.
fn unnamed<'a>(text: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    names
        .into_iter()
        .filter(|name| !text.contains(&format!("`{name}`")))
        .collect()
}

#[test]
fn the_docs_name_every_command() {
    let commands = commands();
    for file in ["docs/architecture.md", "runner/README.md"] {
        let missing = unnamed(&read(file), commands.iter().map(String::as_str));
        assert!(
            missing.is_empty(),
            "{file} does not name the commands {missing:?}"
        );
    }
}

#[test]
fn the_docs_name_every_outcome_of_a_closing_record() {
    for file in ["docs/architecture.md", "runner/README.md"] {
        let missing = unnamed(&read(file), Outcome::LABELS);
        assert!(
            missing.is_empty(),
            "{file} does not name the outcomes {missing:?}"
        );
    }
}

/// A count written in words, "twenty-two" or "six"; `None` for any other word.
fn number_word(word: &str) -> Option<usize> {
    const UNITS: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 8] = [
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    let word = word.to_lowercase();
    let unit = |w: &str| UNITS.iter().position(|u| *u == w);
    let ten = |w: &str| TENS.iter().position(|t| *t == w).map(|i| (i + 2) * 10);
    match word.split_once('-') {
        Some((tens, units)) => Some(ten(tens)? + unit(units).filter(|u| (1..10).contains(u))?),
        None => unit(&word).or_else(|| ten(&word)),
    }
}

#[test]
fn every_count_of_the_page_parameters_is_the_cores() {
    let count = ocr_bench_core::config::parameters().len();
    // Where the docs speak of the page's parameters as a whole; the model card's "parameters"
    // are the network's weights, another thing.
    for file in [
        "README.md",
        "crate/README.md",
        "runner/README.md",
        "docs/architecture.md",
        "docs/benchmark-protocol.md",
    ] {
        let text = read(file);
        let words: Vec<&str> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '-'))
            .filter(|w| !w.is_empty())
            .collect();
        for pair in words.windows(4) {
            // "twenty-two in all" after the parameters' table, or "twenty page parameters"
            // ("the seed's six parameters" are the seed's, a fixed count).
            let counted = match pair {
                [n, "page", "parameters", ..] | [n, "in", "all", ..] => number_word(n),
                _ => None,
            };
            if let Some(n) = counted {
                assert_eq!(
                    n, count,
                    "{file} counts {n} where the core has {count} parameters: {pair:?}"
                );
            }
        }
    }
}

#[test]
fn counts_in_words_read_as_numbers() {
    assert_eq!(number_word("twenty-two"), Some(22));
    assert_eq!(number_word("Six"), Some(6));
    assert_eq!(number_word("twenty"), Some(20));
    assert_eq!(number_word("twenty-zero"), None);
    assert_eq!(number_word("parameters"), None);
}
