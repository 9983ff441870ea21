//! A run's pace: the work its configuration asks for, the time limit that follows from that
//! work, and the progress line with an estimate of the rest.

use std::path::Path;
use std::time::Duration;

use ocr_bench_core::config::{Scope, Verify};
use ocr_bench_core::Config;

/// `--timeout`: the seconds given, or a limit that follows the work asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeLimit {
    Given(Duration),
    FollowsWork,
}

impl TimeLimit {
    /// `--timeout N` when given, else [`TimeLimit::FollowsWork`].
    pub fn from_seconds(seconds: Option<u64>) -> Self {
        seconds.map_or(Self::FollowsWork, |s| Self::Given(Duration::from_secs(s)))
    }

    /// The limit of one run: the given one, else [`Work::limit`], else (another page, whose
    /// work the runner cannot read) [`OTHER_PAGE_LIMIT`].
    pub fn resolve(self, work: Option<&Work>) -> Duration {
        match (self, work) {
            (Self::Given(limit), _) => limit,
            (Self::FollowsWork, Some(work)) => work.limit(),
            (Self::FollowsWork, None) => OTHER_PAGE_LIMIT,
        }
    }
}

/// Allowed for each token a configuration may decode. The default run (13 cases, up to 128
/// tokens each) took 1,018 s on a quiet 2-core machine on SwiftShader (2.27 s a decoded token)
/// and 4,224 s on a loaded one; 10 s a token is over four times the loaded run's pace even if
/// every case decoded all its tokens, so only a run that has stopped moving reaches it.
pub const PER_TOKEN_ALLOWANCE: Duration = Duration::from_secs(10);

/// Allowed besides the tokens: starting the browser, loading the models, compiling shaders,
/// the vision encoder and the release phase.
pub const SETUP_ALLOWANCE: Duration = Duration::from_secs(15 * 60);

/// The limit of a page other than the benchmark page, whose work the runner cannot read.
pub const OTHER_PAGE_LIMIT: Duration = Duration::from_secs(3600);

/// Seconds a decoded token took on a software adapter (SwiftShader in headless Chromium, the
/// default run on a quiet 2-core machine: 1,018 s, 2.27 s a token): the figure a run on a
/// software adapter quotes when it starts.
pub const SOFTWARE_SECONDS_PER_TOKEN: f64 = 2.27;

/// What one configuration of the benchmark page asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    /// Cases the page reports as finished (`/benchmark-progress`): the set's cases times
    /// `repeat` (one synthetic case for `scope=decoder`).
    pub timed_cases: u32,
    /// Decodes in all: the timed cases, the warm-ups, and each timed case again on the CPU
    /// under `verify=wasm`.
    pub decodes: u32,
    pub max_tokens: u32,
}

impl Work {
    /// The work of `config` on an evaluation set of `set_cases` cases.
    pub fn of(config: &Config, set_cases: u32) -> Self {
        let cases = match config.scope {
            Scope::Decoder => 1,
            Scope::Full => set_cases,
        };
        let timed_cases = cases * config.repeat;
        let verified = match config.verify {
            Verify::Wasm => timed_cases,
            Verify::Off => 0,
        };
        Self {
            timed_cases,
            decodes: timed_cases + config.warmup + verified,
            max_tokens: config.max_tokens,
        }
    }

    /// The work of a run of `page` with `query` under `root`; `None` for another page, or a
    /// query or evaluation set that cannot be read (the run's own checks say why).
    pub fn for_run(root: &Path, page: &str, query: &str) -> Option<Self> {
        if page.trim_start_matches('/') != crate::server::DEFAULT_PAGE {
            return None;
        }
        let config = ocr_bench_core::parse_query(query).ok()?;
        let set_cases = match config.scope {
            Scope::Decoder => 1,
            Scope::Full => evaluation_set_size(root, &config.cases)?,
        };
        Some(Self::of(&config, set_cases))
    }

    /// The most tokens the run may decode.
    pub fn tokens(&self) -> u64 {
        u64::from(self.decodes) * u64::from(self.max_tokens)
    }

    /// [`SETUP_ALLOWANCE`] and [`PER_TOKEN_ALLOWANCE`] for every token the run may decode.
    pub fn limit(&self) -> Duration {
        SETUP_ALLOWANCE + PER_TOKEN_ALLOWANCE * u32::try_from(self.tokens()).unwrap_or(u32::MAX)
    }
}

