//! The test-only hold: with `OCR_BENCH_TEST_HOLD=PHASE:OTHER` in the runner's environment, the
//! first run of the runner whose page marks PHASE is held there: answered only once another run
//! of the same runner (a sweep's other job) has marked OTHER, at once if one already has. The
//! result of every other run is answered only once the held run has ended (its browser stopped
//! and its closing record written); each wait lasts at most [`HOLD_LIMIT`]. The page waits for
//! each answer, so a test can make two jobs overlap for certain (one held in `release` until the
//! other is in `decoder-run`, and the other's result held until the first's browser is stopped)
//! rather than by luck of timing. A benchmark never sets it; `runner/README.md` lists it with the
//! other test switches.

use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use ocr_bench_core::phase::Phase;
use tokio::sync::Notify;

/// The variable that asks for a hold.
pub const HOLD_VARIABLE: &str = "OCR_BENCH_TEST_HOLD";

/// The longest a mark is held: past it the run goes on, so a sweep whose other job never
/// comes still ends.
pub const HOLD_LIMIT: Duration = Duration::from_secs(300);

/// A hold: marks of `at` wait for another run's mark of `until`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    at: Phase,
    until: Phase,
}

/// Every phase each run of this runner has marked, the runs that were held, those whose
/// browser has stopped, and a wake-up for the waiting ones.
struct Board {
    reached: Mutex<Vec<(u64, Phase)>>,
    held: Mutex<Vec<(u64, Phase)>>,
    ended: Mutex<Vec<u64>>,
    changed: Notify,
}

static BOARD: LazyLock<Board> = LazyLock::new(|| Board {
    reached: Mutex::new(Vec::new()),
    held: Mutex::new(Vec::new()),
    ended: Mutex::new(Vec::new()),
    changed: Notify::new(),
});

impl Hold {
    /// The hold `OCR_BENCH_TEST_HOLD` asks for: `None` when unset; `Err` names what is allowed.
    pub fn from_env() -> Result<Option<Hold>, String> {
        match std::env::var(HOLD_VARIABLE) {
            Ok(spec) => Hold::parse(&spec).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => {
                Err(format!("{HOLD_VARIABLE} is not valid UTF-8"))
            }
        }
    }

    fn parse(spec: &str) -> Result<Hold, String> {
        let refused = || {
            format!(
                "{HOLD_VARIABLE}={spec:?} is not a hold; allowed (test-only): PHASE:OTHER, two \
                 of {}",
                Phase::allowed()
            )
        };
        let (at, until) = spec.split_once(':').ok_or_else(refused)?;
        Ok(Hold {
            at: at.parse().map_err(|_| refused())?,
            until: until.parse().map_err(|_| refused())?,
        })
    }

    /// Notes that `run` marked `phase`, and where that is the held phase and no other run was
    /// held there before, holds it: it waits until another run has marked the phase the hold
    /// waits for (at most [`HOLD_LIMIT`]). The first run to reach the phase is the held one even
    /// when the other is already past `until` and it need not wait, so that the other's result
    /// still waits for it to end ([`Hold::at_result`]): otherwise the overlap rests on timing.
    pub async fn at_mark(&self, run: u64, phase: Phase) {
        reached(run, phase);
        if phase != self.at {
            return;
        }
        {
            let mut held = lock(&BOARD.held);
            if held.iter().any(|(other, at)| *other != run && *at == phase) {
                return;
            }
            held.push((run, phase));
        }
        let other_reached = || {
            lock(&BOARD.reached)
                .iter()
                .any(|(other, p)| *other != run && *p == self.until)
        };
        let waited_for = format!("no other run marked {}", self.until.as_str());
        wait_until(other_reached, &waited_for).await;
    }

    /// Before `run`'s result is answered: waits until every other run that was held has
    /// ended, so that run's browser is stopped while this one's is still mid-run. A held run
    /// waits for no one at its result (only those that went on unheld do), so two runs never
    /// wait for each other.
    pub async fn at_result(&self, run: u64) {
        if lock(&BOARD.held).contains(&(run, self.at)) {
            return;
        }
        let held_ones_ended = || {
            let ended = lock(&BOARD.ended);
            lock(&BOARD.held)
                .iter()
                .filter(|(held, at)| *held != run && *at == self.at)
                .all(|(held, _)| ended.contains(held))
        };
        let waited_for = format!("a run held in {} did not end", self.at.as_str());
        wait_until(held_ones_ended, &waited_for).await;
    }
}

