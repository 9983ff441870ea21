//! Sweeps: the cartesian product of parameter values (expanded by the core) times a list of
//! browsers, each combination in a fresh browser, resumable from the results file.

use std::collections::HashSet;
use std::fs;
use std::path::Path;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

use crate::browser::{self, BrowserInfo, BrowserKind};
use crate::report::{self, SweepRow};
use crate::run::{self, Outcome, RunOptions};

/// Parses `NAME=V1,V2,…` into the core's sweep axis form.
pub fn parse_param(text: &str) -> Result<(String, Vec<String>), String> {
    let (name, values) = text.split_once('=').ok_or_else(|| {
        format!(
            "--param {text:?} must look like NAME=V1,V2 (for example decoder=baseline,fixed-kv)"
        )
    })?;
    if name.is_empty() {
        return Err(format!("--param {text:?} has no parameter name before `=`"));
    }
    let values: Vec<String> = values.split(',').map(str::to_owned).collect();
    if values.iter().any(String::is_empty) {
        return Err(format!(
            "--param {text:?} has an empty value; list values separated by single commas"
        ));
    }
    Ok((name.to_owned(), values))
}

/// A combination is finished when a closing `run` record says the page posted its result (or
/// its own error, unless `retry_failed`). Timeouts, crashes and interruptions run again.
fn finished_runs(results: &Path, retry_failed: bool) -> Result<HashSet<(String, String, String)>> {
    let mut done = HashSet::new();
    let text = match fs::read_to_string(results) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(done),
        Err(e) => return Err(e).with_context(|| format!("reading {}", results.display())),
    };
    for line in text.lines() {
        // A line cut short by a crash is skipped: its run is simply done again.
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if record["kind"] != "run" {
            continue;
        }
        let finished = match record["outcome"].as_str() {
            Some("result") => true,
            Some("error") => !retry_failed,
            _ => false,
        };
        if finished {
            done.insert(run_key(&record));
        }
    }
    Ok(done)
}

fn run_key(record: &Value) -> (String, String, String) {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (
        text(&record["browser"]["name"]),
        text(&record["page"]),
        text(&record["query"]),
    )
}

/// The latest record of each combination, for the closing table.
fn table_rows(
    results: &Path,
    combinations: &[(BrowserInfo, String)],
    page: &str,
) -> Result<Vec<SweepRow>> {
    let text =
        fs::read_to_string(results).with_context(|| format!("reading {}", results.display()))?;
    let records: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let rows = combinations
        .iter()
        .map(|(info, query)| {
            let key = (info.name.name().to_owned(), page.to_owned(), query.clone());
            let mine = |kind: &str| {
                records
                    .iter()
                    .rev()
                    .find(|r| r["kind"] == kind && run_key(r) == key)
            };
            let closing = mine("run");
            let outcome = closing.map_or_else(
                || "not run".to_owned(),
                |r| match r["message"].as_str() {
                    Some(message) => format!("{}: {message}", r["outcome"].as_str().unwrap_or("?")),
                    None => r["outcome"].as_str().unwrap_or("?").to_owned(),
                },
            );
            let finished = closing.is_some_and(|r| r["outcome"] == "result");
            let result = mine("result").filter(|_| finished);
            SweepRow {
                browser: info.name.name().to_owned(),
                query: query.clone(),
                outcome,
                summary: result.map(|r| r["summary"].clone()),
                process_memory: result.map(|r| r["processMemory"].clone()),
            }
        })
        .collect();
    Ok(rows)
}

/// One line per combination, above the bar; without a terminal (where indicatif draws
/// nothing, and would print nothing either) straight to stderr.
fn say(bar: &ProgressBar, line: String) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

pub struct SweepOptions {
    pub browsers: Vec<BrowserKind>,
    pub params: Vec<(String, Vec<String>)>,
    pub retry_failed: bool,
    /// Root, results, timeout and sampling as for one run; `page` and `query` are set per
    /// combination.
    pub run: RunOptions,
}

/// How a sweep ended, for the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepEnd {
    /// Every combination ended with the page's result or its own error.
    Complete,
    /// Some combination timed out, crashed or left processes behind.
    Failures,
    Interrupted,
}