/// The cases of `models/eval/<name>/cases.json` (a JSON array), as the page reads them.
fn evaluation_set_size(root: &Path, name: &str) -> Option<u32> {
    let path = root.join("models/eval").join(name).join("cases.json");
    let text = std::fs::read_to_string(path).ok()?;
    let cases: Vec<serde_json::Value> = serde_json::from_str(&text).ok()?;
    u32::try_from(cases.len()).ok()
}

/// What a run on a software adapter says when the page starts: how slow this is, and the
/// most its configuration may take at that pace.
pub fn software_adapter_note(adapter: &str, work: Option<&Work>, limit: Duration) -> String {
    let cost = work.map_or(String::new(), |work| {
        let most = Duration::from_secs_f64(work.tokens() as f64 * SOFTWARE_SECONDS_PER_TOKEN);
        format!(
            "; this configuration decodes at most {} tokens ({} decode(s) of up to {}), up to \
             about {} at that pace (cases that end early take less)",
            work.tokens(),
            work.decodes,
            work.max_tokens,
            duration_words(most)
        )
    });
    format!(
        "software adapter ({adapter}): WebGPU runs on the CPU here; the default configuration \
         took {SOFTWARE_SECONDS_PER_TOKEN} s a token on SwiftShader on a quiet 2-core \
         machine{cost}; time limit {}",
        duration_words(limit)
    )
}

/// The rest of the cases at the pace of those done: `cases_elapsed` (since the phase that
/// reads them began) over `done`, times the cases left. `None` before the first case, or
/// when the total is not known.
pub fn estimate_rest(done: u32, total: Option<u32>, cases_elapsed: Duration) -> Option<Duration> {
    let total = total?;
    if done == 0 {
        return None;
    }
    let left = total.saturating_sub(done);
    Some(cases_elapsed.mul_f64(f64::from(left) / f64::from(done)))
}

/// One finished case: `case 3 of 13 (id) done, 4 min 10 s elapsed, about 13 min 30 s left`.
pub fn progress_line(
    phase: &str,
    done: u32,
    total: Option<u32>,
    case_id: &str,
    elapsed: Duration,
    cases_elapsed: Duration,
) -> String {
    let of_total = total.map_or(String::new(), |total| format!(" of {total}"));
    let rest = match estimate_rest(done, total, cases_elapsed) {
        _ if total.is_some_and(|t| done >= t) => ", the last case".to_owned(),
        Some(rest) => format!(", about {} left for the cases", duration_words(rest)),
        None => String::new(),
    };
    format!(
        "{phase}: case {done}{of_total} ({case_id}) done, {} elapsed{rest}",
        duration_words(elapsed)
    )
}

