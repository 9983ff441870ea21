//! `ocr-bench plan` and `ocr-bench table`, the steps of `bench/decode-combos` that need the
//! core, on the committed runs of `tests/data/combos/`: four combinations in Firefox on
//! lavapipe (`cases=smoke2&maxTokens=4`, one round each), made by
//! `bench/decode-combos --only --base 'cases=smoke2&maxTokens=4' 'poll=kick'
//! 'choose=gpu&sync=4&poll=kick' 'decoder=nbits-int4&choose=gpu&sync=4&poll=kick'`.
//! Further rounds and other tokens are those files with their figures edited.

use std::path::{Path, PathBuf};
use std::process::Command;

use ocr_bench::combos::table::{
    load_combination, parse_combination, table, Combination, Tokens, DEFAULT_NCER_TOLERANCE,
};
use ocr_bench::table::Format;
use ocr_bench_core::build_summary::token_latencies;
use ocr_bench_core::latency::latency_stats;
use ocr_bench_core::record::CaseProbe;
use ocr_bench_core::stats::median;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");

fn fixture(n: usize) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/combos/{n:02}.jsonl"))
}

fn records(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The fixture's own summary, read as plain JSON (not through the code under test).
fn summary(file: &Path) -> Value {
    records(file)
        .into_iter()
        .find(|r| r["kind"] == "result")
        .expect("a result record")["summary"]
        .clone()
}

fn p50(summary: &Value, figure: &str) -> f64 {
    summary["decodeProbe"][figure]["p50Ms"].as_f64().unwrap()
}

fn all() -> Vec<Combination> {
    (1..=4)
        .map(|n| load_combination(&fixture(n)).unwrap())
        .collect()
}

/// A fixture's records as a further round: a new run id, its figures edited by `edit`.
fn round_of(file: &Path, n: usize, edit: impl Fn(&mut Value)) -> String {
    let mut out = String::new();
    let old = summary(file)["runId"].as_str().unwrap().to_owned();
    let new = format!("{old}-round-{n}");
    for mut record in records(file) {
        if record["runId"] == old.as_str() {
            record["runId"] = new.as_str().into();
        }
        if record["kind"] == "result" {
            record["summary"]["runId"] = new.as_str().into();
            edit(&mut record["summary"]);
        }
        out.push_str(&record.to_string());
        out.push('\n');
    }
    out
}

/// The per-token p50 of a run's cases with `k` steps per readback, by the core's definition.
fn batched_p50(summary: &Value, k: u32) -> f64 {
    let mut latencies = Vec::new();
    for case in summary["results"].as_array().expect("results") {
        let mut probe: CaseProbe =
            serde_json::from_value(case["decodeProbe"].clone()).expect("a decode probe");
        probe.steps_per_readback = Some(k);
        latencies.extend(token_latencies(&probe));
    }
    latency_stats(&latencies).expect("steps").p50_ms
}

fn set_p50(summary: &mut Value, ms: f64) {
    summary["decodeProbe"]["tokenLatency"]["p50Ms"] = ms.into();
}

#[test]
fn the_committed_runs_side_by_side_against_the_seeds_loop() {
    let combinations = all();
    let t = table(&combinations[0], &combinations, DEFAULT_NCER_TOLERANCE);
    let labels: Vec<&str> = t.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "decoder=baseline&poll=none&choose=cpu&sync=1",
            "decoder=baseline&poll=kick&choose=cpu&sync=1",
            "decoder=baseline&poll=kick&choose=gpu&sync=4",
            "decoder=nbits-int4&poll=kick&choose=gpu&sync=4",
        ]
    );
    assert_eq!(t.common, "cases=smoke2&maxTokens=4");
    assert!(t.rows[0].is_reference && t.rows[1..].iter().all(|r| !r.is_reference));

    let seed = p50(&summary(&fixture(1)), "tokenLatency");
    for (n, row) in (1..=4).zip(&t.rows) {
        let s = summary(&fixture(n));
        assert_eq!(row.rounds, 1);
        // Runs 3 and 4 (sync=4) predate the probe's stepsPerReadback: their per-token p50
        // is each batch's time shared by its steps, recomputed from the cases.
        let token_p50 = if n >= 3 {
            batched_p50(&s, 4)
        } else {
            p50(&s, "tokenLatency")
        };
        assert_eq!(row.token_p50_ms, Some(token_p50), "{n}");
        assert_eq!(row.submit_p50_ms, Some(p50(&s, "submit")), "{n}");
        assert_eq!(row.sync_p50_ms, Some(p50(&s, "sync")), "{n}");
        assert_eq!(row.ms_per_step, s["msPerToken"].as_f64(), "{n}");
        assert_eq!(row.ncer, s["nCER"].as_f64(), "{n}");
        let speedup = seed / token_p50;
        assert!((row.speedup.unwrap() - speedup).abs() < 1e-12, "{n}");
        // Greedy choice is deterministic: every path read the seed's tokens on smoke2.
        assert_eq!(row.tokens, Tokens::Same, "{n}");
    }
    assert_eq!(t.rows[0].speedup, Some(1.0));

    let fastest = t
        .rows
        .iter()
        .min_by(|a, b| a.token_p50_ms.unwrap().total_cmp(&b.token_p50_ms.unwrap()))
        .unwrap();
    assert_eq!(t.fastest_with_the_seeds_tokens(), Some(fastest));
    assert_eq!(t.fastest_within_ncer(), Some(fastest));

    let text = t.render();
    assert!(text.contains("| combination | rounds | per-token p50 | submit p50 | sync p50 | ms/step | nCER | seed's tokens | seed/this |"), "{text}");
    assert!(
        text.contains(&format!(
            "| decoder=baseline&poll=none&choose=cpu&sync=1 (the seed's loop) | 1 | {seed:.2} |"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "fastest with the seed's tokens: {}: per-token p50 {:.2} ms",
            fastest.label,
            fastest.token_p50_ms.unwrap()
        )),
        "{text}"
    );
    assert!(text.contains("Common to every combination: cases=smoke2&maxTokens=4"));
}

