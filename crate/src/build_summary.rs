//! The page's summary built from what it measured: one case's result from its timings and
//! decode probe ([`case_result`]), and the whole summary from the cases, the memory samples,
//! the completion floors and the environment ([`build_summary`]). Every statistic of
//! [`crate::record`] is computed here; the page only gathers.
//!
//! - A token's latency is its step's `submitMs + syncMs` plus the `chooseMs` that picked it
//!   (`chooseMs[step + 1]`; `chooseMs[0]` is the prefill's choice).
//! - `timeToFirstTokenMs = visionMs + prefillMs + chooseMs[0]`.
//! - `tokensPerSecond = 1000 · decodeSteps / decodeMs`; `msPerToken` over the run is the
//!   core's [`crate::summary`] figure, per repeat `Σ decodeMs / Σ decodeSteps`.
//! - A decode step's GPU wait, which the completion check compares with the floor, is
//!   `submitMs + syncMs` (run() plus the logits' readback, the span the timer quantises).
//! - `verify=wasm`: the page's reference decode is checked by [`crate::verification`], and its
//!   answer is the summary's `verification`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::Config;
use crate::error::{CoreError, Result};
use crate::latency::{completion_check, latency_stats, mean_interval, LatencyStats};
use crate::per_style::per_style;
use crate::record::*;
use crate::score::score_case;
use crate::summary::{summarize, CaseInput, SummaryOptions};
use crate::verification::{verification, VerificationInput};

/// What the page measured for one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CaseRun {
    pub id: String,
    pub expected: String,
    /// The decoded text.
    pub text: String,
    pub token_ids: Vec<i64>,
    pub vision_ms: f64,
    pub prefill_ms: f64,
    pub decode_ms: f64,
    pub total_ms: f64,
    pub decode_steps: usize,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    pub vision_call_ms: Option<f64>,
    /// The compute dispatches of the vision encoder's `run()` for this case; null where none
    /// ran (`scope=decoder`).
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    pub vision_dispatches: Option<u32>,
    pub probe: CaseProbe,
    /// Null for a warm-up run.
    pub repeat: Option<u32>,
    /// False in the decoder-only scope: distance, characters and exact become null.
    pub accuracy_applicable: bool,
    /// `pool` above 1: which of the decoder realms (0-based) read the case.
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    pub decoder_realm: Option<u32>,
    /// The case's style, where its set's `cases.json` names one.
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    pub style: Option<String>,
}

/// What the page gathered for the summary, besides its cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SummaryInput {
    pub run_id: String,
    pub config: Config,
    pub capability: Capability,
    pub manifest: ManifestUse,
    pub results: Vec<CaseResult>,
    pub warmup_results: Vec<CaseResult>,
    pub memory_samples: Vec<MemorySample>,
    pub environment: Environment,
    pub session_ms: std::collections::BTreeMap<String, f64>,
    pub wall_ms: f64,
    pub timing_notes: Vec<String>,
    pub completion_floors: CompletionFloors,
    #[serde(default)]
    #[cfg_attr(test, ts(type = "unknown", optional))]
    pub profile: Value,
    /// The realms' GPU bytes and the leak check, as the page gathered them.
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    pub gpu_memory: Option<crate::record::GpuMemorySummary>,
    /// Every session the page's realm created (browser/sessions.js).
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    pub sessions: Option<Vec<SessionRecord>>,
    /// `verify=wasm`: the reference decode of every timed case, in the order of `results`.
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    pub verification: Option<VerificationInput>,
    /// `pool` above 1: the decoder-run phase's wall time and each realm's last memory report.
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    pub pool: Option<PoolInput>,
}

/// What the page measured of a pool of decoder realms (`pool` above 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolInput {
    /// From the first case taken from the queue to the last one read: the page's time.
    pub wall_ms: f64,
    /// Each realm's memory (GPU bytes of its device, WASM heaps) as it last reported it, by
    /// realm index; with realm=page, one shared report.
    #[cfg_attr(test, ts(type = "unknown[]"))]
    pub realm_memory: Vec<Value>,
}