/// `42 s`, `4 min 10 s`, `2 h 5 min`: to the second under an hour, to the minute above.
pub fn duration_words(duration: Duration) -> String {
    let seconds = duration.as_secs_f64().round() as u64;
    match seconds {
        0..=59 => format!("{seconds} s"),
        60..=3599 => format!("{} min {} s", seconds / 60, seconds % 60),
        _ => {
            let minutes = (seconds + 30) / 60;
            format!("{} h {} min", minutes / 60, minutes % 60)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(query: &str) -> Config {
        ocr_bench_core::parse_query(query).unwrap()
    }

    #[test]
    fn work_counts_repeats_warmups_and_verification_decodes() {
        let default = Work::of(&config(""), 13);
        assert_eq!(
            default,
            Work {
                timed_cases: 13,
                decodes: 13,
                max_tokens: 128
            }
        );
        assert_eq!(default.tokens(), 1664);
        let more = Work::of(&config("repeat=3&warmup=2&verify=wasm&maxTokens=8"), 2);
        assert_eq!(more.timed_cases, 6);
        assert_eq!(more.decodes, 6 + 2 + 6);
        assert_eq!(more.tokens(), 14 * 8);
        // The decoder-only scope reads one synthetic case, whatever the set.
        let decoder = Work::of(&config("scope=decoder&maxTokens=2"), 13);
        assert_eq!((decoder.timed_cases, decoder.tokens()), (1, 2));
    }

    #[test]
    fn the_default_limit_follows_the_work_and_outlasts_the_slowest_default_run() {
        let default = Work::of(&config(""), 13);
        // 15 min + 1,664 tokens at 10 s.
        assert_eq!(default.limit(), Duration::from_secs(900 + 16_640));
        // The default run on a loaded 2-core machine took 4,224 s; the old fixed limit was
        // 3,600 s.
        let slowest = Duration::from_secs(4_224);
        assert!(TimeLimit::FollowsWork.resolve(Some(&default)) > slowest * 4);
        // A tiny run gets little more than the set-up allowance.
        let tiny = Work::of(&config("scope=decoder&maxTokens=2"), 1);
        assert_eq!(
            TimeLimit::FollowsWork.resolve(Some(&tiny)),
            Duration::from_secs(920)
        );
        // A given limit is kept, whatever the work; another page gets an hour.
        let given = TimeLimit::from_seconds(Some(30));
        assert_eq!(given.resolve(Some(&default)), Duration::from_secs(30));
        assert_eq!(TimeLimit::from_seconds(None), TimeLimit::FollowsWork);
        assert_eq!(TimeLimit::FollowsWork.resolve(None), OTHER_PAGE_LIMIT);
    }

    #[test]
    fn work_is_read_from_the_evaluation_set_only_for_the_benchmark_page() {
        let root = tempfile::tempdir().unwrap();
        let set = root.path().join("models/eval/three");
        std::fs::create_dir_all(&set).unwrap();
        std::fs::write(
            set.join("cases.json"),
            r#"[{"id":"a"},{"id":"b"},{"id":"c"}]"#,
        )
        .unwrap();
        let work = Work::for_run(root.path(), "www/index.html", "cases=three&maxTokens=4");
        assert_eq!(work.map(|w| (w.timed_cases, w.tokens())), Some((3, 12)));
        assert_eq!(
            Work::for_run(root.path(), "/www/index.html", "cases=three").map(|w| w.timed_cases),
            Some(3)
        );
        // No set file, another page, a query the core refuses: the work is not known.
        assert_eq!(
            Work::for_run(root.path(), "www/index.html", "cases=none"),
            None
        );
        assert_eq!(
            Work::for_run(root.path(), "bench/core/index.html", ""),
            None
        );
        assert_eq!(
            Work::for_run(root.path(), "www/index.html", "tier=9x"),
            None
        );
        // The decoder-only scope needs no set.
        assert!(Work::for_run(root.path(), "www/index.html", "scope=decoder").is_some());
    }

    #[test]
    fn the_estimate_is_the_pace_of_the_cases_done_times_those_left() {
        let minute = Duration::from_secs(60);
        assert_eq!(estimate_rest(0, Some(13), minute), None);
        assert_eq!(estimate_rest(1, None, minute), None);
        assert_eq!(estimate_rest(1, Some(13), minute), Some(minute * 12));
        assert_eq!(
            estimate_rest(4, Some(13), minute * 10),
            Some(Duration::from_secs(1350))
        );
        assert_eq!(estimate_rest(13, Some(13), minute), Some(Duration::ZERO));
    }

    #[test]
    fn the_progress_line_gives_done_of_total_elapsed_and_the_rest() {
        let line = progress_line(
            "decoder-run",
            4,
            Some(13),
            "4",
            Duration::from_secs(700),
            Duration::from_secs(600),
        );
        assert_eq!(
            line,
            "decoder-run: case 4 of 13 (4) done, 11 min 40 s elapsed, about 22 min 30 s left \
             for the cases"
        );
        let last = progress_line(
            "decoder-run",
            2,
            Some(2),
            "b",
            Duration::from_secs(42),
            Duration::from_secs(30),
        );
        assert_eq!(
            last,
            "decoder-run: case 2 of 2 (b) done, 42 s elapsed, the last case"
        );
        let unknown = progress_line(
            "run",
            1,
            None,
            "x",
            Duration::from_secs(5),
            Duration::from_secs(5),
        );
        assert_eq!(unknown, "run: case 1 (x) done, 5 s elapsed");
    }

    #[test]
    fn durations_read_in_seconds_minutes_or_hours() {
        assert_eq!(duration_words(Duration::from_secs(42)), "42 s");
        assert_eq!(duration_words(Duration::from_secs(1018)), "16 min 58 s");
        assert_eq!(duration_words(Duration::from_secs(17_540)), "4 h 52 min");
    }

    #[test]
    fn a_software_adapter_note_says_the_pace_and_the_most_the_run_may_take() {
        let work = Work::of(&config(""), 13);
        let note = software_adapter_note("SwiftShader", Some(&work), work.limit());
        assert!(
            note.starts_with("software adapter (SwiftShader): WebGPU runs on the CPU"),
            "{note}"
        );
        // 1,664 tokens at 2.27 s.
        assert!(
            note.contains("at most 1664 tokens (13 decode(s) of up to 128), up to about 1 h 3 min"),
            "{note}"
        );
        assert!(note.ends_with("time limit 4 h 52 min"), "{note}");
    }
}
