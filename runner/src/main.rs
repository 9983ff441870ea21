//! `ocr-bench`: serves the benchmark page, runs it in headless Chromium or Firefox while
//! sampling the browser's process memory, and sweeps configurations.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use ocr_bench::browser::{self, BrowserKind};
use ocr_bench::run::{self, Outcome, RunOptions, DEFAULT_PAGE};
use ocr_bench::{compare, machine, procfs, report, server, sweep};

const DEFAULT_RESULTS: &str = "results/results.jsonl";

/// Exit codes beyond clap's 2 for usage errors.
const EXIT_PAGE_ERROR: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_TIMEOUT: u8 = 3;
const EXIT_BROWSER_EXITED: u8 = 4;
const EXIT_PROCESSES_LEFT: u8 = 5;
const EXIT_INTERRUPTED: u8 = 130;

#[derive(Parser)]
#[command(
    name = "ocr-bench",
    version,
    about = "WebGPU OCR benchmark: serve the page, run it headless, sweep configurations"
)]
struct Cli {
    /// The repository root to serve (default: the checkout this binary was built from, or
    /// the current directory if it holds `www/`).
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the page for a browser of your own; prints the URL to open.
    Serve {
        /// Port to listen on; 0 picks a free one.
        #[arg(long, default_value_t = 8000)]
        port: u16,
        /// Address to bind; anything but loopback exposes the results endpoints.
        #[arg(long, default_value = "127.0.0.1")]
        host: IpAddr,
        /// JSONL file the page's reports are appended to.
        #[arg(long, default_value = DEFAULT_RESULTS)]
        results: PathBuf,
    },
    /// Run the page once in a fresh headless browser and print its results.
    ///
    /// Exit status: 0 finished, 1 the page reported an error, 2 bad arguments or query,
    /// 3 timeout, 4 the browser exited early, 5 browser processes were left behind,
    /// 130 interrupted.
    Run {
        #[arg(long, default_value = "chromium")]
        browser: BrowserKind,
        #[arg(long, default_value = DEFAULT_RESULTS)]
        results: PathBuf,
        /// Seconds before the run is abandoned and the browser stopped.
        #[arg(long, default_value_t = 3600)]
        timeout: u64,
        /// The page, relative to the root; its query is checked against the benchmark's
        /// parameters only for the default page.
        #[arg(long, default_value = DEFAULT_PAGE)]
        page: String,
        /// Memory sampling interval in milliseconds.
        #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u64).range(5..=1000))]
        sample_ms: u64,
        /// The page's query string, such as `tier=242&schedule=resident` (a leading `?` is fine).
        query: Option<String>,
    },
    /// Run every combination of parameter values in every listed browser, each in a fresh
    /// browser; resumable: combinations already finished in the results file are skipped.
    ///
    /// Exit status: 0 when every combination ended with the page's result or its own error
    /// (such as fp16 refused on an adapter without shader-f16), 1 when any timed out,
    /// crashed or left processes behind, 130 interrupted (run again to resume).
    Sweep {
        /// Browsers, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "chromium")]
        browser: Vec<BrowserKind>,
        /// A parameter and its values, such as `decoder=baseline,fixed-kv`; repeat for more.
        #[arg(long = "param", value_name = "NAME=V1,V2", value_parser = sweep::parse_param)]
        params: Vec<(String, Vec<String>)>,
        #[arg(long, default_value = DEFAULT_RESULTS)]
        results: PathBuf,
        /// Seconds before one combination is abandoned.
        #[arg(long, default_value_t = 3600)]
        timeout: u64,
        /// Run again the combinations whose page reported an error.
        #[arg(long)]
        retry_failed: bool,
        #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u64).range(5..=1000))]
        sample_ms: u64,
    },
    /// Compare the token ids of one finished run in each of two results files, case by case.
    ///
    /// Takes the last run with a `result` record from each file (or the one --run-a/--run-b
    /// names), matches cases by id and prints, per case, both token counts and "same" or the
    /// first differing position with both token ids and both decoded texts; then a summary
    /// and each side's browser, query and configuration.
    ///
    /// Exit status: 0 when every shared case has identical token ids and both runs have the
    /// same cases, 1 when anything differs, 2 on bad input (unreadable file, malformed line,
    /// no finished run, unknown runId).
    Compare {
        /// Results file A.
        a: PathBuf,
        /// Results file B.
        b: PathBuf,
        /// The runId to take from A (default: its last finished run).
        #[arg(long, value_name = "ID")]
        run_a: Option<String>,
        /// The runId to take from B (default: its last finished run).
        #[arg(long, value_name = "ID")]
        run_b: Option<String>,
    },
}

