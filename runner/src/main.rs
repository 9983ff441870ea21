//! `ocr-bench`: serves the benchmark page, runs it in headless Chromium or Firefox while
//! sampling the browser's process memory, and sweeps configurations.

mod commands;

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use ocr_bench::browser::BrowserKind;
use ocr_bench::exit::{Cause, Failure};
use ocr_bench::gpu_route::GpuRouteRequest;
use ocr_bench::run::DEFAULT_PAGE;
use ocr_bench::sweep;

use commands::combos::{plan_command, table_command, TableFormat};
use commands::compare::compare_command;
use commands::export::export_command;
use commands::import::import_command;
use commands::predict::predict_command;
use commands::report::report_command;
use commands::run::run_command;
use commands::serve::serve_command;
use commands::sweep::sweep_command;

use commands::run::DEFAULT_RESULTS;

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
        /// The page, relative to the root; its query is checked against the benchmark's
        /// parameters only for the default page.
        #[arg(long, default_value = DEFAULT_PAGE)]
        page: String,
        #[command(flatten)]
        settings: commands::run::RunSettings,
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
        /// share its GPU and cores, which is what they measure (their timings are a loaded
        /// machine's; each run's process memory is its own browser's).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
        local_jobs: u32,
        #[command(flatten)]
        settings: commands::run::RunSettings,
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
    /// Check a Hugging Face export folder (`optimum-cli export onnx --task
    /// image-to-text-with-past`) and write its manifest, before any browser starts; prints the
    /// page query that runs it.
    ///
    /// Every problem is named at once: a missing encoder or decoder, an encoder-only or
    /// cache-less export, an unsupported image processor, tokenizer model or generation
    /// setting, a dynamic or non-square image size, a vocabulary that disagrees with the
    /// logits. The manifest's variants are the quantized copies found (`_fp16`, `_q4`, …).
    ///
    /// Exit status: 0 written, 2 refused (the problems on stderr).
    Import {
        /// The export folder.
        folder: PathBuf,
        /// The model's name (default: the folder's).
        #[arg(long)]
        name: Option<String>,
        /// The manifest's folder (default: models/imported/NAME under the root).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Set the combinations' finished runs side by side against the seed's loop (markdown,
    /// CSV or HTML).
    ///
    /// Each FILE holds the rounds of one combination (its finished runs, one browser, one
    /// query). Per combination: rounds, the median over them of the per-token p50, the submit
    /// and sync p50, ms per decode step and nCER; whether every round read the tokens of the
    /// --against file's first run ("yes", or how many cases differ); and the ratio of the
    /// per-token p50s seed/this. A second table gives the time to first token, vision, prefill
    /// and case p50 over the steady runs, the first run (pipeline compilation) apart, and
    /// seed/this for the first token and the case, a third the GPU dispatches per step, prefill
    /// and vision. Then the fastest combination with the seed's tokens, the fastest with nCER
    /// within --ncer-within of the seed's, and the completion-bound ones. --format csv writes
    /// the three tables as one, a line per combination.
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
        #[command(flatten)]
        format: TableFormat,
        /// Results files (JSONL), one combination each, in the table's order.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Set the pool sizes' finished runs side by side (markdown, CSV or HTML;
    /// `bench/pool-sizes`).
    ///
    /// Each FILE holds the rounds of one `pool=K` over the same set and query otherwise; the
    /// first is the reference (K=1 as the bench orders them). Per size: the whole set's time
    /// (the decoder-run phase) and the first's over it, decode steps per second, the
    /// per-token p50 under contention, whether every case read the first file's tokens, the
    /// nCER, the runs each realm read, GPU bytes and WASM heaps summed over the realms, and the
    /// browser's PSS and VRAM at their decoder-run peak; then the best whole-set time.
    ///
    /// Exit status: 0 done, 2 bad input (unreadable file, a line that is not a record, no
    /// finished run, runs of two configurations in one file).
    PoolTable {
        #[command(flatten)]
        format: TableFormat,
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
    /// Write one flat row per run of results files, as CSV or JSON lines, for a notebook.
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
        /// Results files (JSONL), read in order, as `report` takes them.
        #[arg(required_unless_present = "results", value_name = "RESULTS")]
        files: Vec<PathBuf>,
        /// The results file named as an option, as earlier versions took it (kept so that
        /// scripts written for them still run).
        #[arg(long, value_name = "FILE", hide = true)]
        results: Vec<PathBuf>,
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
/// The checkout to serve: `--root`, else the current directory if it holds the page, else
/// the checkout this binary was built from. A root that does not exist is a usage error.
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
    root.canonicalize().map_err(|e| {
        Failure::new(
            Cause::Usage,
            format!("the root {} does not exist: {e}", root.display()),
        )
        .into()
    })
}

fn main() -> ExitCode {
    let command = Cli::command()
        .mut_subcommand("run", |c| c.after_help(parameters_help()))
        .mut_subcommand("sweep", |c| c.after_help(parameters_help()));
    let cli = match command
        .try_get_matches()
        .and_then(|matches| Cli::from_arg_matches(&matches))
    {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // clap quotes a refused value whole, once or twice: a 100 KB argument would come back
            // as 200 KB of message. Each long argument is cut as the core cuts a refused input.
            let mut message = e.render().to_string();
            for argument in std::env::args().skip(1) {
                let cut = ocr_bench_core::error::excerpt(&argument);
                if cut != argument {
                    message = message.replace(&argument, &cut);
                }
            }
            eprint!("{message}");
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
        Err(e) => e.exit(),
    };
    match execute(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("ocr-bench: {e:#}");
            ExitCode::from(ocr_bench::exit::code_of(&e))
        }
    }
}

