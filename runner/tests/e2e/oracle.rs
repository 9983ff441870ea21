//! The browsers' token ids held to the reading oracle (`scripts/ocrmodel/oracle.py`): the
//! page's loop run on onnxruntime CPU in Python, with its own preprocessing, chooser and
//! reading of the manifest, on the same images, tier, decoder and `maxTokens`. A case passes
//! when every choice the page made is the CPU's, except at a near tie the oracle reports
//! (docs/benchmark-protocol.md, "The reading oracle"), where the page may take the runner-up;
//! the CPU then reads on from the page's choice, so every later choice is still checked.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use ocr_bench_core::Config;
use serde_json::Value;

/// What the CPU read for one case, along the page's path through any near tie it accepted.
#[derive(Debug)]
pub struct Reading {
    pub id: String,
    pub token_ids: Vec<u64>,
    pub ended_on_eos: bool,
}

/// The oracle's JSON for these arguments, run once per test process for each.
fn oracle(root: &Path, arguments: Vec<String>) -> Value {
    static ANSWERS: OnceLock<Mutex<HashMap<Vec<String>, Value>>> = OnceLock::new();
    let mut answers = ANSWERS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(answer) = answers.get(&arguments) {
        return answer.clone();
    }
    let python = root.join(".venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: the reading oracle needs the project's Python (scripts/setup makes it)",
        python.display()
    );
    let output = Command::new(&python)
        .args(["-m", "ocrmodel.oracle"])
        .args(&arguments)
        .current_dir(root.join("scripts"))
        .output()
        .expect("running the reading oracle");
    let command = format!("python -m ocrmodel.oracle {}", arguments.join(" "));
    assert!(
        output.status.success(),
        "{command} exited {:?}:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{command}: not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    });
    answers.insert(arguments, answer.clone());
    answer
}

fn ids(value: &Value, what: &str) -> Vec<u64> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("{what} is not a list: {value}"))
        .iter()
        .map(|t| {
            t.as_u64()
                .unwrap_or_else(|| panic!("{what}: {t} is not a token id"))
        })
        .collect()
}

/// Every choice of a reading: its tokens, then EOS when it ended on one.
fn choices(tokens: &[u64], ended_on_eos: bool, eos: u64) -> Vec<u64> {
    let mut all = tokens.to_vec();
    if ended_on_eos {
        all.push(eos);
    }
    all
}

/// What the comparison of the cases saw, for the line it prints.
#[derive(Default)]
struct Tally {
    near_ties_taken: Vec<String>,
    /// The smallest lead of a CPU choice over its runner-up, and where.
    smallest_gap: Option<(f64, String)>,
}

/// One case: the page's tokens (`max_tokens` bounds them; fewer ended on `eos`) against the
/// oracle's reading `cpu` of it. At a difference that is a near tie whose runner-up the page
/// chose, `read_on(prefix)` is the oracle's reading of this case after the page's choices so
/// far; any other difference is the error, in words.
fn compare_case(
    id: &str,
    page_tokens: &[u64],
    max_tokens: usize,
    eos: u64,
    mut cpu: Value,
    read_on: &mut dyn FnMut(&[u64]) -> Value,
    tally: &mut Tally,
) -> Result<Reading, String> {
    let page = choices(page_tokens, page_tokens.len() < max_tokens, eos);
    let mut position = 0;
    loop {
        let cpu_tokens = ids(&cpu["tokenIds"], &format!("oracle case {id}"));
        let cpu_ended = cpu["ended"] == "eos";
        let expected = choices(&cpu_tokens, cpu_ended, eos);
        let forced = cpu["forced"].as_u64().expect("the oracle's forced") as usize;
        // Each choice's lead over its runner-up, from position `forced` on.
        let gaps: Vec<f64> = cpu["gaps"]
            .as_array()
            .expect("the oracle's gaps")
            .iter()
            .map(|g| g.as_f64().expect("a gap"))
            .collect();
        for (offset, &gap) in gaps.iter().enumerate() {
            if tally
                .smallest_gap
                .as_ref()
                .is_none_or(|(least, _)| gap < *least)
            {
                tally.smallest_gap = Some((gap, format!("case {id} position {}", forced + offset)));
            }
        }
        // Equal choices up to the shorter reading give equal lengths: each ends on EOS at the
        // same place, or both at maxTokens.
        while position < page.len().min(expected.len()) && page[position] == expected[position] {
            position += 1;
        }
        if position == page.len() && position == expected.len() {
            return Ok(Reading {
                id: id.to_owned(),
                token_ids: cpu_tokens,
                ended_on_eos: cpu_ended,
            });
        }
        let (Some(&chosen), Some(&cpu_choice)) = (page.get(position), expected.get(position))
        else {
            // Only readings that disagree on maxTokens get here.
            return Err(format!(
                "case {id}: the page made {} choice(s), the CPU {}: page {page:?}, CPU {expected:?}",
                page.len(),
                expected.len()
            ));
        };
        let tie = cpu["nearTies"]
            .as_array()
            .expect("the oracle's nearTies")
            .iter()
            .find(|t| t["position"] == position)
            .cloned();
        match tie {
            Some(tie) if tie["runnerUp"] == chosen => tally.near_ties_taken.push(format!(
                "case {id} position {position}: the page chose the runner-up {chosen} (CPU {cpu_choice}): {tie}"
            )),
            _ => {
                return Err(format!(
                    "case {id} position {position}: the page chose {chosen}, the CPU {cpu_choice} ({}); \
                     page {page:?}, CPU {expected:?} (EOS is {eos})",
                    tie.map_or_else(
                        || format!("a lead of {:.3e}, not a near tie", gaps[position - forced]),
                        |t| format!("a near tie {t} whose runner-up is not the page's")
                    )
                ))
            }
        }
        if chosen == eos {
            // The page stopped at the runner-up EOS: its reading is the CPU's up to here.
            return Ok(Reading {
                id: id.to_owned(),
                token_ids: page_tokens.to_vec(),
                ended_on_eos: true,
            });
        }
        cpu = read_on(&page[..=position]);
        position += 1;
    }
}