/// Each realm's completion-floor rounds, as measured (null where it did not run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct CompletionFloors {
    pub page: Option<FloorRounds>,
    pub worker: Option<FloorRounds>,
    /// The decoder worker's (`realm=worker`); absent from pages older than it.
    #[serde(default, rename = "decoderWorker")]
    #[cfg_attr(test, ts(optional = nullable))]
    pub decoder_worker: Option<FloorRounds>,
}

/// `submit + sync + the choice that read it`, one per decode step; NaN where a step has no
/// sync or choice time (the statistics drop it, as the page's `Number.isFinite` did).
pub fn token_latencies(probe: &CaseProbe) -> Vec<f64> {
    let steps: Vec<f64> = probe
        .submit_ms
        .iter()
        .enumerate()
        .map(|(step, submit)| {
            let sync = probe.sync_ms.get(step).copied().unwrap_or(f64::NAN);
            let choose = probe.choose_ms.get(step + 1).copied().unwrap_or(f64::NAN);
            submit + sync + choose
        })
        .collect();
    // With K steps queued per readback the batch's one wait sits on its last step, so a
    // step's own figure says nothing (measured: a p50 of 4.85 ms for steps of 5.7 s); each
    // step of a batch gets the batch's time over its steps. Batches start right after the
    // prefill's token and hold K steps, the last fewer where EOS or maxTokens ends it.
    let batch = probe.steps_per_readback.unwrap_or(1).max(1) as usize;
    steps
        .chunks(batch)
        .flat_map(|chunk| {
            let share = chunk.iter().sum::<f64>() / chunk.len() as f64;
            std::iter::repeat_n(share, chunk.len())
        })
        .collect()
}

fn per_second(steps: usize, decode_ms: f64) -> Option<f64> {
    (steps > 0 && decode_ms > 0.0).then(|| 1000.0 * steps as f64 / decode_ms)
}

