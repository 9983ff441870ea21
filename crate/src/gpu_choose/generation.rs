//! The buffers of an imported model's token rule on the GPU (`wasm/src/generation_choose.wgsl`,
//! the twin of [`crate::generation_choose::GenerationChooser`]) as words: their contents at the
//! start of a sequence, and the ids a readback holds. The record is [`super::layout`]'s, so the
//! one reader serves both shaders. Pure, so the native tests check it; the browser layer
//! (`wasm/src/gpu_choose.rs`) only moves these words to and from the GPU.

use super::layout::{last_chosen, NO_ID, RECORD_WORDS};
use crate::error::{CoreError, Result};
use crate::generation_choose::GenerationRule;

/// Bytes of the next step's `input_ids`, int64 `[1, 1]` (two words), padded to 16: the granule
/// onnxruntime-web sizes its own buffers in.
pub const INPUT_IDS_BYTES: usize = 16;

/// The sizes and starting contents of the generation chooser's buffers (one sequence).
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationLayout {
    pub vocab: u32,
    /// 32-bit words of one id set (seen, banned).
    pub words: u32,
    pub rule: GenerationRule,
    /// Choices one sequence may make: the input ids hold the decoder start and these.
    pub max_tokens: u32,
}

impl GenerationLayout {
    pub fn new(vocabulary: usize, rule: GenerationRule, max_tokens: u32) -> Result<Self> {
        rule.check(vocabulary)?;
        let vocab = u32::try_from(vocabulary).map_err(|_| CoreError::InvalidChooserOption {
            option: "vocabulary",
            value: vocabulary.to_string(),
            allowed: "a size below 2^32",
        })?;
        if max_tokens == 0 {
            return Err(CoreError::InvalidChooserOption {
                option: "maxTokens",
                value: "0".to_owned(),
                allowed: "an integer >= 1 (the run's maxTokens)",
            });
        }
        Ok(Self {
            vocab,
            words: vocab.div_ceil(32),
            rule,
            max_tokens,
        })
    }

    /// The shader's uniform `Params`: vocab, words, n-gram size, the penalty's float32 bits.
    pub fn params(&self) -> [u32; 4] {
        [
            self.vocab,
            self.words,
            self.rule.no_repeat_ngram_size,
            self.rule.repetition_penalty.to_bits(),
        ]
    }

    /// Bytes of logits one dispatch reads: a vocabulary of float32.
    pub fn logits_bytes(&self) -> u64 {
        u64::from(self.vocab) * 4
    }

    /// The ids seen at the start, penalised like any: the decoder start.
    pub fn initial_seen(&self) -> Vec<u32> {
        let mut seen = vec![0u32; self.words as usize];
        let start = self.rule.decoder_start;
        seen[start as usize / 32] |= 1 << (start % 32);
        seen
    }

    /// No id banned: the shader sets and clears the bans within each dispatch.
    pub fn initial_banned(&self) -> Vec<u32> {
        vec![0u32; self.words as usize]
    }

    /// The decoder's input ids at the start: the decoder start, then room for every choice.
    pub fn initial_ids(&self) -> Vec<u32> {
        let mut ids = vec![0u32; self.max_tokens as usize + 1];
        ids[0] = self.rule.decoder_start;
        ids
    }

    /// The record at the start: nothing chosen.
    pub fn initial_record(&self) -> Vec<u32> {
        let mut record = vec![0u32; RECORD_WORDS];
        record[0] = NO_ID;
        record
    }

    /// Whether one more choice fits after `steps` since the reset: the input ids hold
    /// `max_tokens` choices.
    pub fn check_choose(&self, steps: u64) -> Result<()> {
        if steps >= u64::from(self.max_tokens) {
            return Err(CoreError::InvalidChooserOption {
                option: "choose",
                value: format!("choice {} since the reset", steps + 1),
                allowed: "at most maxTokens choices per sequence (reset starts another)",
            });
        }
        Ok(())
    }

