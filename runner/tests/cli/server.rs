//! `ocr-bench serve` over HTTP: the headers and types it serves, the records its endpoints
//! append, what it refuses, and how it keeps the results file.

use super::*;

#[test]
fn serve_sends_isolation_headers_and_mime_types() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("www")).unwrap();
    std::fs::create_dir_all(root.path().join("models")).unwrap();
    for name in [
        "www/index.html",
        "www/app.mjs",
        "www/core.js",
        "www/core_bg.wasm",
        "models/m.onnx",
        "models/m.onnx.data",
        "models/m.json",
    ] {
        std::fs::write(root.path().join(name), b"x").unwrap();
    }
    let results = root.path().join("results.jsonl");
    let served = serve(root.path(), &results);
    assert!(
        served.base.starts_with("http://127.0.0.1:"),
        "{}",
        served.base
    );
    for (path, mime) in [
        ("/www/index.html", "text/html; charset=utf-8"),
        ("/www/app.mjs", "text/javascript"),
        ("/www/core.js", "text/javascript"),
        ("/www/core_bg.wasm", "application/wasm"),
        ("/models/m.onnx", "application/octet-stream"),
        ("/models/m.onnx.data", "application/octet-stream"),
        ("/models/m.json", "application/json"),
    ] {
        let response = agent()
            .get(format!("{}{path}", served.base))
            .call()
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "{path}");
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned()
        };
        assert_eq!(header("content-type"), mime, "{path}");
        assert_eq!(
            header("cross-origin-opener-policy"),
            "same-origin",
            "{path}"
        );
        assert_eq!(
            header("cross-origin-embedder-policy"),
            "require-corp",
            "{path}"
        );
        assert_eq!(
            header("cross-origin-resource-policy"),
            "same-origin",
            "{path}"
        );
        assert_eq!(header("cache-control"), "no-store", "{path}");
    }
    let missing = agent()
        .get(format!("{}/www/nope.js", served.base))
        .call()
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    let root_page = agent().get(format!("{}/", served.base)).call().unwrap();
    assert_eq!(root_page.status().as_u16(), 307);
    assert_eq!(
        root_page.headers().get("location").unwrap(),
        "/www/index.html"
    );
}

#[test]
fn endpoints_append_one_flushed_record_per_request() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("nested/dir/results.jsonl");
    let served = serve(root.path(), &results);
    let base = &served;
    let start = json!({ "runId": "r1", "config": { "tier": "121" }, "userAgent": "test", "adapter": { "features": ["shader-f16"] }, "ortVersion": "1.30.0" });
    assert_eq!(
        post(base, "/benchmark-start", &start),
        (200, json!({ "ok": true }))
    );
    // Each record is on disk as soon as the answer arrives: a crash loses nothing finished.
    assert_eq!(records(&results).len(), 1);
    assert_eq!(
        post(
            base,
            "/benchmark-mark",
            &json!({ "runId": "r1", "phase": "baseline" })
        )
        .0,
        200
    );
    assert_eq!(
        post(
            base,
            "/benchmark-progress",
            &json!({ "runId": "r1", "case": legacy_case() })
        )
        .0,
        200
    );
    // A case must be a whole case result: the answer names the missing field.
    let (status, answer) = post(
        base,
        "/benchmark-progress",
        &json!({ "runId": "r1", "case": { "id": "c1", "distance": 0 } }),
    );
    assert_eq!(status, 400);
    assert!(
        answer["error"].as_str().unwrap().contains("missing field"),
        "{answer}"
    );
    assert_eq!(records(&results).len(), 3);
    let error = json!({ "runId": "r1", "phase": "decoder-load", "error": { "name": "Error", "message": "boom", "stack": "s" } });
    assert_eq!(post(base, "/benchmark-error", &error).0, 200);
    // A result must be a JSON object naming its runId (any page's figures are).
    let (status, answer) = post(base, "/benchmark-result", &json!({ "cases": 1 }));
    assert_eq!(status, 422);
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("the result names no `runId` (got none)"),
        "{answer}"
    );
    let refused = records(&results).pop().unwrap();
    assert_eq!(refused["kind"], "refused", "{refused}");
    assert_eq!(refused["posted"], r#"{"cases":1}"#, "{refused}");
    let mut summary = legacy("result", 0)["summary"].clone();
    summary["runId"] = "r1".into();
    let (status, memory) = post(base, "/benchmark-result", &summary);
    assert_eq!(status, 200);
    // Under serve nobody samples the person's browser, and the answer says so.
    assert_eq!(memory["available"], false, "{memory}");
    assert!(
        memory["reason"].as_str().unwrap().contains("ocr-bench run"),
        "{memory}"
    );

    let all: Vec<Value> = records(&results)
        .into_iter()
        .filter(|r| r["kind"] != "refused")
        .collect();
    let kinds: Vec<&str> = all.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["start", "mark", "progress", "error", "result"]);
    assert!(all
        .iter()
        .all(|r| r["time"].as_str().is_some_and(|t| t.ends_with('Z'))));
    // The run id once per record: at the top, or in the summary the page posted.
    assert!(all[..4]
        .iter()
        .all(|r| r["runId"] == "r1" && r["body"].get("runId").is_none()));
    assert_eq!(all[4]["summary"]["runId"], "r1");
    assert!(all[4].get("runId").is_none());
    assert_eq!(all[0]["body"]["ortVersion"], "1.30.0");
    assert_eq!(all[0]["body"]["adapter"]["features"][0], "shader-f16");
    assert!(all[0]["machine"]["cores"].as_u64().unwrap() >= 1);
    assert_eq!(all[1]["phase"], "baseline");
    assert_eq!(all[2]["body"]["case"], legacy_case());
    assert_eq!(all[3]["body"]["error"]["message"], "boom");
    // The environment is the start record's; the result does not repeat it.
    for field in ["adapter", "ortVersion", "userAgent", "machine", "config"] {
        assert!(all[4].get(field).is_none(), "result repeats `{field}`");
    }
    assert_eq!(all[4]["summary"]["results"], summary["results"]);
    assert_eq!(all[4]["processMemory"]["available"], false);
}

