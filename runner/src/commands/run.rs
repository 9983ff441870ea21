//! `run`: the page once in a fresh headless browser; prints its results.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};

use ocr_bench::browser::{self, BrowserKind};
use ocr_bench::gpu_route::GpuRouteRequest;
use ocr_bench::probe_cache::ProbeMode;
use ocr_bench::reach::Reach;
use ocr_bench::run::{run_once, Outcome, RunOptions, TimeLimit, DEFAULT_PAGE};
use ocr_bench::target::local::{self, LocalTarget};
use ocr_bench::target::webdriver::WebDriverSpec;
use ocr_bench::target::BrowserTarget;
use ocr_bench::{machine, procfs, report};

use ocr_bench::exit::Cause;
use ocr_bench::server::{Hold, Injection};
use ocr_bench_core::error::quoted;

/// Where results go unless `--results` says otherwise.
pub const DEFAULT_RESULTS: &str = "results/results.jsonl";

/// The options `run` and `sweep` share, defined once (a sweep applies them to every run).
#[derive(clap::Args, Debug, Clone)]
pub struct RunSettings {
    /// The JSONL file every record is appended to.
    #[arg(long, default_value = DEFAULT_RESULTS)]
    pub results: PathBuf,
    /// Seconds before a run is abandoned and its browser stopped. By default the limit
    /// follows the work the query asks for: 15 min, and 10 s for every token it may decode
    /// (cases x repeat, warm-ups and verify=wasm's decodes, times maxTokens), so the default
    /// configuration gets 4 h 52 min; another page gets an hour.
    #[arg(long)]
    pub timeout: Option<u64>,
    /// Memory sampling interval in milliseconds.
    #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u64).range(5..=1000))]
    pub sample_ms: u64,
    /// How the browser reaches WebGPU: `gpu` starts Chromium with the switches that reach a
    /// hardware Vulkan driver and stops a run whose adapter is a fallback; `software` keeps
    /// the switches of a machine without a GPU; `auto` takes the GPU route when a hardware
    /// Vulkan driver is found (see `ocr-bench gpu-route`).
    #[arg(long, default_value = "auto", value_name = "auto|gpu|software")]
    pub gpu_route: GpuRouteRequest,
    /// The completion floor: `reuse` takes a floor kept in `<results>.probe-cache.json` by
    /// an earlier run of the same browser build, adapter, driver, poll, kickMs and realm
    /// (the page compares every field, and measures on any difference); `always` measures
    /// every floor. Either way a measured floor is kept for later runs.
    #[arg(long, default_value = "reuse", value_name = "reuse|always")]
    pub probe: ProbeMode,
    #[command(flatten)]
    pub local: LocalArgs,
    #[command(flatten)]
    pub webdriver: WebDriverArgs,
    #[command(flatten)]
    pub reach: ReachArgs,
}

impl RunSettings {
    /// The options of one run of `page` with `query` under `root`; `Err` says which option was
    /// refused and why.
    pub fn run_options(
        &self,
        root: PathBuf,
        page: String,
        query: String,
    ) -> Result<RunOptions, String> {
        Ok(RunOptions {
            root,
            page,
            query,
            results: self.results.clone(),
            timeout: TimeLimit::from_seconds(self.timeout),
            sample_interval: Duration::from_millis(self.sample_ms),
            gpu_route: self.gpu_route,
            probe: self.probe,
            reach: self.reach.reach()?,
        })
    }
}

/// What only a browser started here offers, for `run` and every local run of a `sweep`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LocalArgs {
    /// Ask Firefox for its own memory reports (those of about:memory) as the page enters
    /// each phase and once at the end, recorded as `processMemory.reports` and named in the
    /// rise above the idle browser. Each report costs the browser seconds, so it is off by
    /// default. Firefox started here only.
    #[arg(long)]
    pub memory_reports: bool,
    /// Start the browser on a profile kept in DIR/<browser> across runs (made by the first),
    /// instead of a fresh one removed after the run: its caches, the shader and pipeline
    /// caches among them, stay warm for the next run (the closing record's `keptProfile`
    /// says whether it was reused). A browser started here only; a sweep refuses it with
    /// --local-jobs above 1 (one profile, one browser at once).
    #[arg(long, value_name = "DIR")]
    pub keep_profile: Option<PathBuf>,
}

