//! The test-only hold: with `OCR_BENCH_TEST_HOLD=PHASE:OTHER` in the runner's environment, a
//! run whose page marks PHASE is answered only once another run of the same runner (a
//! sweep's other job) has marked OTHER, or after [`HOLD_LIMIT`]. The page waits for each
//! mark's answer, so a test can make two jobs overlap for certain (one held in `release`
//! until the other is in `decoder-run`) rather than by luck of timing. A benchmark never sets
//! it; `runner/README.md` lists it with the other test switches.

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

/// Every phase each run of this runner has marked, and a wake-up for the held ones.
struct Board {
    reached: Mutex<Vec<(u64, Phase)>>,
    changed: Notify,
}

static BOARD: LazyLock<Board> = LazyLock::new(|| Board {
    reached: Mutex::new(Vec::new()),
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

    /// Notes that `run` marked `phase`, and where that is the held phase waits until another
    /// run has marked the phase the hold waits for (at most [`HOLD_LIMIT`]).
    pub async fn at_mark(&self, run: u64, phase: Phase) {
        reached(run, phase);
        if phase != self.at {
            return;
        }
        let other_reached = || {
            BOARD
                .reached
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|(other, p)| *other != run && *p == self.until)
        };
        let wait = async {
            loop {
                let changed = BOARD.changed.notified();
                if other_reached() {
                    return;
                }
                changed.await;
            }
        };
        if tokio::time::timeout(HOLD_LIMIT, wait).await.is_err() {
            eprintln!(
                "ocr-bench: {HOLD_VARIABLE}: no other run marked {} within {} s; going on",
                self.until.as_str(),
                HOLD_LIMIT.as_secs()
            );
        }
    }
}

/// Notes that `run` marked `phase`, waking the held runs.
fn reached(run: u64, phase: Phase) {
    BOARD
        .reached
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((run, phase));
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
}