#[test]
fn endpoints_reject_malformed_bodies_with_a_reason() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results.jsonl");
    let served = serve(root.path(), &results);
    let (status, answer) = post(&served, "/benchmark-mark", &json!({ "runId": "r1" }));
    assert_eq!(status, 400);
    assert!(
        answer["error"].as_str().unwrap().contains("`phase`"),
        "{answer}"
    );
    // A page's own malformed report is only answered.
    assert!(!results.exists() || records(&results).is_empty());
    // A result that cannot be taken is written down with its body: it may be all a page sent.
    let (status, answer) = post(&served, "/benchmark-result", &json!([1, 2]));
    assert_eq!(status, 400);
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("the body must be a JSON object, got an array"),
        "{answer}"
    );
    let all = records(&results);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["kind"], "refused");
    assert_eq!(all[0]["posted"], "[1,2]");
}

#[test]
fn two_pages_on_one_serve_keep_their_own_start() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results.jsonl");
    let (served, lines) = serve_reading(root.path(), &results);
    let base = &served;
    assert_eq!(
        post(
            base,
            "/benchmark-start",
            &start_body("A", "agent-A", "gpu-A")
        )
        .0,
        200
    );
    assert_eq!(
        post(
            base,
            "/benchmark-start",
            &start_body("B", "agent-B", "gpu-B")
        )
        .0,
        200
    );
    for id in ["A", "B"] {
        let mut summary = legacy("result", 0)["summary"].clone();
        summary["runId"] = id.into();
        assert_eq!(post(base, "/benchmark-result", &summary).0, 200);
    }
    let announced: Vec<String> = lines
        .iter()
        .filter(|l| l.starts_with("result of run"))
        .take(2)
        .collect();
    assert!(
        announced[0].starts_with("result of run A: agent-A") && announced[0].contains("gpu-A"),
        "{announced:?}"
    );
    assert!(
        announced[1].starts_with("result of run B: agent-B") && announced[1].contains("gpu-B"),
        "{announced:?}"
    );
    let all = records(&results);
    let ids: Vec<(&str, &str)> = all
        .iter()
        .map(|r| {
            let id = r["runId"]
                .as_str()
                .or(r["summary"]["runId"].as_str())
                .unwrap();
            (r["kind"].as_str().unwrap(), id)
        })
        .collect();
    assert_eq!(
        ids,
        [
            ("start", "A"),
            ("start", "B"),
            ("result", "A"),
            ("result", "B")
        ]
    );
}

#[test]
fn an_oversized_body_is_refused_with_413_and_recorded() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results.jsonl");
    let served = serve(root.path(), &results);
    // 50 MB, as in the probe that found it written as one line.
    // The server answers before it has read the body, so the body goes over a raw socket
    // whose writes may fail once the answer is sent.
    let length = 50_000_000usize;
    let address = served.base.trim_start_matches("http://");
    let mut socket = std::net::TcpStream::connect(address).unwrap();
    write!(
        socket,
        "POST /benchmark-result HTTP/1.1\r\nHost: {address}\r\nCookie: {}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n",
        served.cookie
    )
    .unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..length / chunk.len() {
        if socket.write_all(&chunk).is_err() {
            break;
        }
    }
    let mut answer = String::new();
    let _ = socket.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    let message = answer
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains("larger than 8 MiB") && message.contains("summary"),
        "{message}"
    );
    let all = records(&results);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["kind"], "refused");
    assert_eq!(all[0]["status"], 413);
    assert!(std::fs::metadata(&results).unwrap().len() < 2_000);
}