/// Each timed case's token ids against the oracle's for the run's tier, decoder, evaluation
/// set and `maxTokens`; panics, naming the case, the position and both choices, at the first
/// difference that is not a near tie. Prints what was compared and each near tie taken.
pub fn check_tokens(
    root: &Path,
    manifest_path: &Path,
    config: &Config,
    cases: &[Value],
) -> Vec<Reading> {
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(manifest_path)
            .unwrap_or_else(|e| panic!("{}: {e}", manifest_path.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", manifest_path.display()));
    let eos = manifest["tokens"]["eos"]
        .as_u64()
        .unwrap_or_else(|| panic!("{}: no tokens.eos", manifest_path.display()));
    let (tier, decoder) = (config.get("tier").unwrap(), config.get("decoder").unwrap());
    let max_tokens = config.max_tokens as usize;
    let base = vec![
        "--manifest".to_owned(),
        manifest_path.display().to_string(),
        "--cases".to_owned(),
        config.cases.clone(),
        "--tier".to_owned(),
        tier.clone(),
        "--decoder".to_owned(),
        decoder.clone(),
        "--max-tokens".to_owned(),
        max_tokens.to_string(),
    ];
    let configuration = format!(
        "tier={tier} decoder={decoder} cases={} maxTokens={max_tokens}",
        config.cases
    );
    let whole_set = oracle(root, base.clone());
    let near_tie = &whole_set["nearTie"];
    let results = whole_set["results"]
        .as_array()
        .expect("the oracle's results");
    let mut tally = Tally::default();
    let mut readings = Vec::new();
    for case in cases {
        let id = case["id"]
            .as_str()
            .unwrap_or_else(|| panic!("case id {} is not a string", case["id"]));
        let page_tokens = ids(&case["tokenIds"], &format!("case {id}: tokenIds"));
        let cpu = results
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("CPU oracle: no case {id} in {configuration}"))
            .clone();
        let mut read_on = |prefix: &[u64]| {
            let prefix: Vec<String> = prefix.iter().map(u64::to_string).collect();
            let mut arguments = base.clone();
            arguments.extend([
                "--case".to_owned(),
                id.to_owned(),
                "--prefix".to_owned(),
                prefix.join(","),
            ]);
            oracle(root, arguments)["results"][0].clone()
        };
        let reading = compare_case(
            id,
            &page_tokens,
            max_tokens,
            eos,
            cpu,
            &mut read_on,
            &mut tally,
        )
        .unwrap_or_else(|error| {
            panic!(
                "CPU oracle ({configuration}): {error}; a near tie is a lead of at most {near_tie}"
            )
        });
        readings.push(reading);
    }
    for taken in &tally.near_ties_taken {
        eprintln!("e2e: CPU oracle ({configuration}): near tie taken: {taken}");
    }
    eprintln!(
        "e2e: CPU oracle ({configuration}): {} case(s) agree, {} choice(s) compared, {} near tie(s) taken (lead ≤ {near_tie}); smallest lead {}",
        readings.len(),
        readings
            .iter()
            .map(|r| r.token_ids.len() + usize::from(r.ended_on_eos))
            .sum::<usize>(),
        tally.near_ties_taken.len(),
        tally
            .smallest_gap
            .map_or_else(|| "none".to_owned(), |(gap, at)| format!("{gap:.3e} at {at}"))
    );
    readings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const EOS: u64 = 2;

    /// An oracle reading as oracle.py prints one case.
    fn cpu(tokens: &[u64], ended: &str, forced: usize, gaps: &[f64], near_ties: Value) -> Value {
        json!({ "id": "1", "tokenIds": tokens, "ended": ended, "forced": forced, "gaps": gaps,
                "nearTies": near_ties })
    }

    fn never(_: &[u64]) -> Value {
        panic!("no near tie was taken, so nothing is read on")
    }

    #[test]
    fn the_same_choices_agree_to_eos_and_to_max_tokens() {
        let mut tally = Tally::default();
        let read = cpu(&[10, 11], "eos", 0, &[5.0, 4.0, 3.0], json!([]));
        let reading = compare_case("1", &[10, 11], 8, EOS, read, &mut never, &mut tally).unwrap();
        assert_eq!(
            (reading.token_ids, reading.ended_on_eos),
            (vec![10, 11], true)
        );
        assert_eq!(tally.smallest_gap.as_ref().unwrap().0, 3.0);
        let read = cpu(&[10, 11], "maxTokens", 0, &[5.0, 4.0], json!([]));
        let reading = compare_case("1", &[10, 11], 2, EOS, read, &mut never, &mut tally).unwrap();
        assert!(!reading.ended_on_eos);
    }

    #[test]
    fn another_token_or_an_early_eos_is_refused_with_the_cpus_lead() {
        let read = || cpu(&[10, 11], "eos", 0, &[5.0, 4.0, 3.0], json!([]));
        let error = compare_case(
            "1",
            &[10, 12],
            8,
            EOS,
            read(),
            &mut never,
            &mut Tally::default(),
        )
        .unwrap_err();
        assert!(
            error.starts_with("case 1 position 1: the page chose 12, the CPU 11 (a lead of 4.000e0, not a near tie)"),
            "{error}"
        );
        let error = compare_case(
            "1",
            &[10],
            8,
            EOS,
            read(),
            &mut never,
            &mut Tally::default(),
        )
        .unwrap_err();
        assert!(error.contains("the page chose 2, the CPU 11"), "{error}");
        // The page ran to maxTokens where the CPU chose EOS.
        let read = cpu(&[10], "eos", 0, &[5.0, 4.0], json!([]));
        let error = compare_case(
            "1",
            &[10, 11],
            2,
            EOS,
            read,
            &mut never,
            &mut Tally::default(),
        )
        .unwrap_err();
        assert!(error.contains("the page chose 11, the CPU 2"), "{error}");
        // A reading of another maxTokens than the page's.
        let read = cpu(&[10, 11, 12], "maxTokens", 0, &[5.0, 4.0, 3.0], json!([]));
        let error = compare_case(
            "1",
            &[10, 11],
            2,
            EOS,
            read,
            &mut never,
            &mut Tally::default(),
        )
        .unwrap_err();
        assert!(
            error.contains("the page made 2 choice(s), the CPU 3"),
            "{error}"
        );
    }

    #[test]
    fn a_near_tie_taken_is_counted_and_read_on_from_the_pages_choice() {
        let tie = json!([{ "position": 1, "chosen": 11, "runnerUp": 12, "gap": 0.0004 }]);
        let read = cpu(
            &[10, 11, 13],
            "eos",
            0,
            &[5.0, 0.0004, 3.0, 2.0],
            tie.clone(),
        );
        let mut asked = Vec::new();
        let mut read_on = |prefix: &[u64]| {
            asked.push(prefix.to_vec());
            cpu(&[10, 12, 14], "eos", 2, &[6.0, 1.0], json!([]))
        };
        let mut tally = Tally::default();
        let reading = compare_case(
            "1",
            &[10, 12, 14],
            8,
            EOS,
            read.clone(),
            &mut read_on,
            &mut tally,
        )
        .unwrap();
        assert_eq!(asked, [vec![10, 12]]);
        assert_eq!(reading.token_ids, [10, 12, 14]);
        assert_eq!(tally.near_ties_taken.len(), 1);
        assert_eq!(tally.smallest_gap.as_ref().unwrap().0, 0.0004);

        // After the tie every later choice is still checked.
        let mut read_on = |_: &[u64]| cpu(&[10, 12, 14], "eos", 2, &[6.0, 1.0], json!([]));
        let error = compare_case(
            "1",
            &[10, 12, 15],
            8,
            EOS,
            read.clone(),
            &mut read_on,
            &mut Tally::default(),
        )
        .unwrap_err();
        assert!(
            error
                .starts_with("case 1 position 2: the page chose 15, the CPU 14 (a lead of 6.000e0"),
            "{error}"
        );

        // A tie whose runner-up is not the page's choice is no excuse.
        let error = compare_case(
            "1",
            &[10, 13],
            8,
            EOS,
            read.clone(),
            &mut never,
            &mut Tally::default(),
        )
        .unwrap_err();
        assert!(
            error.contains("whose runner-up is not the page's"),
            "{error}"
        );

        // The runner-up is EOS: the page's reading ends there.
        let tie = json!([{ "position": 1, "chosen": 11, "runnerUp": EOS, "gap": 0.0002 }]);
        let read = cpu(&[10, 11], "eos", 0, &[5.0, 0.0002, 3.0], tie);
        let reading =
            compare_case("1", &[10], 8, EOS, read, &mut never, &mut Tally::default()).unwrap();
        assert_eq!((reading.token_ids, reading.ended_on_eos), (vec![10], true));
    }
}