fn finite(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

/// One case's result: the seed's fields, the score, and the decode probe's figures.
pub fn case_result(run: CaseRun) -> CaseResult {
    let score = score_case(&run.expected, &run.text);
    let applicable = run.accuracy_applicable;
    let latencies = token_latencies(&run.probe);
    let first_choice = run.probe.choose_ms.first().copied().unwrap_or(0.0);
    CaseResult {
        id: run.id,
        expected: run.expected,
        actual: run.text.clone(),
        distance: applicable.then_some(score.distance),
        characters: applicable.then_some(score.characters),
        exact: applicable.then_some(score.exact),
        trailing_extras: applicable.then_some(score.trailing_extras),
        tokens: run.token_ids.len(),
        text: run.text,
        vision_ms: run.vision_ms,
        prefill_ms: run.prefill_ms,
        decode_ms: run.decode_ms,
        total_ms: run.total_ms,
        token_ids: run.token_ids,
        decode_steps: run.decode_steps,
        vision_call_ms: run.vision_call_ms,
        time_to_first_token_ms: run.vision_ms + run.prefill_ms + first_choice,
        token_latency: latency_stats(&latencies),
        tokens_per_second: per_second(run.decode_steps, run.decode_ms),
        dispatches: case_dispatches(run.vision_dispatches, &run.probe),
        decode_probe: run.probe,
        repeat: run.repeat,
        decoder_realm: run.decoder_realm,
        style: run.style,
        extra: Extra::new(),
    }
}

/// A case's dispatches, where the page counted its prefill's.
fn case_dispatches(vision: Option<u32>, probe: &CaseProbe) -> Option<CaseDispatches> {
    let steps: Vec<f64> = probe
        .step_dispatches
        .iter()
        .flatten()
        .map(|&count| f64::from(count))
        .collect();
    probe.prefill_dispatches.map(|prefill| CaseDispatches {
        vision,
        prefill,
        step_p50: latency_stats(&steps).map(|s| s.p50_ms),
    })
}

/// Each dispatch figure's median over the runs that have it; `None` where none has a count.
fn dispatch_medians(runs: &[&CaseResult]) -> Option<DispatchMedians> {
    let counted: Vec<&CaseDispatches> = runs.iter().filter_map(|r| r.dispatches.as_ref()).collect();
    let median = |figure: fn(&CaseDispatches) -> Option<f64>| {
        latency_stats(&counted.iter().filter_map(|d| figure(d)).collect::<Vec<_>>())
            .map(|s| s.p50_ms)
    };
    (!counted.is_empty()).then(|| DispatchMedians {
        vision_p50: median(|d| d.vision.map(f64::from)),
        prefill_p50: median(|d| Some(f64::from(d.prefill))),
        step_p50: median(|d| d.step_p50),
    })
}

fn stats_of(runs: &[&CaseResult], value: impl Fn(&CaseResult) -> f64) -> Option<LatencyStats> {
    latency_stats(&runs.iter().map(|r| value(r)).collect::<Vec<_>>())
}

fn stats_over(
    runs: &[&CaseResult],
    values: impl Fn(&CaseResult) -> Vec<f64>,
) -> Option<LatencyStats> {
    latency_stats(&runs.iter().flat_map(|r| values(r)).collect::<Vec<_>>())
}

fn p50(stats: Option<LatencyStats>) -> Option<f64> {
    stats.map(|s| s.p50_ms)
}

fn steps_and_decode_ms(runs: &[&CaseResult]) -> (usize, f64) {
    runs.iter().fold((0, 0.0), |(steps, ms), r| {
        (steps + r.decode_steps, ms + r.decode_ms)
    })
}

fn token_stats(runs: &[&CaseResult]) -> Option<LatencyStats> {
    stats_over(runs, |r| token_latencies(&r.decode_probe))
}

fn run_probe(runs: &[&CaseResult], profile: &Value) -> RunProbe {
    let (steps, decode_ms) = steps_and_decode_ms(runs);
    let decoder = &profile["decoder"];
    let profiled_runs = decoder["runs"].as_f64().unwrap_or(0.0);
    let gpu_timestamps = decoder["gpuTimestamps"].as_bool().unwrap_or(false);
    RunProbe {
        token_latency: token_stats(runs),
        submit: stats_over(runs, |r| r.decode_probe.submit_ms.clone()),
        sync: stats_over(runs, |r| r.decode_probe.sync_ms.clone()),
        choose: stats_over(runs, |r| r.decode_probe.choose_ms.clone()),
        prefill_submit: stats_of(runs, |r| r.decode_probe.prefill_submit_ms),
        prefill_sync: stats_of(runs, |r| r.decode_probe.prefill_sync_ms),
        time_to_first_token: stats_of(runs, |r| r.time_to_first_token_ms),
        tokens_per_second: per_second(steps, decode_ms),
        gpu_ms_per_decoder_run: (gpu_timestamps && profiled_runs > 0.0)
            .then(|| decoder["gpuMs"].as_f64().unwrap_or(f64::NAN) / profiled_runs)
            .and_then(finite),
    }
}

fn repeat_figures(repeat: Option<u32>, runs: &[&CaseResult]) -> RepeatFigures {
    let (steps, decode_ms) = steps_and_decode_ms(runs);
    let token = token_stats(runs);
    RepeatFigures {
        repeat,
        case_p50_ms: p50(stats_of(runs, |r| r.total_ms)),
        vision_p50_ms: p50(stats_of(runs, |r| r.vision_ms)),
        prefill_p50_ms: p50(stats_of(runs, |r| r.prefill_ms)),
        time_to_first_token_p50_ms: p50(stats_of(runs, |r| r.time_to_first_token_ms)),
        token_p50_ms: token.as_ref().map(|s| s.p50_ms),
        token_p90_ms: token.as_ref().map(|s| s.p90_ms),
        ms_per_token: (steps > 0).then(|| decode_ms / steps as f64),
        tokens_per_second: per_second(steps, decode_ms),
    }
}

fn repeats(results: &[CaseResult], count: u32) -> Repeats {
    // Passes in the order they first appear.
    let mut passes: Vec<(Option<u32>, Vec<&CaseResult>)> = Vec::new();
    for run in results {
        match passes.iter_mut().find(|(repeat, _)| *repeat == run.repeat) {
            Some((_, runs)) => runs.push(run),
            None => passes.push((run.repeat, vec![run])),
        }
    }
    let per_repeat: Vec<RepeatFigures> = passes
        .iter()
        .map(|(repeat, runs)| repeat_figures(*repeat, runs))
        .collect();
    let interval = |figure: fn(&RepeatFigures) -> Option<f64>| {
        mean_interval(&per_repeat.iter().filter_map(figure).collect::<Vec<_>>())
    };
    let interval = RepeatIntervals {
        case_p50_ms: interval(|f| f.case_p50_ms),
        vision_p50_ms: interval(|f| f.vision_p50_ms),
        prefill_p50_ms: interval(|f| f.prefill_p50_ms),
        time_to_first_token_p50_ms: interval(|f| f.time_to_first_token_p50_ms),
        token_p50_ms: interval(|f| f.token_p50_ms),
        token_p90_ms: interval(|f| f.token_p90_ms),
        ms_per_token: interval(|f| f.ms_per_token),
        tokens_per_second: interval(|f| f.tokens_per_second),
    };
    // Greedy decoding is deterministic: a repeat that reads other tokens is a finding.
    let tokens_agree = results.iter().all(|run| {
        results
            .iter()
            .filter(|other| other.id == run.id)
            .all(|other| other.token_ids == run.token_ids)
    });
    Repeats {
        count,
        per_repeat,
        interval,
        tokens_agree,
    }
}

fn pipeline_compilation(ordered: &[&CaseResult]) -> Option<PipelineCompilation> {
    let (first, rest) = ordered.split_first()?;
    let first_token_step_ms = token_latencies(&first.decode_probe)
        .first()
        .copied()
        .and_then(finite);
    let steady = (!rest.is_empty()).then(|| SteadyState {
        runs: rest.len(),
        case_p50_ms: p50(stats_of(rest, |r| r.total_ms)),
        vision_p50_ms: p50(stats_of(rest, |r| r.vision_ms)),
        prefill_p50_ms: p50(stats_of(rest, |r| r.prefill_ms)),
        token_p50_ms: p50(token_stats(rest)),
        dispatches: dispatch_medians(rest),
    });
    let steady_figure = |figure: fn(&SteadyState) -> Option<f64>| steady.as_ref().and_then(figure);
    Some(PipelineCompilation {
        first: FirstRun {
            id: first.id.clone(),
            warmup: first.repeat.is_none(),
            total_ms: first.total_ms,
            vision_ms: first.vision_ms,
            prefill_ms: first.prefill_ms,
            first_token_step_ms,
            dispatches: first.dispatches.clone(),
        },
        // The prefill has the same shape in every case, so it compares fairly; case totals
        // also differ by how many tokens each case reads.
        prefill_extra_ms: steady_figure(|s| s.prefill_p50_ms).map(|ms| first.prefill_ms - ms),
        vision_extra_ms: steady_figure(|s| s.vision_p50_ms).map(|ms| first.vision_ms - ms),
        steady,
    })
}

fn floor(rounds: Option<FloorRounds>) -> Option<CompletionFloor> {
    rounds.map(|rounds| CompletionFloor {
        empty_queue: latency_stats(&rounds.empty_queue_ms),
        dispatch_readback: latency_stats(&rounds.dispatch_readback_ms),
        rounds,
    })
}

/// The whole summary the page posts to `/benchmark-result`.
pub fn build_summary(input: SummaryInput) -> Result<PageSummary> {
    let config = input.config;
    let applicable = config.scope != crate::config::Scope::Decoder;
    let cases: Vec<CaseInput> = input
        .results
        .iter()
        .map(|r| CaseInput {
            id: r.id.clone(),
            expected: r.expected.clone(),
            actual: r.actual.clone(),
            total_ms: r.total_ms,
            // The decode time covers decodeSteps decoder runs, one fewer than the tokens
            // when maxTokens stops the loop.
            tokens: u32::try_from(r.decode_steps).ok(),
            decode_ms: Some(r.decode_ms),
        })
        .collect();
    let stats = summarize(
        &cases,
        SummaryOptions {
            accuracy_applicable: applicable,
        },
    )?;
    let get = |name: &str| config.get(name).unwrap_or_default();
    let kicked = config.poll == crate::config::Poll::Kick;
    let page = floor(input.completion_floors.page);
    let worker = floor(input.completion_floors.worker);
    let decoder_worker = floor(input.completion_floors.decoder_worker);
    let results: Vec<&CaseResult> = input.results.iter().collect();
    let waits: Vec<f64> =
        results
            .iter()
            .flat_map(|r| {
                let probe = &r.decode_probe;
                probe.submit_ms.iter().enumerate().map(|(step, submit)| {
                    submit + probe.sync_ms.get(step).copied().unwrap_or(f64::NAN)
                })
            })
            .collect();
    // The decode steps are checked against the floor of the realm that ran them.
    let decoder_floor = match config.realm {
        crate::config::Realm::Page => &page,
        crate::config::Realm::Worker => &decoder_worker,
    };
    let floor_ms = decoder_floor
        .as_ref()
        .and_then(|p| p.dispatch_readback.as_ref())
        .map_or(f64::NAN, |s| s.p50_ms);
    let check = completion_check(floor_ms, &waits, kicked);
    let ordered: Vec<&CaseResult> = input.warmup_results.iter().chain(&input.results).collect();
    let asked = config.verify == crate::config::Verify::Wasm;
    if asked != input.verification.is_some() {
        return Err(CoreError::InvalidConfig {
            field: "verify".to_owned(),
            message: format!(
                "verify={} but the page {} a verification; give one exactly when verify=wasm",
                get("verify"),
                if asked { "gave no" } else { "gave" }
            ),
        });
    }
    let verification = input
        .verification
        .map(|v| verification(v, &input.results, &config))
        .transpose()?;
    let pool = input
        .pool
        .map(|p| pool_run(p, &input.results, &input.warmup_results, config.pool));
    Ok(PageSummary {
        run_id: input.run_id,
        tier: get("tier"),
        memory_mode: get("memory"),
        loader_mode: get("loader"),
        schedule_mode: get("schedule"),
        decoder_mode: get("decoder"),
        benchmark_scope: get("scope"),
        capability: input.capability,
        cases: stats.cases,
        ncer: stats.ncer,
        distance: stats.distance,
        characters: applicable.then_some(stats.characters),
        exact: stats.exact,
        trailing_extras: stats.trailing_extras,
        per_style: if applicable {
            let styles: Vec<Option<String>> =
                input.results.iter().map(|r| r.style.clone()).collect();
            per_style(&cases, &styles)?
        } else {
            None
        },
        median_ms: stats.median_ms,
        peak_case_ms: stats.peak_case_ms,
        memory_samples: input.memory_samples,
        cases_name: if applicable {
            config.cases.clone()
        } else {
            "synthetic".to_owned()
        },
        weights: get("weights"),
        max_tokens: config.max_tokens,
        accuracy_applicable: applicable,
        mean_ms: stats.mean_ms,
        p90_ms: stats.p90_ms,
        ms_per_token: stats.ms_per_token,
        environment: input.environment,
        timing_notes: input.timing_notes,
        session_ms: input.session_ms,
        wall_ms: input.wall_ms,
        manifest: input.manifest,
        poll: PollSetting {
            mode: get("poll"),
            kick_ms: kicked.then(|| config.kick_ms.as_f64()),
        },
        completion_bound: check.bound,
        completion: Completion {
            page,
            worker,
            decoder_worker,
            check,
        },
        decode_probe: run_probe(&results, &input.profile),
        repeats: repeats(&input.results, config.repeat),
        pipeline_compilation: pipeline_compilation(&ordered),
        warmup_results: input.warmup_results.clone(),
        profile: input.profile,
        gpu_memory: input.gpu_memory,
        sessions: input.sessions,
        verification,
        pool,
        results: input.results,
        config,
        extra: Extra::new(),
    })
}

#[cfg(test)]
pub(crate) mod tests;

/// The pool's figures: the whole set's wall time, the tokens every realm decoded in it (warm-up
/// runs included: they were read in the same time) and their rate, and how many runs each
/// realm read.
fn pool_run(
    input: PoolInput,
    results: &[CaseResult],
    warmups: &[CaseResult],
    realms: u32,
) -> PoolRun {
    let runs = || warmups.iter().chain(results);
    let tokens: usize = runs().map(|r| r.decode_steps).sum();
    let mut cases_per_realm = vec![0u32; realms as usize];
    for run in runs() {
        if let Some(count) = run
            .decoder_realm
            .and_then(|i| cases_per_realm.get_mut(i as usize))
        {
            *count += 1;
        }
    }
    PoolRun {
        realms,
        wall_ms: input.wall_ms,
        decode_steps: tokens,
        steps_per_second: per_second(tokens, input.wall_ms),
        cases_per_realm,
        realm_memory: input.realm_memory,
    }
}
