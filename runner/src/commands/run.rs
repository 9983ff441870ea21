//! `run`: the page once in a fresh headless browser; prints its results.

use anyhow::{Context, Result};

use ocr_bench::browser::{self, BrowserKind};
use ocr_bench::run::{run_once, Outcome, RunOptions, DEFAULT_PAGE};
use ocr_bench::{machine, procfs, report};

use ocr_bench::exit::Cause;

/// Runs `options` as given on the command line: the page and query are first put in their
/// canonical spelling, and the default page's query is checked (exit 2 when invalid).
pub async fn run_command(kind: BrowserKind, options: RunOptions) -> Result<u8> {
    let options = match canonical(options) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("ocr-bench: {message}");
            return Ok(Cause::Usage.code());
        }
    };
    run_checked(kind, &options).await
}

/// `./www/index.html` and `/www/index.html` are the benchmark page too; a leading `?` of the
/// query is dropped, and the benchmark page's query is parsed by the core.
fn canonical(mut options: RunOptions) -> Result<RunOptions, String> {
    options.page = options
        .page
        .trim_start_matches("./")
        .trim_start_matches('/')
        .to_owned();
    ocr_bench::run::check_page(&options.root, &options.page)?;
    let query = options.query.strip_prefix('?').unwrap_or(&options.query);
    options.query = if options.page == DEFAULT_PAGE {
        match ocr_bench_core::parse_query(query) {
            // The canonical spelling: the same configuration always has one key.
            Ok(config) => {
                ocr_bench::run::check_manifest(&config)?;
                config.to_query()
            }
            Err(e) => return Err(format!("invalid query {query:?}: {e}")),
        }
    } else {
        query.to_owned()
    };
    Ok(options)
}

async fn run_checked(kind: BrowserKind, options: &RunOptions) -> Result<u8> {
    procfs::become_subreaper().context("becoming a child subreaper")?;
    let info = browser::probe(kind)?;
    let machine = machine::describe();
    eprintln!("ocr-bench: {} on {}", info.version, options.page);
    let started = std::time::Instant::now();
    let on_status =
        move |status: &str| eprintln!("[{:>7.1} s] {status}", started.elapsed().as_secs_f64());
    let report = run_once(options, &info, &machine, &on_status).await?;
    let mut code = match &report.outcome {
        Outcome::Finished {
            summary,
            process_memory,
        } => {
            print!(
                "{}",
                report::run_report(
                    &info.version,
                    &options.query,
                    summary,
                    process_memory,
                    report.wall.as_secs_f64()
                )
            );
            verdict(summary)
        }
        other => {
            let message = other
                .failure_message(kind.name(), options.timeout)
                .unwrap_or_default();
            eprintln!("ocr-bench: {message}");
            if !matches!(
                other,
                Outcome::PageError { .. }
                    | Outcome::Interrupted { .. }
                    | Outcome::WriteFailed { .. }
            ) && !report.browser_log_tail.is_empty()
            {
                eprintln!(
                    "last lines of the browser's output:\n{}",
                    report.browser_log_tail
                );
            }
            other.cause().map_or(0, Cause::code)
        }
    };
    if !report.stop.left.is_empty() {
        eprintln!(
            "ocr-bench: {} browser process(es) were left after stopping it: {:?}",
            report.stop.left.len(),
            report.stop.left
        );
        if code == 0 {
            code = Cause::ProcessesLeft.code();
        }
    }
    println!("results appended to {}", options.results.display());
    Ok(code)
}

/// A finished run's status: 0, or `VerificationFailed` when `verify=wasm` found a case that
/// left the WASM reference (the record is written all the same).
fn verdict(summary: &ocr_bench::record::Posted) -> u8 {
    match summary.benchmark() {
        Some(summary) if summary.verification_failed() => {
            eprintln!(
                "ocr-bench: verification failed: the WebGPU run left the WASM reference (verify=wasm); its figures are not a result"
            );
            Cause::VerificationFailed.code()
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;

    fn options(page: &str, query: &str) -> RunOptions {
        RunOptions {
            root: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."),
            page: page.to_owned(),
            query: query.to_owned(),
            results: PathBuf::from("results.jsonl"),
            timeout: Duration::from_secs(1),
            sample_interval: Duration::from_millis(25),
        }
    }

    #[test]
    fn the_benchmark_page_and_its_query_take_their_canonical_spelling() {
        let expected = ocr_bench_core::parse_query("tier=242").unwrap().to_query();
        for page in ["./www/index.html", "/www/index.html", DEFAULT_PAGE] {
            let checked = canonical(options(page, "?tier=242")).unwrap();
            assert_eq!(checked.page, DEFAULT_PAGE);
            assert_eq!(checked.query, expected);
        }
    }

    #[test]
    fn an_invalid_query_is_refused_only_for_the_benchmark_page() {
        let err = canonical(options(DEFAULT_PAGE, "tier=7")).unwrap_err();
        assert!(err.contains("\"tier=7\""), "{err}");
        let other = canonical(options("bench/core/index.html", "?tier=7")).unwrap();
        assert_eq!(other.query, "tier=7");
    }
}
