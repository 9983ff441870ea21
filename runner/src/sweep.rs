//! Sweeps: the cartesian product of parameter values (expanded by the core) times a list of
//! browsers, each combination in a fresh browser of its target, resumable from the results
//! file (a run another target recorded is not this target's).

use std::collections::{HashMap, VecDeque};
use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use futures_util::stream::{FuturesUnordered, StreamExt};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use ocr_bench_core::record::PageSummary;

use crate::browser::{self, BrowserKind, ExtraOptions};
use crate::exit::{Cause, Failure};
use crate::procfs;
use crate::record;
use crate::report::{self, SweepRow};
use crate::run::{self, Outcome, RunOptions};
use crate::runs::{self, Run};
use crate::target::local::LocalTarget;
use crate::target::webdriver::WebDriverSpec;
use crate::target::{BrowserTarget, TargetSpec};

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

/// Which combination a run belongs to: target, browser, page, query and the user's own
/// switches or prefs (a run with Dawn's validation off is not a plain run's repeat).
type RunKey = (String, String, String, String, ExtraOptions);

/// The key of a combination the sweep runs.
fn combination_key(target: &dyn BrowserTarget, page: &str, query: &str) -> RunKey {
    (
        target.identity(),
        target.browser().name.name().to_owned(),
        page.to_owned(),
        query.to_owned(),
        target.browser().extra.clone(),
    )
}

fn run_key(run: &Run) -> RunKey {
    (
        run.target().unwrap_or_default().to_owned(),
        run.browser()
            .map(|b| b.name.name().to_owned())
            .unwrap_or_default(),
        run.page().unwrap_or_default().to_owned(),
        run.query().unwrap_or_default().to_owned(),
        run.browser().map(|b| b.extra.clone()).unwrap_or_default(),
    )
}

/// The runs of a results file (none before it exists); a line cut short by a crash is
/// skipped with a warning, so its run is simply done again.
fn read_runs(results: &Path) -> Result<Vec<Run>> {
    let text = match fs::read_to_string(results) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", results.display())),
    };
    let records = record::parse_records(&text).map_err(|bad| {
        anyhow::anyhow!(
            "{}:{}: {} (a sweep resumes only from a file of results records)",
            results.display(),
            bad.line,
            bad.message
        )
    })?;
    for warning in records.warnings(results) {
        eprintln!("ocr-bench: {warning}");
    }
    Ok(runs::group(records.lines))
}

/// A run is finished when its closing `run` record says the page posted its result (or its
/// own error, unless `retry_failed`) and that result did not fail its `verify=wasm`
/// verification (it is not a result of the combination). Timeouts, crashes, interruptions and
/// failed verifications run again. Counted per combination, for `--runs`.
fn finished_runs(runs: &[Run], retry_failed: bool) -> HashMap<RunKey, u32> {
    let mut finished = HashMap::new();
    for run in runs {
        let done = match run.end().map(|end| end.outcome.as_str()) {
            Some("result") => !run.summary().is_some_and(PageSummary::verification_failed),
            Some("error") => !retry_failed,
            _ => false,
        };
        if done {
            *finished.entry(run_key(run)).or_insert(0) += 1;
        }
    }
    finished
}

/// The runner's own resident memory and open files, after each run of a soak.
fn own_footprint() -> (Option<u64>, Option<usize>) {
    (
        procfs::read_rss(std::process::id(), procfs::page_size()),
        procfs::own_open_fds(),
    )
}