/// The benchmark parameters, from the core, for `run --help` and `sweep --help`.
fn parameters_help() -> String {
    let mut text =
        String::from("Page parameters (query string of `run`, NAME of `sweep --param`):\n");
    for p in ocr_bench_core::parameters() {
        text.push_str(&format!(
            "  {:<10} {} (default {}): {}\n",
            p.name, p.allowed, p.default, p.description
        ));
    }
    text
}

/// The checkout to serve: `--root`, else the current directory if it holds the page, else
/// the workspace this binary was built in.
fn resolve_root(root: Option<PathBuf>) -> Result<PathBuf> {
    let root = match root {
        Some(root) => root,
        None => {
            let cwd = std::env::current_dir().context("reading the current directory")?;
            if cwd.join("www").is_dir() {
                cwd
            } else {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
            }
        }
    };
    root.canonicalize()
        .with_context(|| format!("the root {} does not exist", root.display()))
}

fn main() -> ExitCode {
    let command = Cli::command()
        .mut_subcommand("run", |c| c.after_help(parameters_help()))
        .mut_subcommand("sweep", |c| c.after_help(parameters_help()));
    let cli = match Cli::from_arg_matches(&command.get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    // Reads two files: no root, no runtime.
    if let Command::Compare { a, b, run_a, run_b } = &cli.command {
        return ExitCode::from(compare_command(a, b, run_a.as_deref(), run_b.as_deref()));
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("ocr-bench: starting the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(dispatch(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("ocr-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn dispatch(cli: Cli) -> Result<u8> {
    let root = resolve_root(cli.root)?;
    match cli.command {
        Command::Serve {
            port,
            host,
            results,
        } => serve(&root, host, port, &results).await,
        Command::Run {
            browser,
            results,
            timeout,
            page,
            sample_ms,
            query,
        } => {
            // `./www/index.html` and `/www/index.html` are the benchmark page too.
            let page = page
                .trim_start_matches("./")
                .trim_start_matches('/')
                .to_owned();
            let query = query.unwrap_or_default();
            let query = query.strip_prefix('?').unwrap_or(&query).to_owned();
            let query = if page == DEFAULT_PAGE {
                match ocr_bench_core::parse_query(&query) {
                    // The canonical spelling: the same configuration always has one key.
                    Ok(config) => config.to_query(),
                    Err(e) => {
                        eprintln!("ocr-bench: invalid query {query:?}: {e}");
                        return Ok(EXIT_USAGE);
                    }
                }
            } else {
                query
            };
            let options = RunOptions {
                root,
                page,
                query,
                results,
                timeout: Duration::from_secs(timeout),
                sample_interval: Duration::from_millis(sample_ms),
            };
            run_command(browser, &options).await
        }
        Command::Sweep {
            browser,
            params,
            results,
            timeout,
            retry_failed,
            sample_ms,
        } => {
            procfs::become_subreaper().context("becoming a child subreaper")?;
            let options = sweep::SweepOptions {
                browsers: browser,
                params,
                retry_failed,
                run: RunOptions {
                    root,
                    page: DEFAULT_PAGE.to_owned(),
                    query: String::new(),
                    results,
                    timeout: Duration::from_secs(timeout),
                    sample_interval: Duration::from_millis(sample_ms),
                },
            };
            Ok(match sweep::sweep(options).await? {
                sweep::SweepEnd::Complete => 0,
                sweep::SweepEnd::Failures => 1,
                sweep::SweepEnd::Interrupted => EXIT_INTERRUPTED,
            })
        }
        Command::Compare { a, b, run_a, run_b } => {
            Ok(compare_command(&a, &b, run_a.as_deref(), run_b.as_deref()))
        }
    }
}

/// `compare`: 0 identical, 1 any difference, 2 bad input.
fn compare_command(a: &Path, b: &Path, run_a: Option<&str>, run_b: Option<&str>) -> u8 {
    let runs = compare::load_run(a, run_a).and_then(|ra| Ok((ra, compare::load_run(b, run_b)?)));
    match runs {
        Ok((ra, rb)) => {
            let comparison = compare::compare(ra, rb);
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

async fn serve(root: &Path, host: IpAddr, port: u16, results: &Path) -> Result<u8> {
    let context = server::RunContext {
        machine: machine::describe(),
        ..Default::default()
    };
    let state = Arc::new(server::AppState::new(results, context, None, None)?);
    let (address, task) = server::start_server(host, port, root, state).await?;
    println!("serving {} at http://{address}/", root.display());
    println!(
        "open http://{address}/www/index.html (add ?tier=242&schedule=resident … to configure)"
    );
    println!("results are appended to {}", results.display());
    println!("Chrome/Chromium needs WebGPU enabled (on Linux: --enable-unsafe-webgpu); Firefox needs dom.webgpu.enabled in about:config");
    tokio::select! {
        _ = task => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    Ok(0)
}

async fn run_command(kind: BrowserKind, options: &RunOptions) -> Result<u8> {
    procfs::become_subreaper().context("becoming a child subreaper")?;
    let info = browser::probe(kind)?;
    let machine = machine::describe();
    eprintln!("ocr-bench: {} on {}", info.version, options.page);
    let started = std::time::Instant::now();
    let on_status =
        move |status: &str| eprintln!("[{:>7.1} s] {status}", started.elapsed().as_secs_f64());
    let report = run::run_once(options, &info, &machine, &on_status).await?;
    let mut code = match &report.outcome {
        Outcome::Finished {
            summary,
            process_memory,
        } => {
            if report::is_benchmark_summary(summary) {
                print!(
                    "{}",
                    report::run_table(
                        &info.version,
                        &options.query,
                        summary,
                        process_memory,
                        report.wall.as_secs_f64()
                    )
                );
            } else {
                let mut shown = summary.clone();
                shown["processMemory"] = process_memory.clone();
                println!("{}", serde_json::to_string_pretty(&shown)?);
            }
            0
        }
        other => {
            let message = other
                .failure_message(kind.name(), options.timeout)
                .unwrap_or_default();
            eprintln!("ocr-bench: {message}");
            if !matches!(
                other,
                Outcome::PageError { .. } | Outcome::Interrupted { .. }
            ) && !report.browser_log_tail.is_empty()
            {
                eprintln!(
                    "last lines of the browser's output:\n{}",
                    report.browser_log_tail
                );
            }
            match other {
                Outcome::PageError { .. } => EXIT_PAGE_ERROR,
                Outcome::TimedOut { .. } => EXIT_TIMEOUT,
                Outcome::BrowserExited { .. } => EXIT_BROWSER_EXITED,
                Outcome::Interrupted { .. } => EXIT_INTERRUPTED,
                Outcome::Finished { .. } => 0,
            }
        }
    };
    if !report.stop.left.is_empty() {
        eprintln!(
            "ocr-bench: {} browser process(es) were left after stopping it: {:?}",
            report.stop.left.len(),
            report.stop.left
        );
        if code == 0 {
            code = EXIT_PROCESSES_LEFT;
        }
    }
    println!("results appended to {}", options.results.display());
    Ok(code)
}
