//! `ocr-bench`: serves the benchmark page, runs it in headless Chromium or Firefox while
//! sampling the browser's process memory, and sweeps configurations.

mod commands;

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use ocr_bench::browser::BrowserKind;
use ocr_bench::gpu_route::GpuRouteRequest;
use ocr_bench::run::{RunOptions, TimeLimit, DEFAULT_PAGE};
use ocr_bench::sweep;

use commands::combos::{plan_command, table_command};
use commands::compare::compare_command;
use commands::export::export_command;
use commands::predict::predict_command;
use commands::report::report_command;
use commands::run::run_command;
use commands::serve::serve_command;
use commands::sweep::sweep_command;

const DEFAULT_RESULTS: &str = "results/results.jsonl";

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
        /// Port to listen on (default 8000, or --public-url's port); 0 picks a free one.
        #[arg(long)]
        port: Option<u16>,
        /// Address to bind; anything but loopback exposes the results endpoints.
        #[arg(long, default_value = "127.0.0.1")]
        host: IpAddr,
        /// JSONL file the page's reports are appended to.
        #[arg(long, default_value = DEFAULT_RESULTS)]
        results: PathBuf,
        /// A folder under the root to serve besides the page's own files and models/ (a
        /// manifest of your own and its models); repeatable. Nothing else is served.
        #[arg(long = "serve-dir", value_name = "DIR")]
        serve_dirs: Vec<PathBuf>,
        #[command(flatten)]
        origin: commands::run::OriginArgs,
    },
    /// Run the page once in a fresh headless browser and print its results.
    ///
    /// Exit status: 0 finished (the benchmark page's summary, or another page's figures: any JSON
    /// object naming the run's runId), 1 the page reported an error or its result was refused
    /// (not JSON, not an object, no runId: the run ends at once), 2 bad arguments, query or page,
    /// 3 timeout, 4 the browser exited early, 5 browser processes were left behind, 6 the
    /// results file could not be written, 7 the browser is missing or did not start, 8 the
    /// server could not listen, 9 `verify=wasm` found a case that left the WASM reference (the
    /// result is written, marked VERIFICATION FAILED), 10 `--gpu-route gpu` got a fallback
    /// (software) adapter, 130 interrupted (SIGINT, SIGTERM, SIGHUP).
    Run {
        #[arg(long, default_value = "chromium")]
        browser: BrowserKind,
        #[arg(long, default_value = DEFAULT_RESULTS)]
        results: PathBuf,
        /// Seconds before the run is abandoned and the browser stopped. By default the limit
        /// follows the work the query asks for: 15 min, and 10 s for every token it may decode
        /// (cases x repeat, warm-ups and verify=wasm's decodes, times maxTokens), so the
        /// default configuration gets 4 h 52 min; another page gets an hour.
        #[arg(long)]
        timeout: Option<u64>,
        /// The page, relative to the root; its query is checked against the benchmark's
        /// parameters only for the default page.
        #[arg(long, default_value = DEFAULT_PAGE)]
        page: String,
        /// Memory sampling interval in milliseconds.
        #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u64).range(5..=1000))]
        sample_ms: u64,
        /// How the browser reaches WebGPU: `gpu` starts Chromium with the switches that reach a
        /// hardware Vulkan driver and stops a run whose adapter is a fallback; `software` keeps
        /// the switches of a machine without a GPU; `auto` takes the GPU route when a hardware
        /// Vulkan driver is found (see `ocr-bench gpu-route`).
        #[arg(long, default_value = "auto", value_name = "auto|gpu|software")]
        gpu_route: GpuRouteRequest,
        /// Ask Firefox for its own memory reports (those of about:memory) as the page enters
        /// each phase and once at the end, recorded as `processMemory.reports` and named in the
        /// rise above the idle browser. Each report costs the browser seconds, so it is off by
        /// default. Firefox started here only.
        #[arg(long)]
        memory_reports: bool,
        /// Start the browser on a profile kept in DIR/<browser> across runs (made by the first),
        /// instead of a fresh one removed after the run: its caches, the shader and pipeline
        /// caches among them, stay warm for the next run (the closing record's `keptProfile`
        /// says whether it was reused). A browser started here only.
        #[arg(long, value_name = "DIR")]
        keep_profile: Option<PathBuf>,
        #[command(flatten)]
        webdriver: commands::run::WebDriverArgs,
        #[command(flatten)]
        reach: commands::run::ReachArgs,
        /// The page's query string, such as `tier=242&schedule=resident` (a leading `?` is fine).
        query: Option<String>,
    },
    /// Run every combination of parameter values in every listed browser, each in a fresh
    /// browser; resumable: combinations already finished in the results file are skipped.
    ///
    /// Exit status: 0 when every combination ended with the page's result or its own error
    /// (such as fp16 refused on an adapter without shader-f16); else `run`'s status for the
    /// worst cause among them (1 a result the runner refused, 3 timeout, 4 browser exited, 5
    /// processes left, 9 verification failed, 10 a fallback adapter under `--gpu-route gpu`);
    /// 2, 6, 7 and 8 as for `run`, a failed write stopping the sweep at once; 130 interrupted
    /// (run again to resume).
    Sweep {
        /// Browsers, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "chromium")]
        browser: Vec<BrowserKind>,
        /// A parameter and its values, such as `decoder=baseline,fixed-kv`; repeat for more.
        #[arg(long = "param", value_name = "NAME=V1,V2", value_parser = sweep::parse_param)]
        params: Vec<(String, Vec<String>)>,
        #[arg(long, default_value = DEFAULT_RESULTS)]
        results: PathBuf,
        /// Seconds before one combination is abandoned; by default each combination's limit
        /// follows its work, as `run`'s does.
        #[arg(long)]
        timeout: Option<u64>,
        /// Run again the combinations whose page reported an error.
        #[arg(long)]
        retry_failed: bool,
        /// Finished runs wanted of every combination (a soak: many runs in one invocation,
        /// with the runner's own memory and open files printed after each).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
        runs: u32,
        /// Runs under way at once, across the targets (each run in a browser of its own,
        /// served on a port of its own).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
        jobs: u32,
        /// Of those, runs of a browser started on this machine at once: two local browsers
        /// share its GPU and cores, which is what they measure.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
        local_jobs: u32,
        #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u64).range(5..=1000))]
        sample_ms: u64,
        /// How the browser reaches WebGPU: `gpu` starts Chromium with the switches that reach a
        /// hardware Vulkan driver and stops a run whose adapter is a fallback; `software` keeps
        /// the switches of a machine without a GPU; `auto` takes the GPU route when a hardware
        /// Vulkan driver is found (see `ocr-bench gpu-route`).
        #[arg(long, default_value = "auto", value_name = "auto|gpu|software")]
        gpu_route: GpuRouteRequest,
        /// Firefox's own memory reports in every run, as `run --memory-reports` (local
        /// Firefox only).
        #[arg(long)]
        memory_reports: bool,
        /// Every local run's browser on the profile kept in DIR/<browser>, as `run
        /// --keep-profile` (refused with --local-jobs above 1: one profile, one browser at once).
        #[arg(long, value_name = "DIR")]
        keep_profile: Option<PathBuf>,
        #[command(flatten)]
        webdriver: commands::run::WebDriverArgs,
        #[command(flatten)]
        reach: commands::run::ReachArgs,
        /// Where each browser runs, repeatable: `local:BROWSER` or `webdriver:URL#BROWSER`
        /// (that endpoint's default capabilities); instead of --browser and --webdriver.
        #[arg(
            long = "target",
            value_name = "SPEC",
            conflicts_with = "webdriver",
            value_parser = parse_target
        )]
        targets: Vec<ocr_bench::target::TargetSpec>,
    },
    /// Deletes a WebDriver session if the runner dies first (started by the runner itself).
    #[command(name = "webdriver-watchdog", hide = true)]
    WebdriverWatchdog,
    /// Say which way a browser started here would reach WebGPU (the GPU route or software),
    /// why, and the switches and environment that adds; starts no browser. Exit status 0.
    GpuRoute {
        #[arg(long, default_value = "chromium")]
        browser: BrowserKind,
        #[arg(long, default_value = "auto", value_name = "auto|gpu|software")]
        gpu_route: GpuRouteRequest,
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
    /// Check combinations of page parameters over a common base query, before any browser
    /// starts, and print the query each runs (one per configuration, in the order given).
    ///
    /// Each combination's parameters replace the base's of the same name; the core parses and
    /// checks the result as `run` would. A combination that is the same configuration as an
    /// earlier one is dropped with a note. `bench/decode-combos` runs the printed queries.
    ///
    /// Exit status: 0 done, 2 a combination (or the base) refused, with the core's message.
    Plan {
        /// The query every combination is laid over, such as `cases=hayai13`.
        #[arg(long, default_value = "", value_name = "QUERY")]
        base: String,
        /// The combinations, such as `choose=gpu&sync=4&poll=kick`; "" is the base alone.
        #[arg(required = true, value_name = "COMBINATION")]
        combinations: Vec<String>,
    },
    /// The memory each configuration is expected to take, per phase, before any browser
    /// starts: GPU bytes of every realm's device, the WebAssembly heaps of the page, the vision
    /// worker and the decoder worker, the driver's VRAM and the browser's PSS rise above idle,
    /// from the manifest each names (the floor's parts) and constants fitted on recorded runs
    /// (docs/benchmark-protocol.md, "Predicted memory").
    ///
    /// Each QUERY's parameters replace the base's of the same name, as in `plan`. With
    /// --adapter, the largest buffer of each (the largest initializer or activation of its
    /// graphs) is checked against that run's adapter limits.
    ///
    /// Exit status: 0 done, 1 a configuration's largest buffer exceeds the adapter's limits,
    /// 2 bad input (a query or manifest refused, an adapter file without limits).
    Predict {
        /// The query every QUERY is laid over, such as `cases=hayai13`.
        #[arg(long, default_value = "", value_name = "QUERY")]
        base: String,
        /// A results file (JSONL) whose adapter limits the configurations are checked against.
        #[arg(long, value_name = "FILE")]
        adapter: Option<PathBuf>,
        /// The configurations, such as `decoder=fixed-kv-fused&realm=worker`; "" is the base alone.
        #[arg(required = true, value_name = "QUERY")]
        queries: Vec<String>,
    },
    /// Set the combinations' finished runs side by side against the seed's loop, in markdown.
    ///
    /// Each FILE holds the rounds of one combination (its finished runs, one browser, one
    /// query). Per combination: rounds, the median over them of the per-token p50, the submit
    /// and sync p50, ms per decode step and nCER; whether every round read the tokens of the
    /// --against file's first run ("yes", or how many cases differ); and the ratio of the
    /// per-token p50s seed/this. A second table gives the time to first token, vision, prefill
    /// and case p50 over the steady runs, the first run (pipeline compilation) apart, and
    /// seed/this for the first token and the case. Then the fastest combination with the seed's tokens, the
    /// fastest with nCER within --ncer-within of the seed's, and the completion-bound ones.
    ///
    /// Exit status: 0 done, 2 bad input (unreadable file, a line that is not a record, no
    /// finished run, runs of two configurations in one file).
    Table {
        /// The seed's loop: the file the others are set against (a row of its own, first
        /// unless FILE lists it elsewhere).
        #[arg(long, value_name = "FILE")]
        against: PathBuf,
        /// The nCER difference from the seed's loop that still counts as its accuracy.
        #[arg(
            long,
            default_value_t = ocr_bench::combos::table::DEFAULT_NCER_TOLERANCE,
            value_name = "X",
            value_parser = commands::combos::parse_ncer_tolerance
        )]
        ncer_within: f64,
        /// Results files (JSONL), one combination each, in the table's order.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Set the pool sizes' finished runs side by side, in markdown (`bench/pool-sizes`).
    ///
    /// Each FILE holds the rounds of one `pool=K` over the same set and query otherwise; the
    /// first is the reference (K=1 as the bench orders them). Per size: the whole set's time
    /// (the decoder-run phase) and the first's over it, decode steps per second, the
    /// per-token p50 under contention, whether every case read the first file's tokens, the
    /// runs each realm read, GPU bytes and WASM heaps summed over the realms, and the
    /// browser's PSS and VRAM at their decoder-run peak; then the best whole-set time.
    ///
    /// Exit status: 0 done, 2 bad input (unreadable file, a line that is not a record, no
    /// finished run, runs of two configurations in one file).
    PoolTable {
        /// Results files (JSONL), one pool size each, the reference first.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Summarize results files in markdown; with --out, also write a static HTML report.
    ///
    /// Prints per configuration (browser and query) its runs, cases, nCER, per-token p50,
    /// peak GPU bytes and peak PSS per phase. --out DIR writes DIR/index.html with the charts
    /// (memory over each run, peaks per phase, per-token latency, nCER), which opens from disk
    /// without a server. Torn lines are skipped with a warning.
    ///
    /// Exit status: 0 done, 2 bad input (unreadable file, a line that is not a record, no
    /// finished run in a file), 6 the report could not be written.
    Report {
        /// Results files (JSONL), read in order.
        #[arg(required = true, value_name = "RESULTS")]
        files: Vec<PathBuf>,
        /// Directory for index.html and the files it loads (created if missing).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Write one flat row per run of a results file, as CSV or JSON lines, for a notebook.
    ///
    /// A run is every record of one page run (start, marks, progress, result, closing record),
    /// finished or not (error, timeout, refused). The columns are fixed, the same names in one
    /// order for every file: the run and how it ended, browser and machine, configuration,
    /// capability, accuracy, latency figures, and per phase the process memory, GPU and WASM
    /// bytes and the floor (runner/README.md lists them). A cell a run lacks is empty (null in
    /// JSON); a column empty in every run is left out unless --all-columns is given. Torn
    /// lines are skipped with a warning.
    ///
    /// Exit status: 0 done, 2 bad input (unreadable file, a line that is not a record), 6 the
    /// rows could not be written.
    Export {
        /// The results file (JSONL).
        #[arg(long, value_name = "FILE")]
        results: PathBuf,
        /// `csv` (a header line, then a line per run) or `jsonl` (an object per run).
        #[arg(long, default_value = "csv", value_name = "csv|jsonl")]
        format: commands::export::Format,
        /// The file to write (default: stdout).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Every column, those empty in every run too (by default they are left out).
        #[arg(long)]
        all_columns: bool,
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
    if let Command::GpuRoute { browser, gpu_route } = &cli.command {
        print!(
            "{}",
            ocr_bench::browser::gpu_route(*gpu_route, *browser).describe()
        );
        return ExitCode::SUCCESS;
    }
    // Reads two files: no root, no runtime.
    if let Command::Compare { a, b, run_a, run_b } = &cli.command {
        return ExitCode::from(compare_command(a, b, run_a.as_deref(), run_b.as_deref()));
    }
    if let Command::Plan { base, combinations } = &cli.command {
        // Each combination is checked against the manifest it names, under the root.
        return match resolve_root(cli.root.clone()) {
            Ok(root) => ExitCode::from(plan_command(&root, base, combinations)),
            Err(e) => {
                eprintln!("ocr-bench: {e:#}");
                ExitCode::from(commands::EXIT_USAGE)
            }
        };
    }
    if let Command::Predict {
        base,
        adapter,
        queries,
    } = &cli.command
    {
        return match resolve_root(cli.root.clone()) {
            Ok(root) => ExitCode::from(predict_command(&root, base, queries, adapter.as_deref())),
            Err(e) => {
                eprintln!("ocr-bench: {e:#}");
                ExitCode::from(commands::EXIT_USAGE)
            }
        };
    }
    if let Command::Export {
        results,
        format,
        out,
        all_columns,
    } = &cli.command
    {
        return ExitCode::from(export_command(
            results,
            *format,
            out.as_deref(),
            *all_columns,
        ));
    }
    if let Command::Table {
        against,
        ncer_within,
        files,
    } = &cli.command
    {
        return ExitCode::from(table_command(against, files, *ncer_within));
    }
    if let Command::PoolTable { files } = &cli.command {
        return ExitCode::from(commands::combos::pool_table_command(files));
    }
    if let Command::Report { files, out } = &cli.command {
        // The page and Chart.js come from the root only when a page is written.
        let root = match out
            .as_ref()
            .map(|_| resolve_root(cli.root.clone()))
            .transpose()
        {
            Ok(root) => root,
            Err(e) => {
                eprintln!("ocr-bench: {e:#}");
                return ExitCode::from(commands::EXIT_USAGE);
            }
        };
        return ExitCode::from(report_command(root.as_deref(), files, out.as_deref()));
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
            ExitCode::from(ocr_bench::exit::code_of(&e))
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
            serve_dirs,
            origin,
        } => {
            // Without --port: 8000, unless the public URL names the port.
            let port = port.or(origin.public_url.is_none().then_some(8000));
            let reach = match origin.reach(Some(host), port) {
                Ok(reach) => reach,
                Err(message) => {
                    eprintln!("ocr-bench: {message}");
                    return Ok(commands::EXIT_USAGE);
                }
            };
            serve_command(&root, &reach, &results, &serve_dirs).await
        }
        Command::Run {
            browser,
            results,
            timeout,
            page,
            sample_ms,
            gpu_route,
            memory_reports,
            keep_profile,
            webdriver,
            reach,
            query,
        } => {
            let reach = match reach.reach() {
                Ok(reach) => reach,
                Err(message) => {
                    eprintln!("ocr-bench: {message}");
                    return Ok(commands::EXIT_USAGE);
                }
            };
            let options = RunOptions {
                root,
                page,
                query: query.unwrap_or_default(),
                results,
                timeout: TimeLimit::from_seconds(timeout),
                sample_interval: Duration::from_millis(sample_ms),
                gpu_route,
                reach,
            };
            run_command(browser, webdriver, memory_reports, keep_profile, options).await
        }
        Command::Sweep {
            browser,
            params,
            results,
            timeout,
            retry_failed,
            runs,
            jobs,
            local_jobs,
            sample_ms,
            gpu_route,
            memory_reports,
            keep_profile,
            webdriver,
            reach,
            targets,
        } => {
            let checked = webdriver.spec().and_then(|spec| Ok((spec, reach.reach()?)));
            let (webdriver, reach) = match checked {
                Ok(checked) => checked,
                Err(message) => {
                    eprintln!("ocr-bench: {message}");
                    return Ok(commands::EXIT_USAGE);
                }
            };
            let options = sweep::SweepOptions {
                webdriver,
                targets,
                browsers: browser,
                params,
                retry_failed,
                runs,
                jobs,
                local_jobs,
                memory_reports,
                keep_profile,
                run: RunOptions {
                    root,
                    page: DEFAULT_PAGE.to_owned(),
                    query: String::new(),
                    results,
                    timeout: TimeLimit::from_seconds(timeout),
                    sample_interval: Duration::from_millis(sample_ms),
                    gpu_route,
                    reach,
                },
            };
            sweep_command(options).await
        }
        Command::Compare { a, b, run_a, run_b } => {
            Ok(compare_command(&a, &b, run_a.as_deref(), run_b.as_deref()))
        }
        Command::Report { files, out } => Ok(report_command(Some(&root), &files, out.as_deref())),
        Command::GpuRoute { .. } => unreachable!("answered before the runtime starts"),
        Command::WebdriverWatchdog => Ok(ocr_bench::target::webdriver::watchdog_main().await),
        Command::Plan { .. } => unreachable!("answered before the runtime starts"),
        Command::Predict { .. } => unreachable!("answered before the runtime starts"),
        Command::Export { .. } => unreachable!("answered before the runtime starts"),
        Command::PoolTable { .. } => unreachable!("answered before the runtime starts"),
        Command::Table {
            against,
            ncer_within,
            files,
        } => Ok(table_command(&against, &files, ncer_within)),
    }
}

/// `sweep --target SPEC` (`TargetSpec::parse`).
fn parse_target(text: &str) -> Result<ocr_bench::target::TargetSpec, String> {
    ocr_bench::target::TargetSpec::parse(text)
}