#[test]
fn a_file_not_in_the_list_is_set_first_as_the_reference() {
    let combinations = all();
    let t = table(&combinations[0], &combinations[2..], DEFAULT_NCER_TOLERANCE);
    assert_eq!(t.rows.len(), 3);
    assert!(t.rows[0].is_reference);
    assert_eq!(t.rows[0].file, fixture(1));
}

#[test]
fn every_figure_is_the_median_over_the_rounds() {
    assert_eq!(median([Some(5.0), None, Some(1.0), Some(3.0)]), Some(3.0));
    assert_eq!(median([Some(5.0), Some(1.0)]), Some(3.0));
    assert_eq!(median([None, Some(f64::NAN)]), None);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kick.jsonl");
    let text = [5.0, 1.0, 4.0]
        .iter()
        .enumerate()
        .map(|(n, ms)| round_of(&fixture(2), n, |s| set_p50(s, *ms)))
        .collect::<String>();
    std::fs::write(&file, &text).unwrap();
    let kick = parse_combination(&text, &file).unwrap();
    assert_eq!(kick.rounds.len(), 3);

    let seed = load_combination(&fixture(1)).unwrap();
    let t = table(&seed, &[seed.clone(), kick], DEFAULT_NCER_TOLERANCE);
    assert_eq!(t.rows[1].rounds, 3);
    assert_eq!(t.rows[1].token_p50_ms, Some(4.0));
    let seed_p50 = p50(&summary(&fixture(1)), "tokenLatency");
    assert_eq!(t.rows[1].speedup, Some(seed_p50 / 4.0));
    assert!(t.render().contains("| 3 | 4.00 |"));
}