/// `--webdriver URL [--capabilities FILE|JSON]` of `run` and `sweep`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct WebDriverArgs {
    /// Run the browser through this W3C WebDriver endpoint (chromedriver, geckodriver, a
    /// Selenium Grid: http://HOST:PORT[/wd/hub]) instead of starting it here; `--browser`
    /// then names the browser to ask for when no --capabilities are given. Credentials in
    /// the URL are sent to the endpoint and written nowhere.
    #[arg(long, value_name = "URL")]
    pub webdriver: Option<String>,
    /// The session's capabilities: a JSON object, inline or in a file (default: the
    /// browser's, headless, with the switches or prefs a local run uses for WebGPU).
    #[arg(long, value_name = "FILE|JSON", requires = "webdriver")]
    pub capabilities: Option<String>,
}

impl WebDriverArgs {
    /// The checked endpoint and capabilities, `None` without `--webdriver`.
    pub fn spec(&self) -> Result<Option<WebDriverSpec>, String> {
        self.webdriver
            .as_deref()
            .map(|url| WebDriverSpec::parse(url, self.capabilities.as_deref()))
            .transpose()
    }
}

/// `--host`, `--port`, `--public-url`, `--tls`, `--tls-cert`, `--tls-key` of `run` and
/// `sweep`: where the runner listens and the origin the browser opens (`ocr_bench::reach`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ReachArgs {
    /// Address to listen on (default 127.0.0.1); anything but loopback exposes the page and
    /// the results endpoints to other machines. A browser on another machine needs 0.0.0.0 or
    /// this machine's address here, with --public-url and --tls.
    #[arg(long, value_name = "ADDRESS")]
    pub host: Option<IpAddr>,
    /// Port to listen on (default: --public-url's port, else a free one; 0: a free one).
    #[arg(long)]
    pub port: Option<u16>,
    #[command(flatten)]
    pub origin: OriginArgs,
}

/// `--public-url`, `--tls`, `--tls-cert`, `--tls-key` of `run`, `sweep` and `serve`: the
/// origin the browser opens and whether the page is served over HTTPS.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct OriginArgs {
    /// The origin the browser opens instead of http://127.0.0.1:PORT, such as
    /// https://192.0.2.7:8443 (this machine as the browser's machine reaches it); https://
    /// serves the page over HTTPS as --tls does.
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// Serve the page over HTTPS with a certificate made at start for --public-url's host,
    /// the listening address, 127.0.0.1 and localhost; a browser the runner starts is told
    /// to accept it (WebDriver acceptInsecureCerts, Chromium --ignore-certificate-errors),
    /// one of your own asks once. WebGPU needs it on another machine: http://HOST:PORT is
    /// not a secure context there.
    #[arg(long)]
    pub tls: bool,
    /// Serve HTTPS with this PEM certificate chain instead (one the browser trusts).
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

impl ReachArgs {
    /// The checked flags; the error says what was wrong and what is allowed.
    pub fn reach(&self) -> Result<Reach, String> {
        self.origin.reach(self.host, self.port)
    }
}

impl OriginArgs {
    /// The checked flags with where the server listens; the error says what was wrong and
    /// what is allowed.
    pub fn reach(&self, host: Option<IpAddr>, port: Option<u16>) -> Result<Reach, String> {
        Reach::from_flags(
            host,
            port,
            self.public_url.as_deref(),
            self.tls,
            self.tls_cert.clone().zip(self.tls_key.clone()),
        )
    }
}

