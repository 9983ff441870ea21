//! Greedy token choice under a Hugging Face model's `generation_config.json`: the rule an
//! imported encoder-decoder model decodes with, as transformers' `generate()` applies it, and
//! nothing else. The built-in model keeps the seed's rule ([`crate::choose`]).
//!
//! Two logits processors, in the order `generate()` runs them:
//! - `repetition_penalty` (`RepetitionPenaltyLogitsProcessor`): every id in the decoder's
//!   input ids so far, the decoder start included, has its score divided by the penalty when
//!   it is positive and multiplied when it is negative, once however often it occurs. PyTorch
//!   computes this in float32 (a float32 tensor and a Python float give float32), so it is
//!   computed here in `f32`, unlike the seed's doubles.
//! - `no_repeat_ngram_size` (`NoRepeatNGramLogitsProcessor`): with `n` ids so far and size
//!   `N`, once `n + 1 >= N`, every id that would complete an `N`-gram already in the ids is
//!   scored -Infinity. The ngrams include the decoder start.
//!
//! Then the greedy choice: the highest score, the first index of equals (`torch.argmax`).
//! NaN and -Infinity never win; when nothing else is left it is an error.

use crate::error::{CoreError, Result};
use crate::manifest::Generation;

/// What the rule reads from the manifest's `encoderDecoder.generation` (which the record
/// carries).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GenerationRule {
    /// The first of the decoder's input ids (`decoder_start_token_id`).
    pub decoder_start: u32,
    /// `repetition_penalty`; 1 leaves the scores as they are.
    pub repetition_penalty: f32,
    /// `no_repeat_ngram_size`; 0 blocks nothing.
    pub no_repeat_ngram_size: u32,
}

impl GenerationRule {
    /// Whether the rule can run over `vocabulary` ids: a finite positive penalty, a decoder
    /// start inside the vocabulary.
    pub fn check(&self, vocabulary: usize) -> Result<()> {
        if !(self.repetition_penalty.is_finite() && self.repetition_penalty > 0.0) {
            return Err(CoreError::InvalidChooserOption {
                option: "repetitionPenalty",
                value: self.repetition_penalty.to_string(),
                allowed: "a finite number > 0 (1 = no penalty)",
            });
        }
        if self.decoder_start as usize >= vocabulary {
            return Err(CoreError::InvalidChooserOption {
                option: "decoderStart",
                value: self.decoder_start.to_string(),
                allowed: "an id inside the vocabulary",
            });
        }
        Ok(())
    }
}

impl From<&Generation> for GenerationRule {
    fn from(generation: &Generation) -> Self {
        GenerationRule {
            decoder_start: generation.decoder_start_token_id,
            // PyTorch applies a Python float to float32 scores as float32.
            repetition_penalty: generation.repetition_penalty as f32,
            no_repeat_ngram_size: generation.no_repeat_ngram_size,
        }
    }
}

/// The decoder's input ids so far and the rule over them.
#[derive(Debug, Clone)]
pub struct GenerationChooser {
    rule: GenerationRule,
    vocabulary: usize,
    /// The decoder's input ids: the decoder start, then every id pushed.
    ids: Vec<u32>,
    /// The scores of the step being chosen, reused.
    scores: Vec<f32>,
}

impl GenerationChooser {
    pub fn new(vocabulary: usize, rule: GenerationRule) -> Result<Self> {
        rule.check(vocabulary)?;
        Ok(Self {
            rule,
            vocabulary,
            ids: vec![rule.decoder_start],
            scores: Vec::with_capacity(vocabulary),
        })
    }

    pub fn rule(&self) -> GenerationRule {
        self.rule
    }

    /// Starts a new sequence: the decoder start only.
    pub fn reset(&mut self) {
        self.ids.clear();
        self.ids.push(self.rule.decoder_start);
    }

    /// Appends a decoded token to the decoder's input ids.
    pub fn push(&mut self, id: u32) -> Result<()> {
        if id as usize >= self.vocabulary {
            return Err(CoreError::TokenOutOfRange {
                id: id.into(),
                size: self.vocabulary,
            });
        }
        self.ids.push(id);
        Ok(())
    }

