//! What `ocr-bench serve` hands out and who may write to it: a real server over a root laid
//! out like the repository, every path asked for over a raw socket (so that encoded `..`
//! reaches the server as sent), and reports forged in each way a page of another site, or a
//! client without the token, could send them.

use super::*;

/// The files of a root laid out like the repository, each holding its own path.
const FILES: [&str; 29] = [
    "www/index.html",
    "www/main.js",
    "www/report.html",
    "www/report/charts.js",
    "www/.env",
    "browser/gpu.js",
    "worker/vision-worker.js",
    "pkg/ocr_bench_core.js",
    "models/manifest.json",
    "models/vocab.json",
    "models/eval/smoke2/01.png",
    "models/checkpoint/ocr-bench-default.npz",
    "node_modules/onnxruntime-web/dist/ort.webgpu.min.mjs",
    "node_modules/onnxruntime-web/package.json",
    "node_modules/onnxruntime-web-1.31.1/dist/ort.webgpu.min.mjs",
    "node_modules/onnxruntime-web-1.31.1/package.json",
    "node_modules/onnxruntime-web-1.29.0/dist/ort.webgpu.min.mjs",
    "node_modules/chart.js/dist/chart.umd.min.js",
    "node_modules/left-pad/index.js",
    "results/results.jsonl",
    "results/notes.txt",
    "elsewhere/other.jsonl",
    "mine/manifest.json",
    ".git/config",
    ".venv/pyvenv.cfg",
    "target/release/ocr-bench",
    "crate/src/lib.rs",
    "runner/src/main.rs",
    "scripts/setup",
];

/// Each path as sent and the status `serve --serve-dir mine --results elsewhere/this.jsonl`
/// answers it with.
const PATHS: [(&str, u16); 37] = [
    ("/www/index.html", 200),
    ("/www/", 200),
    ("/www/main.js", 200),
    ("/www/report.html", 200),
    ("/www/report/charts.js", 200),
    ("/browser/gpu.js", 200),
    ("/worker/vision-worker.js", 200),
    ("/pkg/ocr_bench_core.js", 200),
    ("/models/manifest.json", 200),
    ("/models/vocab.json", 200),
    ("/models/eval/smoke2/01.png", 200),
    ("/node_modules/onnxruntime-web/dist/ort.webgpu.min.mjs", 200),
    // Each version `ort=` names, from its own package folder; no other.
    (
        "/node_modules/onnxruntime-web-1.31.1/dist/ort.webgpu.min.mjs",
        200,
    ),
    ("/node_modules/chart.js/dist/chart.umd.min.js", 200),
    ("/results/results.jsonl", 200),
    ("/elsewhere/this.jsonl", 200),
    ("/mine/manifest.json", 200),
    // A symlink inside what is served to a file that is served too.
    ("/www/gpu-link.js", 200),
    ("/.git/config", 404),
    ("/.venv/pyvenv.cfg", 404),
    ("/www/.env", 404),
    ("/target/release/ocr-bench", 404),
    ("/crate/src/lib.rs", 404),
    ("/runner/src/main.rs", 404),
    ("/scripts/setup", 404),
    ("/models/checkpoint/ocr-bench-default.npz", 404),
    ("/node_modules/onnxruntime-web/package.json", 404),
    ("/node_modules/onnxruntime-web-1.31.1/package.json", 404),
    (
        "/node_modules/onnxruntime-web-1.29.0/dist/ort.webgpu.min.mjs",
        404,
    ),
    ("/node_modules/left-pad/index.js", 404),
    ("/results/notes.txt", 404),
    ("/elsewhere/other.jsonl", 404),
    ("/www/%2e%2e/crate/src/lib.rs", 404),
    ("/www/%2E%2E%2F%2E%2E%2Fscripts/setup", 404),
    ("/www/..%2f.git/config", 404),
    ("/www/leak", 404),
    ("/www/leak-folder/lib.rs", 404),
];

/// The status of `GET path` sent as it is.
fn status_of(base: &str, path: &str) -> u16 {
    let address = base.trim_start_matches("http://");
    let mut socket = std::net::TcpStream::connect(address).unwrap();
    write!(
        socket,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).unwrap();
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|status| status.parse().ok())
        .unwrap_or_else(|| panic!("{path}: no status in {answer:?}"))
}

#[test]
fn serve_hands_out_only_what_pages_load() {
    let root = tempfile::tempdir().unwrap();
    for file in FILES {
        let path = root.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, file).unwrap();
    }
    let www = root.path().join("www");
    std::os::unix::fs::symlink("../browser/gpu.js", www.join("gpu-link.js")).unwrap();
    std::os::unix::fs::symlink("../.git/config", www.join("leak")).unwrap();
    std::os::unix::fs::symlink("../crate/src", www.join("leak-folder")).unwrap();
    // Made by the server as it starts: its own results file is served wherever it is.
    let results = root.path().join("elsewhere/this.jsonl");
    let served = serve_with(root.path(), &results, &["--serve-dir", "mine"]);
    let wrong: Vec<String> = PATHS
        .iter()
        .map(|(path, expected)| (path, expected, status_of(&served.base, path)))
        .filter(|(_, expected, status)| *expected != status)
        .map(|(path, expected, status)| format!("{path}: {status}, expected {expected}"))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn serve_refuses_a_folder_it_cannot_serve() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join(".git")).unwrap();
    for (dir, why) in [
        ("missing", "No such file"),
        (".git", "is a dot-folder"),
        ("..", "outside the served root"),
    ] {
        let output = Command::new(BIN)
            .args(["serve", "--port", "0", "--serve-dir", dir, "--root"])
            .arg(root.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{dir}: {stderr}");
        assert!(
            stderr.contains(&format!("--serve-dir {dir}"))
                && stderr.contains(why)
                && stderr.contains("allowed: a folder under the served root"),
            "{dir}: {stderr}"
        );
    }
}