#[test]
fn only_the_known_phases_are_marked() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results.jsonl");
    let served = serve(root.path(), &results);
    let (status, answer) = post(
        &served,
        "/benchmark-mark",
        &json!({ "runId": "r1", "phase": "lunch" }),
    );
    assert_eq!(status, 400);
    let message = answer["error"].as_str().unwrap();
    assert!(
        message.contains("\"lunch\"") && message.contains("baseline, probe, vision-load"),
        "{message}"
    );
    assert!(!results.exists() || records(&results).is_empty());
}

#[test]
fn binding_beyond_loopback_warns() {
    let root = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--host", "0.0.0.0", "--port", "0", "--root"])
        .arg(root.path())
        .arg("--results")
        .arg(root.path().join("r.jsonl"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        line.contains("warning: binding 0.0.0.0") && line.contains("127.0.0.1"),
        "{line}"
    );
}

#[test]
fn appends_start_on_a_fresh_line_after_a_torn_one() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results.jsonl");
    let finished = finished_run("r1", "chromium", &[("01", &[5, 6], "ab")]);
    // A crash mid-append left half a record without its newline.
    let torn = &LEGACY.lines().nth(1).unwrap()[..40];
    std::fs::write(&results, format!("{finished}{torn}")).unwrap();
    {
        let served = serve(root.path(), &results);
        let mark = json!({ "runId": "r2", "phase": "baseline" });
        assert_eq!(post(&served, "/benchmark-mark", &mark).0, 200);
    }
    let text = std::fs::read_to_string(&results).unwrap();
    let last: Vec<&str> = text.lines().rev().take(2).collect();
    assert_eq!(last[1], torn);
    assert_eq!(
        serde_json::from_str::<Value>(last[0]).unwrap()["runId"],
        "r2"
    );
    // The torn line costs only itself: compare warns and reads the finished run.
    let out = Command::new(BIN)
        .arg("compare")
        .arg(&results)
        .arg(&results)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let line = finished.lines().count() + 1;
    assert!(
        stderr.contains(&format!("results.jsonl:{line}: skipped a torn line")),
        "{stderr}"
    );
}

#[test]
fn a_results_file_deleted_under_serve_is_written_again() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results.jsonl");
    let served = serve(root.path(), &results);
    let mark = json!({ "runId": "r1", "phase": "baseline" });
    assert_eq!(post(&served, "/benchmark-mark", &mark).0, 200);
    std::fs::remove_file(&results).unwrap();
    let mark = json!({ "runId": "r1", "phase": "release" });
    assert_eq!(post(&served, "/benchmark-mark", &mark).0, 200);
    let all = records(&results);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["phase"], "release");
}

#[test]
fn a_release_step_is_a_mark_within_the_release_phase_only() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results.jsonl");
    let served = serve(root.path(), &results);
    let step = json!({ "runId": "r1", "phase": "release", "step": "device" });
    assert_eq!(post(&served, "/benchmark-mark", &step).0, 200);
    let written = records(&results);
    assert_eq!(
        (&written[0]["phase"], &written[0]["step"]),
        (&json!("release"), &json!("device"))
    );
    // A step of another phase, or one that is no step, is refused with the steps listed.
    for (body, says) in [
        (
            json!({ "runId": "r1", "phase": "decoder-run", "step": "device" }),
            "with phase \"decoder-run\"",
        ),
        (
            json!({ "runId": "r1", "phase": "release", "step": "heap" }),
            "unknown step \"heap\"",
        ),
    ] {
        let (status, answer) = post(&served, "/benchmark-mark", &body);
        let error = answer["error"].as_str().unwrap();
        assert_eq!(status, 400, "{answer}");
        assert!(
            error.contains(says) && error.contains("sessions, device, realm, all"),
            "{error}"
        );
    }
}

/// `serve --port P` where P is taken: exit 8, naming the address and the way out.
#[test]
fn serve_on_a_taken_port_exits_8() {
    let root = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = Command::new(BIN)
        .args(["serve", "--port", &port, "--root"])
        .arg(root.path())
        .arg("--results")
        .arg(root.path().join("results.jsonl"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(8), "{stderr}");
    assert!(
        stderr.contains(&format!("binding 127.0.0.1:{port}"))
            && stderr.contains("`--port 0` picks a free one"),
        "{stderr}"
    );
}