/// Runs `options` as given on the command line: the page and query are first put in their
/// canonical spelling, and the default page's query is checked (exit 2 when invalid).
pub async fn run_command(
    kind: BrowserKind,
    webdriver: WebDriverArgs,
    local: LocalArgs,
    options: RunOptions,
) -> Result<u8> {
    let LocalArgs {
        memory_reports,
        keep_profile,
    } = local;
    let checked = canonical(options).and_then(|options| {
        let target = match webdriver.spec()? {
            Some(_) if memory_reports => return Err(local::MEMORY_REPORTS_LOCAL_ONLY.to_owned()),
            Some(_) if keep_profile.is_some() => {
                return Err(local::KEPT_PROFILE_LOCAL_ONLY.to_owned())
            }
            Some(spec) => Some(spec.target(kind)?),
            None => None,
        };
        Ok((options, target))
    });
    let (options, webdriver) = match checked {
        Ok(checked) => checked,
        Err(message) => {
            eprintln!("ocr-bench: {message}");
            return Ok(Cause::Usage.code());
        }
    };
    let target: Box<dyn BrowserTarget> = match webdriver {
        Some(target) => {
            eprintln!(
                "ocr-bench: {kind} through WebDriver at {} on {}",
                target.endpoint().shown(),
                options.page
            );
            Box::new(target)
        }
        None => {
            procfs::become_subreaper().context("becoming a child subreaper")?;
            let info = browser::probe(kind)?;
            eprintln!("ocr-bench: {} on {}", info.version, options.page);
            let mut target = LocalTarget::new(info, machine::describe());
            if let Some(dir) = keep_profile {
                target = target.with_kept_profile(dir);
            }
            if !memory_reports {
                Box::new(target)
            } else {
                match target.with_memory_reports() {
                    Ok(target) => Box::new(target),
                    Err(message) => {
                        eprintln!("ocr-bench: {message}");
                        return Ok(Cause::Usage.code());
                    }
                }
            }
        }
    };
    run_checked(target.as_ref(), &options).await
}

/// `./www/index.html` and `/www/index.html` are the benchmark page too; a leading `?` of the
/// query is dropped, and the benchmark page's query is parsed by the core, its evaluation set
/// looked for under the root. A test-only `OCR_BENCH_INJECT` must name a fault the page knows.
fn canonical(mut options: RunOptions) -> Result<RunOptions, String> {
    Injection::from_env()?;
    Hold::from_env()?;
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
                ocr_bench::run::check_manifest(&options.root, &options.page, &config)
                    .and_then(|()| ocr_bench::run::check_runtime(&options.root, &config))
                    .map_err(|e| format!("query {}: {e}", quoted(query)))?;
                check_evaluation_set(&options.root, &config)?;
                config.to_query()
            }
            Err(e) => return Err(format!("invalid query {}: {e}", quoted(query))),
        }
    } else {
        ocr_bench::run::check_model_folder(&options.root, query)
            .map_err(|e| format!("query {}: {e}", quoted(query)))?;
        query.to_owned()
    };
    Ok(options)
}

/// The folder under the root that holds the evaluation sets, as the page fetches them.
const EVAL_DIR: &str = "models/eval";

/// The page reads `cases=NAME` from `models/eval/NAME/cases.json` (unless `scope=decoder`,
/// which has no images): a set that is not there is named, with the folder and the sets that
/// are, before any browser starts.
pub fn check_evaluation_set(
    root: &std::path::Path,
    config: &ocr_bench_core::Config,
) -> Result<(), String> {
    if config.scope == ocr_bench_core::config::Scope::Decoder {
        return Ok(());
    }
    let folder = root.join(EVAL_DIR);
    if folder.join(&config.cases).join("cases.json").is_file() {
        return Ok(());
    }
    let mut sets: Vec<String> = std::fs::read_dir(&folder)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.path().join("cases.json").is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    sets.sort();
    let there = if sets.is_empty() {
        "it holds no evaluation set (are the sets built? see README.md)".to_owned()
    } else {
        format!("allowed: {}", sets.join(", "))
    };
    Err(format!(
        "there is no evaluation set {:?}: {} does not exist; the sets are the folders of {} \
         with a cases.json, {there}",
        config.cases,
        folder.join(&config.cases).join("cases.json").display(),
        folder.display()
    ))
}