#[test]
fn a_round_that_read_other_tokens_counts_its_cases_and_is_not_the_fastest_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("int4.jsonl");
    // Round 0 as recorded; round 1 fastest of all, but its second case read another token.
    let text = round_of(&fixture(4), 0, |_| {})
        + &round_of(&fixture(4), 1, |s| {
            set_p50(s, 0.01);
            let tokens = &mut s["results"][1]["tokenIds"][0];
            *tokens = (tokens.as_i64().unwrap() + 1).into();
        });
    std::fs::write(&file, text).unwrap();
    let int4 = load_combination(&file).unwrap();
    let mut combinations = all();
    combinations[3] = int4;
    let t = table(&combinations[0], &combinations, DEFAULT_NCER_TOLERANCE);
    let id = summary(&fixture(4))["results"][1]["id"].clone();
    assert_eq!(
        t.rows[3].tokens,
        Tokens::Differ { cases: 1, of: 2 },
        "case {id}"
    );
    assert!(t.render().contains("| no (1 of 2 cases differ) |"));
    assert_ne!(t.fastest_with_the_seeds_tokens().unwrap().file, file);
    // Its nCER (the recorded one, both rounds) is the seed's: the fastest within 0.005.
    assert_eq!(t.fastest_within_ncer().unwrap().file, file);
    let strict = table(&combinations[0], &combinations, -1.0);
    assert_eq!(strict.fastest_within_ncer(), None);
}

#[test]
fn a_file_that_is_not_one_combination_is_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let mixed = dir.path().join("mixed.jsonl");
    let text = round_of(&fixture(1), 0, |_| {}) + &round_of(&fixture(2), 1, |_| {});
    std::fs::write(&mixed, text).unwrap();
    let message = load_combination(&mixed).unwrap_err().0;
    assert!(
        message.contains("cases=smoke2&maxTokens=4&poll=kick")
            && message.contains("give each combination its own file"),
        "{message}"
    );

    let unfinished = dir.path().join("unfinished.jsonl");
    let start: String = records(&fixture(1))
        .iter()
        .filter(|r| r["kind"] != "result")
        .map(|r| format!("{r}\n"))
        .collect();
    std::fs::write(&unfinished, start).unwrap();
    let message = load_combination(&unfinished).unwrap_err().0;
    assert!(message.contains("has no finished run"), "{message}");

    let missing = load_combination(&dir.path().join("absent.jsonl"))
        .unwrap_err()
        .0;
    assert!(message.contains("unfinished.jsonl"));
    assert!(missing.starts_with("reading "), "{missing}");
}

#[test]
fn rounds_of_one_combination_on_two_targets_are_refused_naming_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let remote: String = round_of(&fixture(1), 1, |_| {})
        .lines()
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).unwrap();
            record["target"] = "webdriver:http://grid.example:4444".into();
            format!("{record}\n")
        })
        .collect();
    let alone = dir.path().join("remote.jsonl");
    std::fs::write(&alone, &remote).unwrap();
    let combination = load_combination(&alone).unwrap();
    assert_eq!(
        combination.target.as_deref(),
        Some("webdriver:http://grid.example:4444")
    );
    // The committed files predate the record's `target`: their runs ran locally.
    assert_eq!(all()[0].target.as_deref(), Some("local"));
    let mixed = dir.path().join("mixed.jsonl");
    std::fs::write(&mixed, round_of(&fixture(1), 0, |_| {}) + &remote).unwrap();
    let message = load_combination(&mixed).unwrap_err().0;
    assert!(
        message.contains("on webdriver:http://grid.example:4444")
            && message.contains("give each combination its own file"),
        "{message}"
    );
}

#[test]
fn the_table_command_prints_the_table_and_exits_2_on_bad_input() {
    let output = Command::new(BIN)
        .arg("table")
        .arg("--against")
        .arg(fixture(1))
        .args((1..=4).map(fixture))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with("| decoder="))
            .count(),
        12,
        "four rows in each of the three tables: {stdout}"
    );
    assert!(
        stdout.contains("fastest with the seed's tokens: "),
        "{stdout}"
    );

    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let output = Command::new(BIN)
        .args(["table", "--against"])
        .arg(fixture(1))
        .arg(&empty)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("has no finished run"));

    let output = Command::new(BIN)
        .args(["table", "--ncer-within=-0.1", "--against"])
        .arg(fixture(1))
        .arg(fixture(2))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("allowed: a number from 0"), "{stderr}");
}