/// A `POST` with the given headers (name, value), as a page of another site or a client
/// without the token would send it.
fn post_with(served: &Served, path: &str, headers: &[(&str, &str)], body: &Value) -> u16 {
    let mut request = agent().post(format!("{}{path}", served.base));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request
        .send(body.to_string())
        .expect("POST")
        .status()
        .as_u16()
}

#[test]
fn serve_takes_reports_only_from_its_own_pages_with_the_token() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results.jsonl");
    let served = serve(root.path(), &results);
    let json = ("Content-Type", "application/json");
    let own = ("Origin", served.base.as_str());
    let cookie = ("Cookie", served.cookie.as_str());
    let forged = json!({ "runId": "forged", "cases": 1 });
    for (headers, status, why) in [
        (
            vec![
                ("Origin", "https://evil.example"),
                ("Content-Type", "text/plain"),
            ],
            403,
            "origin \"https://evil.example\"",
        ),
        (
            vec![("Origin", "https://evil.example"), json, cookie],
            403,
            "origin \"https://evil.example\"",
        ),
        (
            vec![("Sec-Fetch-Site", "cross-site"), json, cookie],
            403,
            "Sec-Fetch-Site: cross-site",
        ),
        (vec![own, json], 403, "no `ocr-bench-run` cookie"),
        (
            vec![own, json, ("Cookie", "ocr-bench-run=0123")],
            403,
            "another server's",
        ),
        (
            vec![own, ("Content-Type", "text/plain"), cookie],
            415,
            "allowed: application/json",
        ),
    ] {
        assert_eq!(
            post_with(&served, "/benchmark-result", &headers, &forged),
            status,
            "{headers:?}"
        );
        let refused = records(&results).pop().unwrap();
        assert_eq!(refused["kind"], "refused", "{headers:?}: {refused}");
        assert_eq!(refused["status"], status, "{refused}");
        assert_eq!(refused["claimedRunId"], "forged", "{refused}");
        assert!(
            refused["reason"].as_str().unwrap().contains(why),
            "{headers:?}: {refused}"
        );
    }
    assert_eq!(records(&results).len(), 6);

    // The page's own report: the cookie the launch URL set, from its origin.
    let mut summary = legacy("result", 0)["summary"].clone();
    summary["runId"] = "mine".into();
    assert_eq!(post(&served, "/benchmark-result", &summary).0, 200);
    let kinds: Vec<Value> = records(&results)
        .iter()
        .map(|r| r["kind"].clone())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| *k == "result").count(),
        1,
        "{kinds:?}"
    );
}

#[test]
fn the_launch_url_sets_the_token_and_opens_the_page_with_its_query() {
    let root = tempfile::tempdir().unwrap();
    let served = serve(root.path(), &root.path().join("results.jsonl"));
    let token = served.cookie.split_once('=').unwrap().1;
    let launch = |tail: &str| {
        agent()
            .get(format!("{}/__ocr-bench/launch/{tail}", served.base))
            .call()
            .unwrap()
    };
    // Every time: a person opens it in each browser.
    for (query, page) in [
        ("", "/www/index.html"),
        (
            "?tier=242&maxTokens=2",
            "/www/index.html?tier=242&maxTokens=2",
        ),
        ("", "/www/index.html"),
    ] {
        let response = launch(&format!("{token}{query}"));
        assert_eq!(response.status().as_u16(), 303, "{query}");
        let header = |name: &str| response.headers().get(name).unwrap().to_str().unwrap();
        assert_eq!(header("location"), page);
        assert_eq!(
            header("set-cookie"),
            format!("{}; Path=/; HttpOnly; SameSite=Strict", served.cookie)
        );
    }
    let mut wrong = launch("0123");
    assert_eq!(wrong.status().as_u16(), 403);
    assert!(wrong.headers().get("set-cookie").is_none());
    let answer = wrong.body_mut().read_to_string().unwrap();
    assert!(answer.contains("prints the one of this server"), "{answer}");
}

#[test]
fn serve_beyond_loopback_says_what_it_serves_and_to_whom() {
    let root = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--host", "0.0.0.0", "--port", "0", "--root"])
        .arg(root.path())
        .arg("--results")
        .arg(root.path().join("r.jsonl"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed = String::new();
    while !printed.contains("listening on") {
        match lines.next() {
            Some(Ok(line)) => printed += &(line + "\n"),
            _ => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        printed.contains("serving only www/ browser/ worker/ pkg/ pkg-hf/ models/eval/")
            && printed.contains("node_modules/onnxruntime-web/dist/")
            && printed.contains("results/*.jsonl")
            && !printed.contains("target/"),
        "{printed}"
    );
    let base = printed
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .last()
        .unwrap();
    let origin = base.trim_end_matches('/');
    assert!(
        printed.contains(&format!(
            "listening on 0.0.0.0:{}; reports are taken from pages at {origin} ",
            origin.rsplit(':').next().unwrap()
        )),
        "{printed}"
    );
}
