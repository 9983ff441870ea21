//! Greedy token choice with the seed's repetition penalty and repetition block.
//!
//! The seed's `chooseToken(logits, sequence, tokens)` rebuilds a `Set` of the sequence and
//! rescans the tail every step; this keeps the same state incrementally (a seen-bitset and a
//! run counter), so a step is one pass over the logits and allocates nothing.
//!
//! Arithmetic is the seed's exactly: a `Float32Array` element is read as a JS double, the
//! penalty is `value < 0 ? value * 1.2 : value / 1.2` in doubles, and scores compare as
//! doubles with `>`, so the first index wins a tie. Deliberate differences:
//! - NaN never wins. The seed starts from `adjusted(0)`, so a NaN at index 0 beats
//!   everything (`x > NaN` is false) and it returns 0.
//! - When no id has a score above -Infinity (empty input, every score NaN or -Infinity, or
//!   the only finite one blocked), this is an error; the seed silently returned 0.
//! - Logits whose length is not the vocabulary's are an error; the seed always scanned 14630.

use serde::Deserialize;

use crate::error::{CoreError, Result};
use crate::vocab::{IdSet, Vocabulary, BOS};

pub const DEFAULT_PENALTY: f64 = 1.2;
pub const DEFAULT_MAX_RUN: u32 = 12;

/// Options of [`TokenChooser`]; a missing field takes the seed's value.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "TokenChooserOptions"))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ChooserOptions {
    /// Divides a positive score, multiplies a negative one, for every id already in the
    /// sequence (BOS included). `1` switches the penalty off.
    #[cfg_attr(test, ts(as = "Option<f64>", optional))]
    pub penalty: f64,
    /// A content id that ends a run of at least this many equal decoded tokens is blocked.
    #[cfg_attr(test, ts(as = "Option<u32>", optional))]
    pub max_run: u32,
    /// The id that starts every sequence (and is penalised like any seen id).
    #[cfg_attr(test, ts(as = "Option<u32>", optional))]
    pub bos: u32,
}

impl Default for ChooserOptions {
    fn default() -> Self {
        Self {
            penalty: DEFAULT_PENALTY,
            max_run: DEFAULT_MAX_RUN,
            bos: BOS,
        }
    }
}

#[derive(Debug, Clone)]
pub struct TokenChooser {
    content: IdSet,
    size: usize,
    penalty: f64,
    max_run: u32,
    bos: u32,
    seen: IdSet,
    last: Option<u32>,
    run: u32,
}

impl TokenChooser {
    pub fn new(vocabulary: &Vocabulary, options: ChooserOptions) -> Result<Self> {
        if !(options.penalty.is_finite() && options.penalty > 0.0) {
            return Err(CoreError::InvalidChooserOption {
                option: "penalty",
                value: options.penalty.to_string(),
                allowed: "a finite number > 0 (1 = no penalty)",
            });
        }
        if options.max_run == 0 {
            return Err(CoreError::InvalidChooserOption {
                option: "maxRun",
                value: "0".into(),
                allowed: "an integer >= 1",
            });
        }
        let size = vocabulary.size();
        if options.bos as usize >= size {
            return Err(CoreError::InvalidChooserOption {
                option: "bos",
                value: options.bos.to_string(),
                allowed: "an id inside the vocabulary",
            });
        }
        let mut chooser = Self {
            content: vocabulary.content_ids().clone(),
            size,
            penalty: options.penalty,
            max_run: options.max_run,
            bos: options.bos,
            seen: IdSet::new(size),
            last: None,
            run: 0,
        };
        chooser.reset();
        Ok(chooser)
    }

    /// Starts a new sequence: only BOS is in it, nothing is decoded yet.
    pub fn reset(&mut self) {
        self.seen.clear();
        self.seen.insert(self.bos as usize);
        self.last = None;
        self.run = 0;
    }

    /// Appends a decoded token to the sequence.
    pub fn push(&mut self, id: u32) -> Result<()> {
        if id as usize >= self.size {
            return Err(CoreError::TokenOutOfRange {
                id: id.into(),
                size: self.size,
            });
        }
        self.seen.insert(id as usize);
        if self.last == Some(id) {
            self.run = self.run.saturating_add(1);
        } else {
            self.last = Some(id);
            self.run = 1;
        }
        Ok(())
    }