/// Notes that `run` has ended (its browser stopped, its closing record written), waking the
/// results held for it.
pub fn run_ended(run: u64) {
    lock(&BOARD.ended).push(run);
    BOARD.changed.notify_waiters();
}

/// A list of the board; a panic elsewhere leaves it readable.
fn lock<T>(list: &Mutex<Vec<T>>) -> std::sync::MutexGuard<'_, Vec<T>> {
    list.lock().unwrap_or_else(|e| e.into_inner())
}

/// Waits until `done` holds, looking again on every change of the board; past
/// [`HOLD_LIMIT`] says `waited_for` and goes on, so a sweep whose other job never comes ends.
async fn wait_until(done: impl Fn() -> bool, waited_for: &str) {
    let wait = async {
        loop {
            let changed = BOARD.changed.notified();
            if done() {
                return;
            }
            changed.await;
        }
    };
    if tokio::time::timeout(HOLD_LIMIT, wait).await.is_err() {
        eprintln!(
            "ocr-bench: {HOLD_VARIABLE}: {waited_for} within {} s; going on",
            HOLD_LIMIT.as_secs()
        );
    }
}

/// Notes that `run` marked `phase`, waking the held runs.
fn reached(run: u64, phase: Phase) {
    lock(&BOARD.reached).push((run, phase));
    BOARD.changed.notify_waiters();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_parse_and_errors_name_the_phases() {
        assert_eq!(
            Hold::parse("release:decoder-run").unwrap(),
            Hold {
                at: Phase::Release,
                until: Phase::DecoderRun
            }
        );
        for spec in ["release", "release:startup", ":decoder-run"] {
            let err = Hold::parse(spec).unwrap_err();
            assert!(
                err.contains(&format!("{spec:?}")) && err.contains("decoder-run, release"),
                "{err}"
            );
        }
    }

    #[tokio::test]
    async fn a_held_mark_goes_on_once_another_run_reaches_the_phase() {
        let hold = Hold::parse("release:decoder-run").unwrap();
        let (held, other) = (9_001, 9_002);
        let waiting = tokio::spawn({
            let hold = hold.clone();
            async move { hold.at_mark(held, Phase::Release).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "released before the other run came");
        // The held run's own decoder-run does not count; another run's does.
        hold.at_mark(held, Phase::DecoderRun).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "released by its own mark");
        hold.at_mark(other, Phase::DecoderRun).await;
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("released once the other run marked decoder-run")
            .unwrap();
    }

    #[tokio::test]
    async fn the_first_run_at_the_phase_is_held_even_when_the_other_is_already_past() {
        // Phases no other test marks: the board is one for the whole process.
        let hold = Hold::parse("vision-release:vision-encode").unwrap();
        let (first, other) = (9_201, 9_202);
        hold.at_mark(other, Phase::VisionEncode).await;
        tokio::time::timeout(
            Duration::from_secs(5),
            hold.at_mark(first, Phase::VisionRelease),
        )
        .await
        .expect("no wait: the other run is already past");
        // The other reaching the phase later is not held, and its result waits for the first.
        tokio::time::timeout(
            Duration::from_secs(5),
            hold.at_mark(other, Phase::VisionRelease),
        )
        .await
        .expect("the second run at the phase is not held");
        let waiting = tokio::spawn({
            let hold = hold.clone();
            async move { hold.at_result(other).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "answered while the first run lives");
        run_ended(first);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("answered once the first run ended")
            .unwrap();
    }

    #[tokio::test]
    async fn a_result_waits_for_the_held_run_to_end() {
        // Phases the other test does not mark: the board is one for the whole process.
        let hold = Hold::parse("vision-load:probe").unwrap();
        let (held, other) = (9_101, 9_102);
        let held_mark = tokio::spawn({
            let hold = hold.clone();
            async move { hold.at_mark(held, Phase::VisionLoad).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        hold.at_mark(other, Phase::Probe).await;
        tokio::time::timeout(Duration::from_secs(5), held_mark)
            .await
            .expect("released once the other run marked probe")
            .unwrap();
        let waiting = tokio::spawn({
            let hold = hold.clone();
            async move { hold.at_result(other).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "answered while the held run lives");
        // The held run's own result is not held for itself.
        tokio::time::timeout(Duration::from_secs(5), hold.at_result(held))
            .await
            .expect("a held run's result waits for no one");
        run_ended(held);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("answered once the held run ended")
            .unwrap();
    }
}
