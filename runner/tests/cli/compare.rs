//! `ocr-bench compare` on results files made of the committed run's records: what it reports
//! and its exit status.

use super::*;

#[test]
fn compare_and_its_exit_status_read_the_committed_results_file() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/legacy-smoke2.jsonl");
    let out = Command::new(BIN)
        .arg("compare")
        .arg(&file)
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("2 cases compared, 2 with identical tokens; 4/4 token positions agree"),
        "{stdout}"
    );
    assert!(
        stdout.contains("firefox (Mozilla Firefox 153.8.0esr)"),
        "{stdout}"
    );
}

#[test]
fn compare_reports_token_differences_through_its_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    let same = dir.path().join("same.jsonl");
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &a,
        finished_run(
            "ra",
            "chromium",
            &[("01", &[5, 6, 7], "abc"), ("02", &[9], "d")],
        ),
    )
    .unwrap();
    std::fs::write(
        &b,
        finished_run(
            "rb",
            "firefox",
            &[("01", &[5, 8, 7], "axc"), ("02", &[9], "d")],
        ),
    )
    .unwrap();
    std::fs::write(
        &same,
        finished_run(
            "rs",
            "firefox",
            &[("01", &[5, 6, 7], "abc"), ("02", &[9], "d")],
        ),
    )
    .unwrap();
    std::fs::write(&bad, "{\"kind\": \"start\"}\nnot json\n").unwrap();
    let compare = |x: &Path, y: &Path| {
        let out = Command::new(BIN)
            .arg("compare")
            .arg(x)
            .arg(y)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };

    let (code, stdout, _) = compare(&a, &b);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(r#"differ at 1: A 6 B 8; A "abc" B "axc""#),
        "{stdout}"
    );
    assert!(
        stdout.contains("2 cases compared, 1 with identical tokens; 3/4 token positions agree"),
        "{stdout}"
    );
    assert!(
        stdout.contains("run ra: chromium (chromium 9) · cases=smoke2&maxTokens=2"),
        "{stdout}"
    );
    assert!(stdout.contains("run rb: firefox (firefox 9)"), "{stdout}");

    let (code, stdout, _) = compare(&a, &same);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("2 cases compared, 2 with identical tokens; 4/4"),
        "{stdout}"
    );

    let (code, stdout, stderr) = compare(&a, &bad);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(
        stderr.contains(&format!("{}:1: not a results record", bad.display())),
        "{stderr}"
    );

    let out = Command::new(BIN)
        .args(["compare", "--run-a", "nope"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("no finished run with runId \"nope\"; finished runs: ra"),
        "{stderr}"
    );
}