    /// The id that may not be chosen next: the last decoded token when it is a content id
    /// that ends a run of at least `max_run` equal tokens.
    pub fn blocked(&self) -> Option<u32> {
        self.last
            .filter(|&id| self.run >= self.max_run && self.content.contains(id as usize))
    }

    /// The highest penalised score's id (the first of equals).
    ///
    /// Two phases that together give the seed's single scan: the ids not in the sequence keep
    /// their raw score, and comparing float32s orders them exactly as comparing their doubles
    /// does (the widening is exact), so they are searched as f32 in a loop that vectorises;
    /// the few ids in the sequence (BOS and at most `maxTokens` more) are then penalised in
    /// doubles and compared one by one. The blocked id is always in the sequence, so it is
    /// simply skipped there.
    pub fn choose(&self, logits: &[f32]) -> Result<u32> {
        if logits.len() != self.size {
            return Err(CoreError::LogitsLength {
                expected: self.size,
                actual: logits.len(),
            });
        }
        let blocked = self.blocked();
        let words = self.seen.words();

        // Phase 1: the largest score among the unseen ids (NaN never wins: `>` is false).
        let mut top = f32::NEG_INFINITY;
        for (chunk, &seen) in logits.chunks(64).zip(words) {
            if seen == 0 {
                top = max_of(top, chunk);
            } else {
                for (offset, &logit) in chunk.iter().enumerate() {
                    if seen >> offset & 1 == 0 && logit > top {
                        top = logit;
                    }
                }
            }
        }
        // Its first index; -Infinity is never a winner (nothing beats the seed's start there).
        let mut best: Option<(usize, f64)> = None;
        if top > f32::NEG_INFINITY {
            best = logits
                .iter()
                .enumerate()
                .find(|&(index, &logit)| logit == top && !self.seen.contains(index))
                .map(|(index, _)| (index, f64::from(top)));
        }

        // Phase 2: the ids in the sequence, penalised in doubles exactly as the seed does.
        let penalty = self.penalty;
        for (word_index, &word) in words.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let index = word_index * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if Some(index as u32) == blocked {
                    continue;
                }
                let raw = f64::from(logits[index]);
                let value = if raw < 0.0 {
                    raw * penalty
                } else {
                    raw / penalty
                };
                let wins = match best {
                    None => value > f64::NEG_INFINITY,
                    Some((best_index, best_value)) => {
                        value > best_value || (value == best_value && index < best_index)
                    }
                };
                if wins {
                    best = Some((index, value));
                }
            }
        }
        best.map(|(index, _)| index as u32)
            .ok_or(CoreError::NoCandidate {
                logits: logits.len(),
                blocked,
            })
    }
}