#[test]
fn the_plan_command_refuses_a_bad_combination_with_the_cores_message() {
    let output = Command::new(BIN)
        .args(["plan", "--base", "cases=smoke2", "--"])
        .args([
            "choose=cpu&poll=none&decoder=baseline",
            "poll=kick",
            "poll=kick&kickMs=0.5",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "cases=smoke2\ncases=smoke2&poll=kick\n"
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("runs once"));

    for (combination, words) in [
        ("sync=16&poll=kick", "sync=16 needs choose=gpu"),
        ("decoder=int2", "nbits-int4"),
        ("speed=max", "unknown parameter `speed`"),
    ] {
        let output = Command::new(BIN)
            .args(["plan", "--base", "cases=smoke2", "poll=kick", combination])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{combination}: {stderr}");
        assert!(stderr.contains("combination 2"), "{stderr}");
        assert!(stderr.contains(words), "{combination}: {stderr}");
        assert!(output.stdout.is_empty(), "nothing to run: {combination}");
    }
}

/// A run whose `verify=wasm` failed, recorded in Firefox (`cases=smoke2&maxTokens=4&verify=wasm`
/// with `OCR_BENCH_INJECT=diverge-token@decode:2`: case 2's first token replaced).
fn failed_verification() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/verify-failed-smoke2.jsonl")
}