/// Runs every unfinished combination.
pub async fn sweep(options: SweepOptions) -> Result<SweepEnd> {
    let configs =
        ocr_bench_core::expand_sweep(&options.params).map_err(|e| anyhow::anyhow!("{e}"))?;
    if options.browsers.is_empty() {
        bail!("--browser lists no browser; allowed: chromium, firefox");
    }
    let mut infos = Vec::new();
    for kind in &options.browsers {
        infos.push(browser::probe(*kind)?);
    }
    let machine = crate::machine::describe();
    // Each configuration in every browser next to each other, so a cut-short sweep still
    // holds comparable pairs.
    let combinations: Vec<(BrowserInfo, String)> = configs
        .iter()
        .flat_map(|config| {
            infos
                .iter()
                .map(move |info| (info.clone(), config.to_query()))
        })
        .collect();
    let done = finished_runs(&options.run.results, options.retry_failed)?;
    let page = options.run.page.clone();
    let todo: Vec<&(BrowserInfo, String)> = combinations
        .iter()
        .filter(|(info, query)| {
            !done.contains(&(info.name.name().to_owned(), page.clone(), query.clone()))
        })
        .collect();
    eprintln!(
        "sweep: {} combination(s), {} already finished in {}, {} to run",
        combinations.len(),
        combinations.len() - todo.len(),
        options.run.results.display(),
        todo.len()
    );
    let bar = ProgressBar::new(todo.len() as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} ETA {eta} {wide_msg}",
        )
        .context("progress bar template")?
        .progress_chars("=> "),
    );
    let mut all_finished = true;
    for (info, query) in todo {
        let label = format!(
            "{} {}",
            info.name,
            if query.is_empty() { "(default)" } else { query }
        );
        bar.set_message(label.clone());
        let run_options = RunOptions {
            query: query.clone(),
            page: page.clone(),
            ..options.run.clone()
        };
        let status_bar = bar.clone();
        let status_label = label.clone();
        let on_status =
            move |status: &str| status_bar.set_message(format!("{status_label}: {status}"));
        let report = run::run_once(&run_options, info, &machine, &on_status).await?;
        let line = match &report.outcome {
            Outcome::Finished { summary, .. } => format!(
                "done  {label}: nCER {}, median {} ms, {:.0} s",
                summary["nCER"]
                    .as_f64()
                    .map_or("n/a".to_owned(), |v| format!("{v:.4}")),
                summary["medianMs"]
                    .as_f64()
                    .map_or("-".to_owned(), |v| format!("{v:.0}")),
                report.wall.as_secs_f64()
            ),
            other => {
                if !matches!(other, Outcome::PageError { .. }) {
                    all_finished = false;
                }
                let message = other
                    .failure_message(info.name.name(), options.run.timeout)
                    .unwrap_or_default();
                format!("FAIL  {label}: {message}")
            }
        };
        say(&bar, line);
        if !report.stop.left.is_empty() {
            say(
                &bar,
                format!(
                    "FAIL  {label}: processes left after stopping the browser: {:?}",
                    report.stop.left
                ),
            );
            all_finished = false;
        }
        bar.inc(1);
        if matches!(report.outcome, Outcome::Interrupted { .. }) {
            bar.abandon_with_message("interrupted; run the same command again to resume");
            return Ok(SweepEnd::Interrupted);
        }
    }
    bar.finish_and_clear();
    let rows = table_rows(&options.run.results, &combinations, &page)?;
    print!("{}", report::sweep_table(&rows));
    println!("results: {}", options.run.results.display());
    Ok(if all_finished {
        SweepEnd::Complete
    } else {
        SweepEnd::Failures
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn params_split_into_name_and_values() {
        assert_eq!(
            parse_param("decoder=baseline,fixed-kv").unwrap(),
            (
                "decoder".to_owned(),
                vec!["baseline".to_owned(), "fixed-kv".to_owned()]
            )
        );
        assert!(parse_param("decoder").unwrap_err().contains("NAME=V1,V2"));
        assert!(parse_param("=1").unwrap_err().contains("no parameter name"));
        assert!(parse_param("tier=121,,242")
            .unwrap_err()
            .contains("empty value"));
    }

    #[test]
    fn resume_skips_results_and_page_errors_but_not_timeouts() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let lines = [
            r#"{"kind":"run","outcome":"result","browser":{"name":"chromium"},"page":"www/index.html","query":""}"#,
            r#"{"kind":"run","outcome":"error","browser":{"name":"chromium"},"page":"www/index.html","query":"tier=242"}"#,
            r#"{"kind":"run","outcome":"timeout","browser":{"name":"firefox"},"page":"www/index.html","query":""}"#,
            r#"{"kind":"result","browser":{"name":"firefox"},"page":"www/index.html","query":"memory=default"}"#,
            r#"{"kind":"run","outcome":"res"#,
        ];
        for line in lines {
            writeln!(file, "{line}").unwrap();
        }
        let key = |b: &str, q: &str| (b.to_owned(), "www/index.html".to_owned(), q.to_owned());
        let done = finished_runs(file.path(), false).unwrap();
        assert_eq!(
            done,
            HashSet::from([key("chromium", ""), key("chromium", "tier=242")])
        );
        let retry = finished_runs(file.path(), true).unwrap();
        assert_eq!(retry, HashSet::from([key("chromium", "")]));
        assert!(
            finished_runs(Path::new("/nonexistent/results.jsonl"), false)
                .unwrap()
                .is_empty()
        );
    }
}