/// Every command, once: those that read files answer at once, those that serve or drive a
/// browser run on the async runtime.
fn execute(cli: Cli) -> Result<u8> {
    let root = cli.root;
    match cli.command {
        Command::GpuRoute { browser, gpu_route } => {
            let route = ocr_bench::browser::gpu_route(gpu_route, browser);
            print!("{}", route.describe());
            Ok(0)
        }
        Command::Compare { a, b, run_a, run_b } => {
            Ok(compare_command(&a, &b, run_a.as_deref(), run_b.as_deref()))
        }
        // Each combination is checked against the manifest it names, under the root.
        Command::Plan { base, combinations } => {
            Ok(plan_command(&resolve_root(root)?, &base, &combinations))
        }
        Command::Predict {
            base,
            adapter,
            queries,
        } => Ok(predict_command(
            &resolve_root(root)?,
            &base,
            &queries,
            adapter.as_deref(),
        )),
        Command::Import { folder, name, out } => Ok(import_command(
            &resolve_root(root)?,
            &folder,
            name,
            out.as_deref(),
        )),
        Command::Export {
            mut files,
            results,
            format,
            out,
            all_columns,
        } => {
            files.extend(results);
            Ok(export_command(&files, format, out.as_deref(), all_columns))
        }
        Command::Table {
            against,
            ncer_within,
            format,
            files,
        } => Ok(table_command(&against, &files, ncer_within, format.format)),
        Command::PoolTable { format, files } => {
            Ok(commands::combos::pool_table_command(&files, format.format))
        }
        Command::Report { files, out } => {
            // The page and Chart.js come from the root only when a page is written.
            let root = out.as_ref().map(|_| resolve_root(root)).transpose()?;
            Ok(report_command(root.as_deref(), &files, out.as_deref()))
        }
        Command::Serve {
            port,
            host,
            results,
            serve_dirs,
            origin,
        } => {
            let root = resolve_root(root)?;
            // Without --port: 8000, unless the public URL names the port.
            let port = port.or(origin.public_url.is_none().then_some(8000));
            let reach = usage(origin.reach(Some(host), port))?;
            on_runtime(serve_command(&root, &reach, &results, &serve_dirs))
        }
        Command::Run {
            browser,
            page,
            settings,
            query,
        } => {
            let options =
                usage(settings.run_options(resolve_root(root)?, page, query.unwrap_or_default()))?;
            on_runtime(run_command(
                browser,
                settings.webdriver,
                settings.local,
                options,
            ))
        }
        Command::Sweep {
            browser,
            params,
            retry_failed,
            runs,
            jobs,
            local_jobs,
            settings,
            targets,
        } => {
            let root = resolve_root(root)?;
            let webdriver = usage(settings.webdriver.spec())?;
            let run = usage(settings.run_options(root, DEFAULT_PAGE.to_owned(), String::new()))?;
            let options = sweep::SweepOptions {
                webdriver,
                targets,
                browsers: browser,
                params,
                retry_failed,
                runs,
                jobs,
                local_jobs,
                memory_reports: settings.local.memory_reports,
                keep_profile: settings.local.keep_profile,
                run,
            };
            on_runtime(sweep_command(options))
        }
        Command::WebdriverWatchdog => {
            on_runtime(async { Ok(ocr_bench::target::webdriver::watchdog_main().await) })
        }
    }
}

/// A refused option's message as a usage failure (exit 2).
fn usage<T>(checked: Result<T, String>) -> Result<T> {
    checked.map_err(|message| Failure::new(Cause::Usage, message).into())
}

/// Runs a command that serves or drives a browser on two worker threads (the server and the
/// run's own tasks; the machine's cores are the browser's).
fn on_runtime(command: impl std::future::Future<Output = Result<u8>>) -> Result<u8> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?
        .block_on(command)
}

fn parse_target(text: &str) -> Result<ocr_bench::target::TargetSpec, String> {
    ocr_bench::target::TargetSpec::parse(text)
}