#[test]
fn a_combination_whose_verification_failed_is_marked_and_never_the_fastest() {
    let against = load_combination(&fixture(1)).unwrap();
    // The failed run made the fastest by far, its nCER within any tolerance: still not chosen.
    let scratch = tempfile::tempdir().unwrap();
    let fast = scratch.path().join("failed-but-fast.jsonl");
    let text: String = records(&failed_verification())
        .into_iter()
        .map(|mut record| {
            if record["kind"] == "result" {
                set_p50(&mut record["summary"], 0.01);
            }
            record.to_string() + "\n"
        })
        .collect();
    std::fs::write(&fast, text).unwrap();
    let failed = load_combination(&fast).unwrap();
    assert!(failed.rounds[0].verification_failed);
    assert!(!against.rounds[0].verification_failed);
    let t = table(&against, &[against.clone(), failed], 1.0);
    assert_eq!(
        t.rows
            .iter()
            .map(|r| r.failed_verification_rounds)
            .collect::<Vec<_>>(),
        [0, 1]
    );
    assert_eq!(t.fastest_within_ncer().unwrap().file, fixture(1));
    let text = t.render();
    assert!(
        text.contains("verify=wasm (VERIFICATION FAILED in 1 of 1 rounds) | 1 | 0.01 |"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "VERIFICATION FAILED (verify=wasm: a case left the WASM reference), its figures not a result and never the fastest: verify=wasm ({})",
            fast.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("fastest with nCER within 1 of the seed's loop: verify=none"),
        "{text}"
    );
}

/// A case's figure, read as plain JSON.
fn case_ms(case: &Value, figure: &str) -> f64 {
    case[figure].as_f64().unwrap()
}

#[test]
fn first_token_and_case_are_the_steady_cases_p50_with_the_first_case_apart() {
    // smoke2 without warm-up: the first case compiles the pipelines, the second is steady.
    let seed_summary = summary(&fixture(1));
    let cases = seed_summary["results"].as_array().unwrap();
    assert!(seed_summary["warmupResults"].as_array().unwrap().is_empty());
    let seed = load_combination(&fixture(1)).unwrap();
    let kick = load_combination(&fixture(2)).unwrap();
    let t = table(&seed, &[seed.clone(), kick], DEFAULT_NCER_TOLERANCE);
    let f = &t.rows[0].first_token;
    assert_eq!(
        f.ttft_p50_ms,
        Some(case_ms(&cases[1], "timeToFirstTokenMs"))
    );
    assert_eq!(f.vision_p50_ms, Some(case_ms(&cases[1], "visionMs")));
    assert_eq!(f.prefill_p50_ms, Some(case_ms(&cases[1], "prefillMs")));
    assert_eq!(f.case_p50_ms, Some(case_ms(&cases[1], "totalMs")));
    assert_eq!(
        f.first_case_ttft_ms,
        Some(case_ms(&cases[0], "timeToFirstTokenMs"))
    );
    assert_eq!(f.first_case_ms, Some(case_ms(&cases[0], "totalMs")));
    assert_eq!(t.rows[0].ttft_speedup, Some(1.0));
    let kick_cases = summary(&fixture(2))["results"].as_array().unwrap().clone();
    let kick_ttft = case_ms(&kick_cases[1], "timeToFirstTokenMs");
    assert_eq!(
        t.rows[1].ttft_speedup,
        Some(case_ms(&cases[1], "timeToFirstTokenMs") / kick_ttft)
    );
    let rendered = t.render();
    assert!(rendered.contains("| combination | first token | vision | prefill | case |"));
    assert!(rendered.contains(&format!("| {:.2} |", kick_ttft)));

    // With a warm-up run, that run is the first case and every timed case is steady.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("warm.jsonl");
    let text = round_of(&fixture(1), 1, |s| {
        let first = s["results"][0].clone();
        let mut warm = first.clone();
        warm["totalMs"] = 99999.0.into();
        warm["timeToFirstTokenMs"] = 8888.0.into();
        s["warmupResults"] = Value::Array(vec![warm]);
    });
    std::fs::write(&file, &text).unwrap();
    let warm = parse_combination(&text, &file).unwrap();
    let f = &warm.rounds[0].first_token;
    assert_eq!(f.first_case_ms, Some(99999.0));
    assert_eq!(f.first_case_ttft_ms, Some(8888.0));
    let both: Vec<f64> = cases.iter().map(|c| case_ms(c, "totalMs")).collect();
    assert_eq!(f.case_p50_ms, latency_stats(&both).map(|s| s.p50_ms));
}

/// A round whose steady cases counted `step`, `prefill` and `vision` dispatches (medians).
fn with_dispatches(file: &Path, n: usize, step: f64, prefill: f64, vision: f64) -> String {
    round_of(file, n, |s| {
        s["pipelineCompilation"]["steady"]["dispatches"] =
            serde_json::json!({ "stepP50": step, "prefillP50": prefill, "visionP50": vision });
    })
}

#[test]
fn dispatches_are_the_rounds_median_against_the_seeds_and_absent_counts_are_dashes() {
    let dir = tempfile::tempdir().unwrap();
    let seed_file = dir.path().join("seed.jsonl");
    std::fs::write(
        &seed_file,
        with_dispatches(&fixture(1), 1, 600.0, 640.0, 90.0),
    )
    .unwrap();
    // Two rounds: the median of two counts ends in .5.
    let captured_file = dir.path().join("captured.jsonl");
    let text = with_dispatches(&fixture(2), 1, 300.0, 640.0, 90.0)
        + &with_dispatches(&fixture(2), 2, 301.0, 640.0, 90.0);
    std::fs::write(&captured_file, &text).unwrap();
    let seed = load_combination(&seed_file).unwrap();
    let captured = load_combination(&captured_file).unwrap();
    // A record made before the count: no dispatches.
    let older = load_combination(&fixture(3)).unwrap();
    assert_eq!(older.rounds[0].dispatches, None);
    let t = table(
        &seed,
        &[seed.clone(), captured, older],
        DEFAULT_NCER_TOLERANCE,
    );
    assert_eq!(t.rows[0].dispatches.step_p50, Some(600.0));
    assert_eq!(t.rows[1].dispatches.step_p50, Some(300.5));
    assert_eq!(t.rows[1].dispatches.prefill_p50, Some(640.0));
    assert_eq!(t.rows[1].step_dispatch_ratio, Some(600.0 / 300.5));
    assert_eq!(t.rows[2].dispatches.step_p50, None);
    assert_eq!(t.rows[2].step_dispatch_ratio, None);
    let rendered = t.render();
    assert!(
        rendered.contains("| combination | dispatches / step | dispatches / prefill | dispatches / vision | dispatches / step seed/this |"),
        "{rendered}"
    );
    let row = |label: &str| {
        rendered
            .lines()
            .find(|l| l.starts_with(&format!("| {label}")) && l.matches('|').count() == 6)
            .unwrap_or_else(|| panic!("no dispatch row for {label}:\n{rendered}"))
            .to_owned()
    };
    assert!(
        row(&t.rows[0].label).ends_with("(the seed's loop) | 600 | 640 | 90 | 1.00 |"),
        "{rendered}"
    );
    assert!(
        row(&t.rows[1].label).ends_with("| 300.5 | 640 | 90 | 2.00 |"),
        "{rendered}"
    );
    assert!(
        row(&t.rows[2].label).ends_with("| - | - | - | - |"),
        "{rendered}"
    );
}

#[test]
fn csv_holds_the_three_tables_as_one_and_html_the_same_figures() {
    let combinations = all();
    let t = table(&combinations[0], &combinations, DEFAULT_NCER_TOLERANCE);
    let csv = t.render_as(Format::Csv);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + combinations.len(), "{csv}");
    assert!(
        lines[0].starts_with("combination,rounds,per-token p50 (ms),")
            && lines[0].contains(",first token (ms),")
            && lines[0].ends_with(",dispatches / step seed/this (ratio)"),
        "{csv}"
    );
    // The combination named once: the later tables' own name columns are left out.
    assert_eq!(lines[0].matches("combination").count(), 1, "{csv}");
    let token_p50 = format!("{:.2}", t.rows[1].token_p50_ms.unwrap());
    assert!(lines[2].split(',').any(|field| field == token_p50), "{csv}");
    let html = t.render_as(Format::Html);
    assert_eq!(html.matches("<table>").count(), 3, "{html}");
    assert!(
        html.contains(&format!("<td class=\"number\">{token_p50}</td>")),
        "{html}"
    );
    assert!(
        html.contains("<p>fastest with the seed's tokens: "),
        "{html}"
    );
    assert_eq!(t.render(), t.render_as(Format::Markdown));
}