/// The latest closed run of each combination, for the closing table.
fn table_rows(
    results: &Path,
    combinations: &[(&dyn BrowserTarget, String)],
    page: &str,
) -> Result<Vec<SweepRow>> {
    let runs = read_runs(results)?;
    let rows = combinations
        .iter()
        .map(|(target, query)| {
            let key = combination_key(*target, page, query);
            let latest = runs
                .iter()
                .rev()
                .find(|run| run.end().is_some() && run_key(run) == key);
            let closing = latest.and_then(Run::end);
            let outcome = closing.map_or_else(
                || "not run".to_owned(),
                |end| match &end.message {
                    Some(message) => format!("{}: {message}", end.outcome),
                    None => end.outcome.clone(),
                },
            );
            let finished = closing.is_some_and(|end| end.outcome == "result");
            let result = latest.and_then(Run::result).filter(|_| finished);
            let (summary, process_memory) = match result {
                Some((posted, process_memory)) => {
                    (posted.benchmark().cloned(), Some(process_memory.clone()))
                }
                None => (None, None),
            };
            SweepRow {
                browser: target.browser().name.name().to_owned(),
                query: query.clone(),
                outcome,
                summary,
                process_memory,
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
    /// `--webdriver`: every browser through this endpoint instead of a local launch.
    pub webdriver: Option<WebDriverSpec>,
    /// `--target`, each a browser and where it runs; when given, instead of `browsers`.
    pub targets: Vec<TargetSpec>,
    pub params: Vec<(String, Vec<String>)>,
    pub retry_failed: bool,
    /// Finished runs wanted of every combination (1: each once).
    pub runs: u32,
    /// Runs under way at once, across targets (1: one after another).
    pub jobs: u32,
    /// Of them, runs of a browser started on this machine at once (1 unless asked: two local
    /// browsers share its GPU and cores, which is what they measure).
    pub local_jobs: u32,
    /// `--memory-reports`: Firefox's own memory reports in every run (local Firefox only).
    pub memory_reports: bool,
    /// `--keep-profile DIR`: every local browser on its profile kept in `DIR/<browser>`.
    pub keep_profile: Option<std::path::PathBuf>,
    /// `--chromium-switch`, `--firefox-pref`: each browser started with its own part.
    pub extra: ExtraOptions,
    /// Root, results, timeout and sampling as for one run; `page` and `query` are set per
    /// combination.
    pub run: RunOptions,
}

/// How a sweep ended, for the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepEnd {
    /// Every combination ended with the page's result or its own error.
    Complete,
    /// Some combination timed out, crashed or left processes behind: the cause with the
    /// highest exit status among them. A failed write stops the sweep at once.
    Failed(Cause),
    Interrupted,
}

/// Runs every unfinished combination.
pub async fn sweep(options: SweepOptions) -> Result<SweepEnd> {
    let configs = ocr_bench_core::expand_sweep(&options.params)
        .map_err(|e| Failure::new(Cause::Usage, e.to_string()))?;
    let specs: Vec<TargetSpec> = if options.targets.is_empty() {
        options
            .browsers
            .iter()
            .map(|kind| match &options.webdriver {
                Some(spec) => TargetSpec::WebDriver(spec.clone(), *kind),
                None => TargetSpec::Local(*kind),
            })
            .collect()
    } else {
        options.targets.clone()
    };
    if specs.is_empty() {
        return Err(Failure::new(
            Cause::Usage,
            "--browser lists no browser; allowed: chromium, firefox",
        )
        .into());
    }
    for config in &configs {
        crate::run::check_manifest(&options.run.root, &options.run.page, config)
            .and_then(|()| crate::run::check_runtime(&options.run.root, config))
            .map_err(|message| Failure::new(Cause::Usage, message))?;
    }
    if options.keep_profile.is_some() && options.local_jobs > 1 {
        return Err(Failure::new(
            Cause::Usage,
            format!(
                "--keep-profile with --local-jobs {}: two browsers at once cannot share one \
                 profile (allowed: --local-jobs 1 with --keep-profile)",
                options.local_jobs
            ),
        )
        .into());
    }
    let kinds: Vec<BrowserKind> = specs
        .iter()
        .map(|spec| match spec {
            TargetSpec::Local(kind) | TargetSpec::WebDriver(_, kind) => *kind,
        })
        .collect();
    options
        .extra
        .check_applies(&kinds)
        .map_err(|message| Failure::new(Cause::Usage, message))?;
    let machine = crate::machine::describe();
    let mut targets: Vec<Box<dyn BrowserTarget>> = Vec::new();
    for spec in &specs {
        targets.push(match spec {
            TargetSpec::WebDriver(..) if options.memory_reports => {
                return Err(Failure::new(
                    Cause::Usage,
                    crate::target::local::MEMORY_REPORTS_LOCAL_ONLY,
                )
                .into())
            }
            TargetSpec::WebDriver(..) if options.keep_profile.is_some() => {
                return Err(Failure::new(
                    Cause::Usage,
                    crate::target::local::KEPT_PROFILE_LOCAL_ONLY,
                )
                .into())
            }
            TargetSpec::WebDriver(spec, kind) => Box::new(
                spec.target(*kind, &options.extra)
                    .map_err(|message| Failure::new(Cause::Usage, message))?,
            ),
            TargetSpec::Local(kind) => {
                let mut target = LocalTarget::new(browser::probe(*kind)?, machine.clone())
                    .with_extra(&options.extra);
                if let Some(dir) = &options.keep_profile {
                    target = target.with_kept_profile(dir.clone());
                }
                if options.memory_reports {
                    Box::new(
                        target
                            .with_memory_reports()
                            .map_err(|message| Failure::new(Cause::Usage, message))?,
                    )
                } else {
                    Box::new(target)
                }
            }
        });
    }
    // Each configuration in every browser next to each other, so a cut-short sweep still
    // holds comparable pairs.
    let combinations: Vec<(&dyn BrowserTarget, String)> = configs
        .iter()
        .flat_map(|config| {
            targets
                .iter()
                .map(move |target| (target.as_ref(), config.to_query()))
        })
        .collect();
    let done = finished_runs(&read_runs(&options.run.results)?, options.retry_failed);
    let page = options.run.page.clone();
    let wanted = options.runs.max(1);
    let missing = |(target, query): &(&dyn BrowserTarget, String)| {
        let key = combination_key(*target, &page, query);
        wanted.saturating_sub(done.get(&key).copied().unwrap_or(0))
    };
    // Round by round, so that every combination has its n-th run before any has its n+1-th.
    let todo: Vec<&(&dyn BrowserTarget, String)> = (0..wanted)
        .flat_map(|round| {
            combinations
                .iter()
                .filter(move |combination| missing(combination) > wanted - 1 - round)
        })
        .collect();
    eprintln!(
        "sweep: {} combination(s) × {wanted} run(s), {} already finished in {}, {} to run",
        combinations.len(),
        combinations.len() * wanted as usize - todo.len(),
        options.run.results.display(),
        todo.len()
    );
    let jobs = options.jobs.max(1) as usize;
    let local_jobs = options.local_jobs.max(1) as usize;
    if jobs > 1 {
        check_ports_for_jobs(&options.run.reach)
            .map_err(|message| Failure::new(Cause::Usage, message))?;
    }
    let mut footprints: Vec<(Option<u64>, Option<usize>)> = vec![own_footprint()];
    let style = |template: &str| -> Result<ProgressStyle> {
        Ok(ProgressStyle::with_template(template)
            .context("progress bar template")?
            .progress_chars("=> "))
    };
    let multi = MultiProgress::new();
    let bar = multi.add(ProgressBar::new(todo.len() as u64));
    bar.set_style(style(
        "{elapsed_precise} [{bar:30}] {pos}/{len} ETA {eta} {wide_msg}",
    )?);
    // Several targets: a bar of its own for each, with its own ETA, under the sweep's.
    let mut target_bars: HashMap<String, ProgressBar> = HashMap::new();
    if specs.len() > 1 {
        for (target, _) in &todo {
            let key = target_label(*target);
            let target_bar = target_bars.entry(key.clone()).or_insert_with(|| {
                let target_bar = multi.add(ProgressBar::new(0));
                target_bar.set_prefix(key);
                target_bar
            });
            target_bar.inc_length(1);
        }
        for target_bar in target_bars.values() {
            target_bar.set_style(style(
                "  {prefix}: [{bar:20}] {pos}/{len} ETA {eta} {wide_msg}",
            )?);
        }
    }
    let mut worst: Option<Cause> = None;
    let mut fail = |cause: Cause| {
        if worst.is_none_or(|w| cause.code() > w.code()) {
            worst = Some(cause);
        }
    };
    let mut pending: VecDeque<&(&dyn BrowserTarget, String)> = todo.into_iter().collect();
    let mut running = FuturesUnordered::new();
    let mut local_running = 0usize;
    // Why no further run starts: the runs under way still end (a dropped run would leave its
    // browser behind), then the sweep does.
    let mut stopping: Option<SweepEnd> = None;
    let mut error: Option<anyhow::Error> = None;
    loop {
        while stopping.is_none() && error.is_none() && running.len() < jobs {
            let Some(next) = pending
                .iter()
                .position(|(target, _)| !is_local(*target) || local_running < local_jobs)
            else {
                break;
            };
            let Some(item) = pending.remove(next) else {
                break;
            };
            let (target, query) = item;
            if is_local(*target) {
                local_running += 1;
            }
            let label = format!(
                "{} {}",
                target.browser().name.name(),
                if query.is_empty() { "(default)" } else { query }
            );
            bar.set_message(label.clone());
            let run_options = RunOptions {
                query: query.clone(),
                page: page.clone(),
                ..options.run.clone()
            };
            let status_bar = target_bars
                .get(&target_label(*target))
                .unwrap_or(&bar)
                .clone();
            let status_label = label.clone();
            running.push(async move {
                let on_status =
                    move |status: &str| status_bar.set_message(format!("{status_label}: {status}"));
                let report = run::run_once(&run_options, *target, &on_status).await;
                (*target, label, report)
            });
        }
        let Some((target, label, report)) = running.next().await else {
            break;
        };
        if is_local(target) {
            local_running -= 1;
        }
        let report = match report {
            Ok(report) => report,
            Err(e) => {
                error.get_or_insert(e);
                continue;
            }
        };
        let browser_name = target.browser().name.name();
        let (line, cause) = judge(
            &report.outcome,
            &label,
            browser_name,
            report.limit,
            report.wall,
        );
        if let Some(cause) = cause {
            fail(cause);
        }
        say(&bar, line);
        if !report.stop.left.is_empty() {
            say(
                &bar,
                format!(
                    "FAIL  {label}: processes left after stopping the browser: {:?}",
                    report.stop.left
                ),
            );
            fail(Cause::ProcessesLeft);
        }
        bar.inc(1);
        if let Some(target_bar) = target_bars.get(&target_label(target)) {
            target_bar.inc(1);
        }
        if wanted > 1 {
            let (rss, fds) = own_footprint();
            footprints.push((rss, fds));
            say(
                &bar,
                format!(
                    "      runner after run {}: RSS {} KiB, {} open files",
                    footprints.len() - 1,
                    rss.map_or("-".to_owned(), |b| (b / 1024).to_string()),
                    fds.map_or("-".to_owned(), |n| n.to_string())
                ),
            );
        }
        if matches!(report.outcome, Outcome::Interrupted { .. }) {
            stopping.get_or_insert(SweepEnd::Interrupted);
        }
        if matches!(report.outcome, Outcome::WriteFailed { .. }) {
            stopping = Some(SweepEnd::Failed(Cause::WriteFailed));
        }
    }
    if let Some(e) = error {
        bar.abandon();
        return Err(e);
    }
    match stopping {
        Some(SweepEnd::Interrupted) => {
            bar.abandon_with_message("interrupted; run the same command again to resume");
            return Ok(SweepEnd::Interrupted);
        }
        Some(end) => {
            bar.abandon_with_message("stopped: the results file cannot be written");
            return Ok(end);
        }
        None => {}
    }
    for target_bar in target_bars.values() {
        target_bar.finish_and_clear();
    }
    bar.finish_and_clear();
    let rows = table_rows(&options.run.results, &combinations, &page)?;
    print!("{}", report::sweep_table(&rows));
    if footprints.len() > 2 {
        print!("{}", footprint_summary(&footprints));
    }
    println!("results: {}", options.run.results.display());
    Ok(worst.map_or(SweepEnd::Complete, SweepEnd::Failed))
}

/// A browser started on this machine, as against one reached through WebDriver.
fn is_local(target: &dyn BrowserTarget) -> bool {
    target.identity() == crate::target::LOCAL
}

/// How a target's bar is named: where it runs and the browser.
fn target_label(target: &dyn BrowserTarget) -> String {
    format!("{} {}", target.identity(), target.browser().name.name())
}

/// `--jobs` above 1 serves each run under way on a port of its own: a fixed `--port` or a
/// `--public-url` (one origin for every run) cannot be shared.
fn check_ports_for_jobs(reach: &crate::reach::Reach) -> Result<(), String> {
    if reach.port.is_some_and(|port| port != 0) {
        return Err("--jobs above 1 runs several browsers at once, each served on a port of its own; leave out --port (or give --port 0)".to_owned());
    }
    if reach.public.is_some() {
        return Err("--jobs above 1 serves each run on a port of its own, and --public-url names one origin for all; run with --jobs 1, or without --public-url".to_owned());
    }
    Ok(())
}

/// One run's line above the bar, and the cause it fails the sweep with: `None` for a result
/// (unless its `verify=wasm` failed) and for the page's own error, which finish a combination.
fn judge(
    outcome: &Outcome,
    label: &str,
    browser: &str,
    timeout: std::time::Duration,
    wall: std::time::Duration,
) -> (String, Option<Cause>) {
    match outcome {
        finished if finished.verification_failure().is_some() => (
            // Written, but not a result of the combination: the sweep says so in its status
            // too, and runs it again when resumed.
            format!("FAIL  {label}: {}", run::VERIFICATION_FAILED),
            Some(Cause::VerificationFailed),
        ),
        Outcome::Finished { summary, .. } => (
            format!(
                "done  {label}: nCER {}, median {} ms, {:.0} s",
                summary
                    .benchmark()
                    .and_then(|s| s.ncer)
                    .map_or("n/a".to_owned(), |v| format!("{v:.4}")),
                summary
                    .benchmark()
                    .and_then(|s| s.median_ms)
                    .map_or("-".to_owned(), |v| format!("{v:.0}")),
                wall.as_secs_f64()
            ),
            None,
        ),
        other => {
            // A page's own error is a finished combination; a refused result is not.
            let finished = matches!(other, Outcome::PageError { .. });
            let message = other.failure_message(browser, timeout).unwrap_or_default();
            (
                format!("FAIL  {label}: {message}"),
                other.cause().filter(|_| !finished),
            )
        }
    }
}

/// The runner's own memory and open files over a soak: before the first run, after the first,
/// after the last, and the largest (flat means no leak).
fn footprint_summary(footprints: &[(Option<u64>, Option<usize>)]) -> String {
    let kib = |b: Option<u64>| b.map_or("-".to_owned(), |b| (b / 1024).to_string());
    let count = |n: Option<usize>| n.map_or("-".to_owned(), |n| n.to_string());
    let (first, after_one, last) = (
        footprints[0],
        footprints[1],
        footprints[footprints.len() - 1],
    );
    let max_rss = footprints.iter().filter_map(|f| f.0).max();
    let max_fds = footprints.iter().filter_map(|f| f.1).max();
    format!(
        "runner over {} runs: RSS {} KiB before, {} after the first, {} after the last, {} at most; open files {}, {}, {}, {} at most\n",
        footprints.len() - 1,
        kib(first.0),
        kib(after_one.0),
        kib(last.0),
        kib(max_rss),
        count(first.1),
        count(after_one.1),
        count(last.1),
        count(max_fds)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Line, Record};
    use std::collections::HashSet;
    use std::io::Write;
    use std::time::Duration;

    #[test]
    fn a_soak_summary_shows_first_last_and_largest() {
        let text = footprint_summary(&[
            (Some(10 << 20), Some(12)),
            (Some(20 << 20), Some(14)),
            (Some(21 << 20), Some(14)),
            (Some(20 << 20), Some(14)),
        ]);
        assert!(text.contains("over 3 runs: RSS 10240 KiB before, 20480 after the first, 20480 after the last, 21504 at most"), "{text}");
        assert!(text.contains("open files 12, 14, 14, 14 at most"), "{text}");
    }

    #[test]
    fn several_jobs_need_a_port_of_their_own_per_run() {
        let reach = |port: Option<u16>, public: Option<&str>| crate::reach::Reach {
            host: None,
            port,
            public: public.map(|url| crate::reach::PublicOrigin::parse(url).unwrap()),
            tls: None,
        };
        assert_eq!(check_ports_for_jobs(&reach(None, None)), Ok(()));
        assert_eq!(check_ports_for_jobs(&reach(Some(0), None)), Ok(()));
        let fixed = check_ports_for_jobs(&reach(Some(8443), None)).unwrap_err();
        assert!(fixed.contains("--port"), "{fixed}");
        let public = check_ports_for_jobs(&reach(None, Some("https://10.0.0.5:8443"))).unwrap_err();
        assert!(
            public.contains("--public-url") && public.contains("--jobs 1"),
            "{public}"
        );
    }

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

    /// The committed file's closing record with another outcome and query.
    fn closing(outcome: &str, browser: &str, query: &str) -> String {
        let legacy = crate::record::tests::LEGACY;
        let mut run: serde_json::Value =
            serde_json::from_str(legacy.lines().last().unwrap()).unwrap();
        run["outcome"] = outcome.into();
        run["browser"]["name"] = browser.into();
        run["query"] = query.into();
        run.to_string()
    }

    #[test]
    fn resume_skips_results_and_page_errors_but_not_timeouts() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let lines = [
            closing("result", "chromium", ""),
            closing("error", "chromium", "tier=242"),
            closing("timeout", "firefox", ""),
            // A result without its closing record (the runner died) and a line cut short.
            crate::record::tests::LEGACY
                .lines()
                .nth(10)
                .unwrap()
                .replace("maxTokens=2", "maxTokens=3"),
            r#"{"kind":"run","outcome":"res"#.to_owned(),
        ];
        for line in lines {
            writeln!(file, "{line}").unwrap();
        }
        let records = read_runs(file.path()).unwrap();
        assert_eq!(records.len(), 4, "the cut line is skipped");
        let key = |b: &str, q: &str| {
            let page = "www/index.html".to_owned();
            (
                "local".to_owned(),
                b.to_owned(),
                page,
                q.to_owned(),
                ExtraOptions::default(),
            )
        };
        assert_eq!(
            finished_runs(&records, false)
                .into_keys()
                .collect::<HashSet<_>>(),
            HashSet::from([key("chromium", ""), key("chromium", "tier=242")])
        );
        assert_eq!(
            finished_runs(&records, true)
                .into_keys()
                .collect::<HashSet<_>>(),
            HashSet::from([key("chromium", "")])
        );
        assert!(read_runs(Path::new("/nonexistent/results.jsonl"))
            .unwrap()
            .is_empty());
        // --runs counts every finished run of a combination.
        let mut twice = tempfile::NamedTempFile::new().unwrap();
        for line in [
            closing("result", "chromium", ""),
            closing("timeout", "chromium", ""),
            closing("result", "chromium", ""),
        ] {
            writeln!(twice, "{line}").unwrap();
        }
        let counted = finished_runs(&read_runs(twice.path()).unwrap(), false);
        assert_eq!(counted.get(&key("chromium", "")), Some(&2));
    }

    #[test]
    fn a_run_of_another_target_is_not_taken_as_finished_here() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let mut remote: serde_json::Value =
            serde_json::from_str(&closing("result", "chromium", "")).unwrap();
        remote["target"] = "webdriver:http://grid.example:4444".into();
        // The committed file predates the field: its run is local.
        writeln!(file, "{}", closing("result", "firefox", "")).unwrap();
        writeln!(file, "{remote}").unwrap();
        let runs = read_runs(file.path()).unwrap();
        let page = "www/index.html".to_owned();
        let key = |t: &str, b: &str| {
            (
                t.to_owned(),
                b.to_owned(),
                page.clone(),
                String::new(),
                ExtraOptions::default(),
            )
        };
        assert_eq!(
            finished_runs(&runs, false)
                .into_keys()
                .collect::<HashSet<_>>(),
            HashSet::from([
                key("local", "firefox"),
                key("webdriver:http://grid.example:4444", "chromium")
            ])
        );
        let chromium = runs[1].browser().cloned().unwrap();
        let chromium = LocalTarget::new(chromium, serde_json::Value::Null);
        let local_chromium = combination_key(&chromium, &page, "");
        assert!(!finished_runs(&runs, false).contains_key(&local_chromium));
        let rows = table_rows(
            file.path(),
            &[(&chromium as &dyn BrowserTarget, String::new())],
            &page,
        )
        .unwrap();
        assert_eq!(
            rows[0].outcome, "not run",
            "another target's run is not this one's"
        );
    }

    /// The runs of records, numbered as lines of a file.
    fn grouped(lines: Vec<Line>) -> Vec<Run> {
        runs::group(
            lines
                .into_iter()
                .enumerate()
                .map(|(i, l)| (i + 1, l))
                .collect(),
        )
    }

    /// The committed run, its result verified by `verify=wasm` (`diverging`: one case left
    /// the reference), its closing record naming its run id as today's runner writes it.
    fn verified_run(diverging: bool) -> Vec<Line> {
        let mut records = crate::record::parse_records(crate::record::tests::LEGACY)
            .unwrap()
            .lines
            .into_iter()
            .map(|(_, line)| line)
            .collect::<Vec<_>>();
        let summary = crate::report::tests::verified(diverging);
        for line in &mut records {
            match &mut line.record {
                Record::Result {
                    summary: posted, ..
                } => {
                    *posted = crate::record::Posted::Benchmark(Box::new(summary.clone()));
                }
                Record::Run(end) => end.run_id = Some(summary.run_id.clone()),
                _ => {}
            }
        }
        records
    }

    #[test]
    fn resume_runs_again_a_result_whose_verification_failed() {
        let key = (
            "local".to_owned(),
            "firefox".to_owned(),
            "www/index.html".to_owned(),
            "cases=smoke2&maxTokens=2".to_owned(),
            ExtraOptions::default(),
        );
        let verified = finished_runs(&grouped(verified_run(false)), false);
        assert_eq!(verified.get(&key), Some(&1));
        // A run started with a pref of the user's own is not the plain combination's.
        let diagnosed: Vec<Line> = verified_run(false)
            .into_iter()
            .map(|mut line| {
                if let Some(browser) = &mut line.browser {
                    browser.extra.firefox_prefs = vec!["a.b=1".parse().unwrap()];
                }
                line
            })
            .collect();
        let diagnosed = finished_runs(&grouped(diagnosed), false);
        assert_eq!(diagnosed.get(&key), None);
        let mut with_pref = key.clone();
        with_pref.4.firefox_prefs = vec!["a.b=1".parse().unwrap()];
        assert_eq!(diagnosed.get(&with_pref), Some(&1));
        // Closed with outcome `result`, but not a result of the combination: run again, with
        // or without --retry-failed.
        for retry_failed in [false, true] {
            let failed = finished_runs(&grouped(verified_run(true)), retry_failed);
            assert_eq!(failed.get(&key), None, "{failed:?}");
        }
        // Only that run: another run of the same combination that verified still counts.
        let both: Vec<Line> = verified_run(true)
            .into_iter()
            .chain(verified_run(false).into_iter().map(|mut line| {
                let stamp = |id: &mut String| id.push_str("-again");
                match &mut line.record {
                    Record::Result {
                        summary: crate::record::Posted::Benchmark(summary),
                        ..
                    } => stamp(&mut summary.run_id),
                    Record::Run(end) => stamp(end.run_id.as_mut().unwrap()),
                    _ => {}
                }
                line
            }))
            .collect();
        assert_eq!(finished_runs(&grouped(both), false).get(&key), Some(&1));
    }

    #[test]
    fn a_failed_verification_fails_the_sweep_with_9_and_a_verified_result_does_not() {
        let finished = |diverging: bool| Outcome::Finished {
            summary: crate::record::Posted::Benchmark(Box::new(crate::report::tests::verified(
                diverging,
            ))),
            process_memory: crate::record::ProcessMemoryAnswer::not_sampled(),
        };
        let judged = |outcome: &Outcome| {
            judge(
                outcome,
                "firefox verify=wasm",
                "firefox",
                Duration::from_secs(60),
                Duration::from_secs(3),
            )
        };
        let (line, cause) = judged(&finished(true));
        assert_eq!(cause, Some(Cause::VerificationFailed), "{line}");
        assert_eq!(cause.map(Cause::code), Some(9));
        assert_eq!(
            line,
            format!("FAIL  firefox verify=wasm: {}", run::VERIFICATION_FAILED)
        );
        let (line, cause) = judged(&finished(false));
        assert_eq!(cause, None, "{line}");
        assert!(
            line.starts_with("done  firefox verify=wasm: nCER "),
            "{line}"
        );
        // The page's own error finishes a combination; a timeout fails the sweep.
        let error = Outcome::PageError {
            phase: "decoder-run".into(),
            message: "boom".into(),
        };
        assert_eq!(judged(&error).1, None);
        let timeout = Outcome::TimedOut {
            phase: "decoder-run".into(),
            cases_done: 1,
        };
        assert_eq!(judged(&timeout).1, Some(Cause::Timeout));
    }

    #[test]
    fn a_results_file_of_todays_runner_resumes_and_fills_the_table() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(crate::record::tests::LEGACY.as_bytes())
            .unwrap();
        let records = read_runs(file.path()).unwrap();
        let query = "cases=smoke2&maxTokens=2";
        assert_eq!(
            finished_runs(&records, false)
                .into_keys()
                .collect::<HashSet<_>>(),
            HashSet::from([(
                "local".to_owned(),
                "firefox".to_owned(),
                "www/index.html".to_owned(),
                query.to_owned(),
                ExtraOptions::default(),
            )])
        );
        let firefox = records[0].browser().cloned().unwrap();
        let firefox = LocalTarget::new(firefox, serde_json::Value::Null);
        let rows = table_rows(
            file.path(),
            &[(&firefox as &dyn BrowserTarget, query.to_owned())],
            "www/index.html",
        )
        .unwrap();
        assert_eq!(rows[0].outcome, "result");
        assert_eq!(rows[0].summary.as_ref().map(|s| s.cases), Some(2));
        assert!(rows[0].process_memory.as_ref().is_some_and(|m| m.available));
    }
}