    /// The last `k` ids chosen, oldest first, from the record read back after `steps`.
    pub fn last_chosen(&self, record: &[u32], steps: u64, k: u32) -> Result<Vec<i32>> {
        last_chosen(record, 1, steps, k)
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::{HEADER_WORDS, HISTORY, NO_CANDIDATE};
    use super::*;

    const SHADER: &str = include_str!("../../../wasm/src/generation_choose.wgsl");

    fn rule() -> GenerationRule {
        // vit-trocr-tiny's generation_config.json.
        GenerationRule {
            decoder_start: 2,
            repetition_penalty: 1.3,
            no_repeat_ngram_size: 3,
        }
    }

    #[test]
    fn starting_contents() {
        let layout = GenerationLayout::new(40, rule(), 24).unwrap();
        assert_eq!((layout.vocab, layout.words), (40, 2));
        // 1.3's float32 bits: the penalty as PyTorch applies it to float32 scores.
        assert_eq!(layout.params(), [40, 2, 3, 0x3fa6_6666]);
        assert_eq!(layout.logits_bytes(), 160);
        assert_eq!(layout.initial_seen(), vec![1 << 2, 0]);
        assert_eq!(layout.initial_banned(), vec![0, 0]);
        let ids = layout.initial_ids();
        assert_eq!(ids.len(), 25);
        assert_eq!(ids[0], 2);
        assert!(ids[1..].iter().all(|&id| id == 0));
        let record = layout.initial_record();
        assert_eq!(record.len(), RECORD_WORDS);
        assert_eq!(record[0], u32::MAX);
        assert!(record[1..].iter().all(|&w| w == 0));
    }

    #[test]
    fn bad_options_are_refused_saying_what_is_allowed() {
        let err = |vocabulary, rule, max_tokens| {
            GenerationLayout::new(vocabulary, rule, max_tokens)
                .unwrap_err()
                .to_string()
        };
        for penalty in [0.0, -1.3, f32::NAN, f32::INFINITY] {
            let rule = GenerationRule {
                repetition_penalty: penalty,
                ..rule()
            };
            assert!(err(40, rule, 24).contains("repetitionPenalty"));
        }
        assert!(err(2, rule(), 24).contains("decoderStart"));
        assert!(err(40, rule(), 0).contains("maxTokens"));
    }

    #[test]
    fn a_sequence_takes_at_most_max_tokens_choices() {
        let layout = GenerationLayout::new(40, rule(), 3).unwrap();
        for steps in 0..3 {
            layout.check_choose(steps).unwrap();
        }
        let err = layout.check_choose(3).unwrap_err().to_string();
        assert!(err.contains("at most maxTokens"), "{err}");
    }

    #[test]
    fn reads_the_ids_the_shader_wrote_into_its_record() {
        let layout = GenerationLayout::new(40, rule(), 24).unwrap();
        // Five steps: 7, 8, 9, then no candidate twice (the sequence stays failed).
        let mut record = layout.initial_record();
        for (step, id) in [7, 8, 9, NO_CANDIDATE, NO_CANDIDATE]
            .into_iter()
            .enumerate()
        {
            record[HEADER_WORDS + step] = id as u32;
        }
        record[2] = 5;
        record[3] = 1;
        assert_eq!(
            layout.last_chosen(&record, 5, 4).unwrap(),
            vec![8, 9, NO_CANDIDATE, NO_CANDIDATE]
        );
        assert!(layout.last_chosen(&record, 6, 1).is_err(), "a count behind");
    }

    #[test]
    fn the_shader_keeps_the_record_and_params_this_layout_writes() {
        let constant = |name: &str| {
            let line = SHADER
                .lines()
                .find(|line| line.starts_with(&format!("const {name}: u32 = ")))
                .unwrap_or_else(|| panic!("generation_choose.wgsl declares no {name}"));
            line.rsplit(' ')
                .next()
                .and_then(|v| v.trim_end_matches("u;").parse::<usize>().ok())
                .unwrap()
        };
        assert_eq!(constant("HEADER"), HEADER_WORDS);
        assert_eq!(constant("HISTORY"), HISTORY);
        // Params: four u32 fields, in the order of `params()`.
        let params = SHADER
            .split("struct Params {")
            .nth(1)
            .and_then(|rest| rest.split('}').next())
            .unwrap();
        let fields: Vec<&str> = params
            .lines()
            .map(str::trim)
            .filter(|line| line.ends_with(": u32,"))
            .map(|line| line.trim_end_matches(": u32,"))
            .collect();
        assert_eq!(fields, ["vocab", "words", "ngram", "penalty"]);
    }
}
