//! The command line and the server, without a browser: a real `ocr-bench serve` process on a
//! free port, spoken to over HTTP; bad arguments rejected before any browser starts. Here: that
//! server's harness and records made of the committed results file, which every part uses.

#[path = "cli/arguments.rs"]
mod arguments;
#[path = "cli/compare.rs"]
mod compare;
#[path = "cli/serve_guard.rs"]
mod serve_guard;
#[path = "cli/serve_tls.rs"]
mod serve_tls;
#[path = "cli/server.rs"]
mod server;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");

/// A running `ocr-bench serve`, killed when dropped.
struct Served {
    child: Child,
    base: String,
    /// The `Cookie` header its launch URL sets: the token every report must carry.
    cookie: String,
    /// Held open: the server prints more lines after the URL.
    _stdout: BufReader<std::process::ChildStdout>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(root: &Path, results: &Path) -> Served {
    serve_with(root, results, &[])
}

/// `serve` with `extra` arguments; its base is the URL of its first line.
fn serve_with(root: &Path, results: &Path, extra: &[&str]) -> Served {
    let mut child = Command::new(BIN)
        .args(["serve", "--port", "0", "--root"])
        .arg(root)
        .arg("--results")
        .arg(results)
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .expect("starting ocr-bench serve");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    // "serving ROOT at http://127.0.0.1:PORT/" (https:// with --tls)
    let base = first
        .split_whitespace()
        .last()
        .expect("a URL")
        .trim_end_matches('/')
        .to_owned();
    // "open http://127.0.0.1:PORT/__ocr-bench/launch/TOKEN (…)"
    let mut second = String::new();
    stdout.read_line(&mut second).unwrap();
    let token = second
        .split_whitespace()
        .nth(1)
        .and_then(|url| url.split_once(ocr_bench::server::LAUNCH_PATH))
        .map(|(_, token)| token.to_owned())
        .unwrap_or_else(|| panic!("serve printed no launch URL: {second}"));
    Served {
        child,
        base,
        cookie: format!("{}={token}", ocr_bench::server::RUN_COOKIE),
        _stdout: stdout,
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

/// A report as the page sends it: JSON, from the server's own origin, with its token.
fn post(served: &Served, path: &str, body: &Value) -> (u16, Value) {
    let mut response = agent()
        .post(format!("{}{path}", served.base))
        .header("Content-Type", "application/json")
        .header("Origin", &served.base)
        .header("Cookie", &served.cookie)
        .send(body.to_string())
        .expect("POST");
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn records(results: &Path) -> Vec<Value> {
    std::fs::read_to_string(results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

/// The results file today's runner wrote (Firefox, smoke2, two cases).
const LEGACY: &str = include_str!("data/legacy-smoke2.jsonl");

/// The n-th record of that kind in the committed results file.
fn legacy(kind: &str, n: usize) -> Value {
    LEGACY
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["kind"] == kind)
        .nth(n)
        .unwrap()
}

fn legacy_case() -> Value {
    legacy("progress", 0)["body"]["case"].clone()
}

/// A finished run as JSONL, made of the committed file's records: start, one progress
/// record per case, result, run.
fn finished_run(run_id: &str, browser: &str, cases: &[(&str, &[i64], &str)]) -> String {
    let named = |mut record: Value| {
        record["browser"]["name"] = browser.into();
        record["browser"]["version"] = format!("{browser} 9").into();
        record.to_string()
    };
    let mut start = legacy("start", 0);
    start["runId"] = run_id.into();
    let mut lines = vec![named(start)];
    for (id, tokens, actual) in cases {
        let mut progress = legacy("progress", 0);
        progress["runId"] = (*run_id).into();
        let case = &mut progress["body"]["case"];
        (case["id"], case["tokenIds"], case["actual"]) =
            ((*id).into(), json!(tokens), (*actual).into());
        lines.push(named(progress));
    }
    let mut result = legacy("result", 0);
    result["summary"]["runId"] = run_id.into();
    lines.push(named(result));
    lines.push(named(legacy("run", 0)));
    lines.join("\n") + "\n"
}

/// `ocr-bench serve` with its stdout read line by line (each result is announced there).
fn serve_reading(root: &Path, results: &Path) -> (Served, std::sync::mpsc::Receiver<String>) {
    let mut served = serve(root, results);
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = std::mem::replace(
        &mut served._stdout,
        BufReader::new(
            // A placeholder; the real handle moves to the reader thread.
            Command::new("true")
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
                .stdout
                .take()
                .unwrap(),
        ),
    );
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (served, rx)
}

fn start_body(run_id: &str, agent: &str, adapter: &str) -> Value {
    json!({ "runId": run_id, "config": { "tier": "121" }, "userAgent": agent, "adapter": { "description": adapter }, "ortVersion": "1.30.0" })
}