async fn run_checked(target: &dyn BrowserTarget, options: &RunOptions) -> Result<u8> {
    let kind = target.browser().name;
    let started = std::time::Instant::now();
    let on_status =
        move |status: &str| eprintln!("[{:>7.1} s] {status}", started.elapsed().as_secs_f64());
    let report = run_once(options, target, &on_status).await?;
    // A WebDriver browser's version is what its session reported.
    let version = report
        .reported_capabilities
        .as_ref()
        .map(|caps| {
            format!(
                "{} {} on {} (WebDriver)",
                caps["browserName"].as_str().unwrap_or("?"),
                caps["browserVersion"].as_str().unwrap_or("?"),
                caps["platformName"].as_str().unwrap_or("?")
            )
        })
        .unwrap_or_else(|| target.browser().version.clone());
    let mut code = match &report.outcome {
        Outcome::Finished {
            summary,
            process_memory,
        } => {
            print!(
                "{}",
                report::run_report(
                    &version,
                    &options.query,
                    summary,
                    process_memory,
                    report.wall.as_secs_f64()
                )
            );
            verdict(&report.outcome)
        }
        other => {
            let message = other
                .failure_message(kind.name(), report.limit)
                .unwrap_or_default();
            eprintln!("ocr-bench: {message}");
            // A WebDriver run's tail is the page's own console, which explains a page's
            // error too; a local browser's output says nothing of one.
            let remote = target.identity() != ocr_bench::target::LOCAL;
            let shown = match other {
                Outcome::PageError { .. } | Outcome::ResultRefused { .. } => remote,
                Outcome::Interrupted { .. } | Outcome::WriteFailed { .. } => false,
                _ => true,
            };
            if shown && !report.browser_log_tail.is_empty() {
                let heading = if remote {
                    "last lines of the page's console (WebDriver BiDi)"
                } else {
                    "last lines of the browser's output"
                };
                eprintln!("{heading}:\n{}", report.browser_log_tail);
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
fn verdict(outcome: &Outcome) -> u8 {
    match outcome.verification_failure() {
        Some(message) => {
            eprintln!("ocr-bench: {message}");
            Cause::VerificationFailed.code()
        }
        None => 0,
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
            timeout: ocr_bench::run::TimeLimit::Given(Duration::from_secs(1)),
            sample_interval: Duration::from_millis(25),
            gpu_route: Default::default(),
            probe: Default::default(),
            reach: Default::default(),
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
    fn a_missing_evaluation_set_is_named_with_its_folder_and_the_sets_there() {
        let err = canonical(options(DEFAULT_PAGE, "cases=nosuchset")).unwrap_err();
        assert!(
            err.contains("no evaluation set \"nosuchset\"")
                && err.contains("models/eval/nosuchset/cases.json does not exist")
                && err.contains("allowed: ")
                && err.contains("smoke2"),
            "{err}"
        );
        // The decoder-only scope reads no set.
        canonical(options(DEFAULT_PAGE, "scope=decoder&cases=nosuchset")).unwrap();
        canonical(options(DEFAULT_PAGE, "cases=smoke2")).unwrap();
    }

    /// How the run that wrote a results file ended: its `result` record, finished.
    fn finished(text: &str) -> Outcome {
        use ocr_bench::record::{parse_records, Record};
        let records = parse_records(text).unwrap();
        records
            .lines
            .into_iter()
            .find_map(|(_, line)| match line.record {
                Record::Result {
                    summary,
                    process_memory,
                } => Some(Outcome::Finished {
                    summary,
                    process_memory,
                }),
                _ => None,
            })
            .expect("a result record")
    }

    #[test]
    fn a_finished_run_exits_9_only_when_its_verification_failed() {
        use ocr_bench::record::Posted;
        // Recorded in Firefox with verify=wasm and inject=diverge-token@decode:2: case 2's
        // first token replaced, so its tokens left the WASM reference at step 0.
        let mut run = finished(include_str!("../../tests/data/verify-failed-smoke2.jsonl"));
        assert_eq!(verdict(&run), Cause::VerificationFailed.code());
        assert_eq!(Cause::VerificationFailed.code(), 9);
        // The same run had it verified.
        let Outcome::Finished {
            summary: Posted::Benchmark(summary),
            ..
        } = &mut run
        else {
            panic!("the recorded run is the benchmark page's");
        };
        summary.verification.as_mut().unwrap().passed = true;
        assert_eq!(verdict(&run), 0);
        // Not verified at all (verify=none), and another page's result: nothing to fail.
        let unverified = finished(include_str!("../../tests/data/legacy-smoke2.jsonl"));
        assert_eq!(verdict(&unverified), 0);
        let another = Outcome::Finished {
            summary: Posted::Other(
                serde_json::json!({ "runId": "x", "verification": { "passed": false } }),
            ),
            process_memory: ocr_bench::record::ProcessMemoryAnswer::not_sampled(),
        };
        assert_eq!(verdict(&another), 0);
    }

    #[test]
    fn an_invalid_query_is_refused_only_for_the_benchmark_page() {
        let err = canonical(options(DEFAULT_PAGE, "tier=7")).unwrap_err();
        assert!(err.contains("\"tier=7\""), "{err}");
        let other = canonical(options("bench/core/index.html", "?tier=7")).unwrap();
        assert_eq!(other.query, "tier=7");
    }
}