    /// The ids `no_repeat_ngram_size` bans next: each id that followed an earlier occurrence
    /// of the last `N - 1` ids.
    pub fn banned(&self) -> Vec<u32> {
        let size = self.rule.no_repeat_ngram_size as usize;
        let length = self.ids.len();
        if size == 0 || length + 1 < size {
            return Vec::new();
        }
        let prefix = &self.ids[length + 1 - size..];
        self.ids
            .windows(size)
            .filter(|ngram| &ngram[..size - 1] == prefix)
            .map(|ngram| ngram[size - 1])
            .collect()
    }

    /// The scores after both processors, in `self.scores`.
    fn process(&mut self, logits: &[f32]) {
        self.scores.clear();
        self.scores.extend_from_slice(logits);
        let penalty = self.rule.repetition_penalty;
        if penalty != 1.0 {
            // Each id once, however often it occurs: the processor gathers, then scatters.
            for &id in &self.ids {
                let id = id as usize;
                let score = logits[id];
                self.scores[id] = if score < 0.0 {
                    score * penalty
                } else {
                    score / penalty
                };
            }
        }
        for id in self.banned() {
            self.scores[id as usize] = f32::NEG_INFINITY;
        }
    }

    /// The greedy choice under the rule.
    pub fn choose(&mut self, logits: &[f32]) -> Result<u32> {
        if logits.len() != self.vocabulary {
            return Err(CoreError::LogitsLength {
                expected: self.vocabulary,
                actual: logits.len(),
            });
        }
        self.process(logits);
        let mut best: Option<(usize, f32)> = None;
        for (id, &value) in self.scores.iter().enumerate() {
            if value > f32::NEG_INFINITY && best.is_none_or(|(_, top)| value > top) {
                best = Some((id, value));
            }
        }
        best.map(|(id, _)| id as u32).ok_or(CoreError::NoCandidate {
            logits: logits.len(),
            blocked: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(repetition_penalty: f32, no_repeat_ngram_size: u32) -> GenerationRule {
        GenerationRule {
            decoder_start: 1,
            repetition_penalty,
            no_repeat_ngram_size,
        }
    }

    fn chooser(repetition_penalty: f32, no_repeat_ngram_size: u32) -> GenerationChooser {
        GenerationChooser::new(6, rule(repetition_penalty, no_repeat_ngram_size)).unwrap()
    }

    #[test]
    fn plain_greedy_is_argmax_with_the_first_of_equals() {
        let mut c = chooser(1.0, 0);
        assert_eq!(c.choose(&[0.0, 2.0, 1.0, 2.0, 0.5, 0.0]).unwrap(), 1);
        c.push(1).unwrap();
        // No penalty: the decoder start and a pushed id keep their raw score.
        assert_eq!(c.choose(&[0.0, 2.0, 1.0, 2.0, 0.5, 0.0]).unwrap(), 1);
        let nan = f32::NAN;
        assert_eq!(c.choose(&[nan, 0.0, 1.0, nan, 0.5, 0.0]).unwrap(), 2);
    }

    #[test]
    fn repetition_penalty_divides_positive_and_multiplies_negative_scores_in_f32() {
        // RepetitionPenaltyLogitsProcessor(1.5) over input ids [1] (the decoder start):
        // id 1: 3.0 / 1.5 = 2.0 < 2.5 (id 4).
        let mut c = chooser(1.5, 0);
        assert_eq!(c.choose(&[0.0, 3.0, 0.0, 0.0, 2.5, 0.0]).unwrap(), 4);
        // After 4: id 4's -1.0 * 1.5 = -1.5 < -1.2 (id 2); id 1 at -2 * 1.5 = -3.
        c.push(4).unwrap();
        assert_eq!(c.choose(&[-9.0, -2.0, -1.2, -9.0, -1.0, -9.0]).unwrap(), 2);
        // An id pushed twice is penalised once: 4.5 / 1.5 = 3.0 beats 2.9, not 4.5 / 2.25.
        c.push(4).unwrap();
        assert_eq!(c.choose(&[0.0, 0.0, 2.9, 0.0, 4.5, 0.0]).unwrap(), 4);
        // The quotient is float32's: 1.0f32 / 1.1f32 is 0x3f68ba2e, what transformers'
        // RepetitionPenaltyLogitsProcessor(1.1) gives a score of 1.0 on PyTorch's CPU (checked
        // with the class itself); the double quotient 0.90909090909… lies above it. So id 1's
        // penalised 1.0 ties a raw 0x3f68ba2e (the first index wins) where doubles would not.
        let mut c = GenerationChooser::new(
            6,
            GenerationRule {
                decoder_start: 1,
                repetition_penalty: 1.1,
                no_repeat_ngram_size: 0,
            },
        )
        .unwrap();
        let quotient = 1.0f32 / 1.1f32;
        assert_eq!(quotient.to_bits(), 0x3f68_ba2e);
        let below = f32::from_bits(quotient.to_bits() - 1);
        assert_eq!(c.choose(&[below, 1.0, 0.0, 0.0, 0.0, 0.0]).unwrap(), 1);
        assert_eq!(c.choose(&[0.0, 1.0, quotient, 0.0, 0.0, 0.0]).unwrap(), 1);
        c.reset();
        assert_eq!(c.choose(&[quotient, 1.0, 0.0, 0.0, 0.0, 0.0]).unwrap(), 0);
    }

    #[test]
    fn no_repeat_ngram_bans_what_completes_a_seen_ngram() {
        // NoRepeatNGramLogitsProcessor(2) over [1, 3, 4, 3]: the bigrams (1,3) (3,4) (4,3);
        // the last id is 3, so 4 (from (3,4)) is banned.
        let mut c = chooser(1.0, 2);
        for id in [3, 4, 3] {
            c.push(id).unwrap();
        }
        assert_eq!(c.banned(), vec![4]);
        assert_eq!(c.choose(&[0.0, 0.0, 0.0, 0.0, 9.0, 1.0]).unwrap(), 5);
        // Size 3 over [1, 3, 4, 3, 4]: (3, 4) came before 3 once, so 3 is banned.
        let mut c = chooser(1.0, 3);
        for id in [3, 4, 3, 4] {
            c.push(id).unwrap();
        }
        assert_eq!(c.banned(), vec![3]);
        // Size 3 with 1 id: 1 + 1 < 3, nothing to compare yet.
        let c = chooser(1.0, 3);
        assert!(c.banned().is_empty());
        // Size 1 bans every id so far, the decoder start included.
        let mut c = chooser(1.0, 1);
        c.push(2).unwrap();
        assert_eq!(c.banned(), vec![1, 2]);
        assert_eq!(c.choose(&[0.0, 5.0, 4.0, 1.0, 0.0, 0.0]).unwrap(), 3);
    }

    #[test]
    fn both_processors_together_and_a_reset() {
        // Penalty 2 and bigrams over [1, 2, 1]: 2 is banned (after 1 came 2), 1 is halved.
        let mut c = chooser(2.0, 2);
        c.push(2).unwrap();
        c.push(1).unwrap();
        assert_eq!(c.choose(&[0.0, 3.0, 9.0, 1.6, 0.0, 0.0]).unwrap(), 3);
        // Reset: [1] again; nothing banned, 1 still penalised (3 / 2 = 1.5 < 1.6).
        c.reset();
        assert!(c.banned().is_empty());
        assert_eq!(c.choose(&[0.0, 3.0, 9.0, 1.6, 0.0, 0.0]).unwrap(), 2);
    }

    #[test]
    fn bad_input_is_refused_with_what_is_allowed() {
        let mut c = chooser(1.0, 1);
        assert!(matches!(
            c.choose(&[0.0; 5]),
            Err(CoreError::LogitsLength {
                expected: 6,
                actual: 5
            })
        ));
        assert!(matches!(
            c.push(6),
            Err(CoreError::TokenOutOfRange { id: 6, size: 6 })
        ));
        // Every id left is banned or -Infinity.
        let inf = f32::NEG_INFINITY;
        assert!(matches!(
            c.choose(&[inf, 5.0, inf, inf, inf, inf]),
            Err(CoreError::NoCandidate { .. })
        ));
        for penalty in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            let error = GenerationChooser::new(6, rule(penalty, 0)).unwrap_err();
            assert!(error.to_string().contains("repetitionPenalty"), "{error}");
        }
        let error = GenerationChooser::new(1, rule(1.0, 0)).unwrap_err();
        assert!(error.to_string().contains("decoderStart"), "{error}");
    }
}