/// `max(start, chunk...)` ignoring NaN, in eight independent lanes so that the compiler can
/// use SIMD compare-and-select (wasm simd128, SSE/AVX natively).
#[inline]
fn max_of(start: f32, chunk: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 8];
    let mut groups = chunk.chunks_exact(8);
    for group in &mut groups {
        for (lane, &value) in lanes.iter_mut().zip(group) {
            *lane = if value > *lane { value } else { *lane };
        }
    }
    let mut top = start;
    for &value in lanes.iter().chain(groups.remainder()) {
        if value > top {
            top = value;
        }
    }
    top
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The seed's `chooseToken`, transcribed with a `HashSet` and a tail scan, for comparison.
    /// It returns what the seed returns, including 0 for a NaN at index 0 or no finite score.
    fn seed_choose(
        logits: &[f32],
        sequence: &[u32],
        tokens: &[u32],
        content: &dyn Fn(u32) -> bool,
    ) -> u32 {
        let seen: std::collections::HashSet<u32> = sequence.iter().copied().collect();
        let mut blocked = None;
        if let Some(&last) = tokens.last() {
            if content(last) {
                let run = tokens.iter().rev().take_while(|&&t| t == last).count();
                if run >= 12 {
                    blocked = Some(last);
                }
            }
        }
        let adjusted = |index: usize| -> f64 {
            if Some(index as u32) == blocked {
                return f64::NEG_INFINITY;
            }
            let value = logits[index] as f64;
            if !seen.contains(&(index as u32)) {
                return value;
            }
            if value < 0.0 {
                value * 1.2
            } else {
                value / 1.2
            }
        };
        let mut best_token = 0;
        let mut best_value = adjusted(0);
        for token in 1..logits.len() {
            let value = adjusted(token);
            if value > best_value {
                best_token = token as u32;
                best_value = value;
            }
        }
        best_token
    }

    /// 8 ids of which 4..8 are the entries; "a" and "b" are content, "ー" and "、" are not.
    fn small() -> Vocabulary {
        Vocabulary::new(["a", "b", "ー", "、"].map(String::from).to_vec()).unwrap()
    }

    fn chooser(v: &Vocabulary) -> TokenChooser {
        TokenChooser::new(v, ChooserOptions::default()).unwrap()
    }

    #[test]
    fn penalises_bos_and_pushed_ids() {
        let v = small();
        let mut c = chooser(&v);
        // BOS (1) at 1.1 beats 1.0 raw, but 1.1 / 1.2 < 1.0.
        assert_eq!(
            c.choose(&[0.0, 1.1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]).unwrap(),
            4
        );
        c.push(4).unwrap();
        assert_eq!(
            c.choose(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.9, 0.0, 0.0]).unwrap(),
            5
        );
        // A seen negative score gets more negative: -1 * 1.2 < -1.1.
        assert_eq!(
            c.choose(&[-5.0, -5.0, -5.0, -5.0, -1.0, -5.0, -1.1, -5.0])
                .unwrap(),
            6
        );
    }

    #[test]
    fn first_index_wins_ties_and_nan_never_wins() {
        let v = small();
        let c = chooser(&v);
        assert_eq!(
            c.choose(&[0.0, 0.0, 0.0, 3.0, 3.0, 0.0, 0.0, 3.0]).unwrap(),
            3
        );
        let nan = f32::NAN;
        assert_eq!(
            c.choose(&[nan, 0.0, 0.0, 0.0, 2.0, nan, 0.0, 0.0]).unwrap(),
            4
        );
        // The seed returns 0 here (NaN at index 0 is never beaten).
        assert_eq!(
            seed_choose(
                &[nan, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0],
                &[1],
                &[],
                &|_| false
            ),
            0
        );
    }

    #[test]
    fn ties_across_seen_and_unseen_ids_go_to_the_first_index() {
        let v = small();
        let mut c = chooser(&v);
        c.push(6).unwrap();
        // Penalised 0 (seen BOS at 1) ties raw 0 elsewhere: index 1 is first.
        assert_eq!(
            c.choose(&[-1.0, 0.0, -1.0, -1.0, 0.0, -1.0, -1.0, -1.0])
                .unwrap(),
            1
        );
        // Infinity / 1.2 is still Infinity: seen id 6 ties unseen 7 and comes first.
        let inf = f32::INFINITY;
        assert_eq!(
            c.choose(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, inf, inf]).unwrap(),
            6
        );
        // -0 and +0 are equal: the first wins.
        assert_eq!(
            c.choose(&[-1.0, -1.0, -1.0, -0.0, 0.0, -1.0, -1.0, -1.0])
                .unwrap(),
            3
        );
    }

    #[test]
    fn no_candidate_is_an_error() {
        let v = small();
        let c = chooser(&v);
        let ninf = f32::NEG_INFINITY;
        assert!(matches!(
            c.choose(&[f32::NAN; 8]),
            Err(CoreError::NoCandidate { .. })
        ));
        assert!(matches!(
            c.choose(&[ninf; 8]),
            Err(CoreError::NoCandidate { .. })
        ));
        assert_eq!(
            c.choose(&[]),
            Err(CoreError::LogitsLength {
                expected: 8,
                actual: 0
            })
        );
        assert!(c.choose(&[0.0; 9]).is_err());
        // Only the blocked id is finite.
        let mut c = chooser(&v);
        for _ in 0..12 {
            c.push(4).unwrap();
        }
        let mut logits = [ninf; 8];
        logits[4] = 1.0;
        assert_eq!(
            c.choose(&logits),
            Err(CoreError::NoCandidate {
                logits: 8,
                blocked: Some(4)
            })
        );
        // Infinity itself is a fine winner.
        logits[6] = f32::INFINITY;
        assert_eq!(c.choose(&logits).unwrap(), 6);
    }

    #[test]
    fn blocks_a_content_run_of_twelve() {
        let v = small();
        let mut c = chooser(&v);
        let logits = [0.0, 0.0, 0.0, 0.0, 9.0, 1.0, 0.0, 0.0];
        for _ in 0..11 {
            c.push(4).unwrap();
        }
        assert_eq!(c.blocked(), None);
        assert_eq!(c.choose(&logits).unwrap(), 4);
        c.push(4).unwrap();
        assert_eq!(c.blocked(), Some(4));
        assert_eq!(c.choose(&logits).unwrap(), 5);
        // A non-content id ("ー") repeats freely.
        let mut c = chooser(&v);
        for _ in 0..20 {
            c.push(6).unwrap();
        }
        assert_eq!(c.blocked(), None);
        // The run counts decoded tokens only and restarts on a different token.
        c.reset();
        for _ in 0..11 {
            c.push(5).unwrap();
        }
        c.push(4).unwrap();
        c.push(5).unwrap();
        assert_eq!(c.blocked(), None);
    }

    #[test]
    fn options_are_checked() {
        let v = small();
        let bad = |options| TokenChooser::new(&v, options).unwrap_err().to_string();
        let d = ChooserOptions::default();
        assert!(bad(ChooserOptions { penalty: 0.0, ..d }).contains("penalty"));
        assert!(bad(ChooserOptions {
            penalty: f64::NAN,
            ..d
        })
        .contains("penalty"));
        assert!(bad(ChooserOptions { max_run: 0, ..d }).contains("maxRun"));
        assert!(bad(ChooserOptions { bos: 8, ..d }).contains("bos"));
        let mut c = chooser(&v);
        assert!(c.push(8).is_err());
        // Custom run length.
        let mut c = TokenChooser::new(&v, ChooserOptions { max_run: 2, ..d }).unwrap();
        c.push(5).unwrap();
        c.push(5).unwrap();
        assert_eq!(c.blocked(), Some(5));
    }

    fn logit() -> impl Strategy<Value = f32> {
        prop_oneof![
            6 => (-4i32..=4).prop_map(|x| x as f32 * 0.5),
            6 => -30.0f32..30.0,
            1 => Just(f32::NAN),
            1 => Just(f32::NEG_INFINITY),
            1 => Just(f32::INFINITY),
            1 => Just(-0.0f32),
            1 => Just(f32::MAX),
            1 => Just(f32::MIN),
        ]
    }

    proptest! {
        // The seed and this agree on every input except the documented differences.
        #[test]
        fn matches_the_seed(
            entries in prop::collection::vec(prop::sample::select(vec!["a", "b", "ー", "1", "、"]), 1..140),
            steps in prop::collection::vec((0u32..200, prop::bool::weighted(0.9)), 1..40),
            seed_logits in prop::collection::vec(logit(), 144),
        ) {
            let v = Vocabulary::new(entries.iter().map(|s| s.to_string()).collect()).unwrap();
            let size = v.size();
            let mut c = chooser(&v);
            let mut sequence = vec![BOS];
            let mut tokens: Vec<u32> = Vec::new();
            for (step, &(pick, repeat)) in steps.iter().enumerate() {
                let logits: Vec<f32> = (0..size).map(|i| seed_logits[(i + step) % seed_logits.len()]).collect();
                let seed = seed_choose(&logits, &sequence, &tokens, &|id| v.is_content(id.into()));
                match c.choose(&logits) {
                    Ok(id) => {
                        let seed_nan_first = logits[0].is_nan();
                        prop_assert!(seed_nan_first || id == seed, "choose {} seed {}", id, seed);
                        prop_assert!(!logits[id as usize].is_nan());
                    }
                    Err(CoreError::NoCandidate { .. }) => {
                        // The seed returns 0 exactly when nothing beats index 0's start.
                        prop_assert_eq!(seed, 0);
                    }
                    Err(e) => prop_assert!(false, "{}", e),
                }
                // Long runs: often repeat the last token so the block is exercised.
                let next = match (repeat, tokens.last()) {
                    (true, Some(&last)) => last,
                    _ => pick % size as u32,
                };
                c.push(next).unwrap();
                sequence.push(next);
                tokens.push(next);
            }
        }

        #[test]
        fn long_runs_block_exactly_from_the_twelfth(run in 1usize..30) {
            let v = small();
            let mut c = chooser(&v);
            for _ in 0..run {
                c.push(4).unwrap();
            }
            prop_assert_eq!(c.blocked().is_some(), run >= 12);
        }
    }
}