/// A fixture's records as a further round whose browser started with `extra` (the `browser`
/// field of every record, as `run --chromium-switch`/`--firefox-pref` writes it).
fn round_started_with(file: &Path, n: usize, extra: Value) -> String {
    round_of(file, n, |_| {})
        .lines()
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).unwrap();
            if record["browser"].is_object() {
                record["browser"]["extra"] = extra.clone();
            }
            format!("{record}\n")
        })
        .collect()
}

#[test]
fn a_combination_started_with_switches_of_its_own_is_marked_on_every_table_and_under_them() {
    let dir = tempfile::tempdir().unwrap();
    let diagnosed = dir.path().join("no-validation.jsonl");
    let extra = serde_json::json!({ "firefoxPrefs": ["dom.webgpu.testing=true"] });
    std::fs::write(&diagnosed, round_started_with(&fixture(2), 1, extra)).unwrap();
    let combination = load_combination(&diagnosed).unwrap();
    assert_eq!(
        combination.extra.describe(),
        "dom.webgpu.testing=true",
        "read from the records' browser"
    );
    let against = load_combination(&fixture(1)).unwrap();
    let t = table(
        &against,
        &[against.clone(), combination],
        DEFAULT_NCER_TOLERANCE,
    );
    let marked = "poll=kick [started with dom.webgpu.testing=true]";
    assert_eq!(t.rows[1].label, marked);
    assert_eq!(t.rows[0].label, "poll=none", "a plain row is not marked");
    // The decode, first-token and dispatch tables each name the row so, and the note under
    // them; CSV holds the three side by side, the row named once.
    for (format, times) in [(Format::Markdown, 4), (Format::Html, 4), (Format::Csv, 1)] {
        let text = t.render_as(format);
        assert_eq!(text.matches(marked).count(), times, "{format:?}: {text}");
    }
    assert!(
        t.render().contains(&format!(
            "started with switches or prefs of the user's own, a diagnosis and not what a user's browser runs: {marked}"
        )),
        "{}",
        t.render()
    );
    // Rounds started otherwise are not one combination.
    let mixed = dir.path().join("mixed.jsonl");
    let plain = round_of(&fixture(2), 0, |_| {});
    std::fs::write(
        &mixed,
        plain + &std::fs::read_to_string(&diagnosed).unwrap(),
    )
    .unwrap();
    let message = load_combination(&mixed).unwrap_err().0;
    assert!(
        message.contains("started with dom.webgpu.testing=true after runs started with no switch or pref of the user's own"),
        "{message}"
    );
}
