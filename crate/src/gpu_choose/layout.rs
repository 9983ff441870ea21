//! The GPU chooser's buffers as words: what `choose.wgsl` expects in them at the start of a
//! sequence, and the ids a readback of them holds. Pure, so the native tests check it; the
//! browser layer (`wasm/src/gpu_choose.rs`, beside the shader) only moves these words to and
//! from the GPU.

use serde::Deserialize;

use crate::choose::DEFAULT_MAX_RUN;
use crate::error::{CoreError, Result};
use crate::vocab::{Vocabulary, BOS};

/// Words per sequence before its ring of chosen ids: last id, run length, count, failed.
pub const HEADER_WORDS: usize = 4;
/// Chosen ids kept per sequence between two readbacks (`choose.wgsl`'s HISTORY).
pub const HISTORY: usize = 64;
/// Words of one sequence's record: the header, then the ring.
pub const RECORD_WORDS: usize = HEADER_WORDS + HISTORY;
/// The shader's "no id yet" for the last id.
pub(crate) const NO_ID: u32 = u32::MAX;
/// What a step with no candidate writes instead of an id (`choose.wgsl`'s NO_CANDIDATE).
pub const NO_CANDIDATE: i32 = -1;
/// Independent sequences one chooser may hold: one workgroup each per dispatch.
pub const MAX_SEQUENCES: u32 = 4096;

/// Options of the GPU chooser; a missing field takes the seed's value. The penalty is the
/// seed's 1.2, which the shader's exact double arithmetic is written for.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct GpuChooserOptions {
    /// The id that starts every sequence (and is penalised like any seen id).
    pub bos: u32,
    /// A content id that ends a run of at least this many equal decoded tokens is blocked.
    pub max_run: u32,
    /// Independent sequences chosen side by side, each from its own vocabulary-sized slice
    /// of the logits buffer (the decoder has one).
    pub sequences: u32,
}

impl Default for GpuChooserOptions {
    fn default() -> Self {
        Self {
            bos: BOS,
            max_run: DEFAULT_MAX_RUN,
            sequences: 1,
        }
    }
}

/// The sizes and starting contents of the chooser's buffers.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub vocab: u32,
    /// 32-bit words of one id set (seen, content).
    pub words: u32,
    pub sequences: u32,
    pub bos: u32,
    pub max_run: u32,
    /// The content ids (those the run block applies to) as a bit set of `words` words.
    pub content: Vec<u32>,
}

impl Layout {
    pub fn new(vocabulary: &Vocabulary, options: GpuChooserOptions) -> Result<Self> {
        let size = vocabulary.size();
        let invalid = |option, value: u32, allowed| CoreError::InvalidChooserOption {
            option,
            value: value.to_string(),
            allowed,
        };
        if options.bos as usize >= size {
            return Err(invalid("bos", options.bos, "an id inside the vocabulary"));
        }
        if options.max_run == 0 {
            return Err(invalid("maxRun", 0, "an integer >= 1"));
        }
        if !(1..=MAX_SEQUENCES).contains(&options.sequences) {
            return Err(invalid(
                "sequences",
                options.sequences,
                "an integer 1..=4096",
            ));
        }
        let words = size.div_ceil(32);
        let mut content = vec![0u32; words];
        for id in 0..size {
            if vocabulary.content_ids().contains(id) {
                content[id / 32] |= 1 << (id % 32);
            }
        }
        Ok(Self {
            // A vocabulary comes from vocab.json; its size is far below u32::MAX.
            vocab: u32::try_from(size).unwrap_or(u32::MAX),
            words: u32::try_from(words).unwrap_or(u32::MAX),
            sequences: options.sequences,
            bos: options.bos,
            max_run: options.max_run,
            content,
        })
    }

    /// The shader's uniform `Params`: vocab, words, max_run, padding.
    pub fn params(&self) -> [u32; 4] {
        [self.vocab, self.words, self.max_run, 0]
    }

    /// Bytes of logits one dispatch reads: a vocabulary of float32 per sequence.
    pub fn logits_bytes(&self) -> u64 {
        u64::from(self.sequences) * u64::from(self.vocab) * 4
    }

    /// Every sequence's seen set at its start: BOS only.
    pub fn initial_seen(&self) -> Vec<u32> {
        let mut one = vec![0u32; self.words as usize];
        one[self.bos as usize / 32] |= 1 << (self.bos % 32);
        one.repeat(self.sequences as usize)
    }

    /// Every sequence's record at its start: no last id, no run, nothing chosen.
    pub fn initial_records(&self) -> Vec<u32> {
        let mut one = vec![0u32; RECORD_WORDS];
        one[0] = NO_ID;
        one.repeat(self.sequences as usize)
    }

    /// The last `k` ids chosen in each sequence, oldest first, sequence after sequence, from
    /// the records as read back after `steps` choices since the start. An id is
    /// [`NO_CANDIDATE`] where that step had none (and every step after it, until a reset).
    pub fn last_chosen(&self, records: &[u32], steps: u64, k: u32) -> Result<Vec<i32>> {
        last_chosen(records, self.sequences, steps, k)
    }
}

/// The last `k` ids chosen in each of `sequences` records (both shaders write the same
/// record), oldest first, sequence after sequence, as read back after `steps` choices since
/// the start; [`NO_CANDIDATE`] where a step had none (and every step after it, until a reset).
pub fn last_chosen(records: &[u32], sequences: u32, steps: u64, k: u32) -> Result<Vec<i32>> {
    check_read(steps, k)?;
    let expected = sequences as usize * RECORD_WORDS;
    if records.len() != expected {
        return Err(CoreError::InvalidChooserOption {
            option: "records",
            value: records.len().to_string(),
            allowed: "one record of 68 words per sequence",
        });
    }
    let mut ids = Vec::with_capacity(sequences as usize * k as usize);
    for record in records.chunks_exact(RECORD_WORDS) {
        let count = u64::from(record[2]);
        if count != steps {
            return Err(CoreError::InvalidChooserOption {
                option: "records",
                value: format!("a count of {count}"),
                allowed: "the number of steps dispatched since the reset",
            });
        }
        for step in count - u64::from(k)..count {
            let slot = HEADER_WORDS + (step % HISTORY as u64) as usize;
            ids.push(record[slot] as i32);
        }
    }
    Ok(ids)
}

/// Whether `k` choices can be read back after `steps` since the reset: 1..=64, and no more
/// than were made.
pub fn check_read(steps: u64, k: u32) -> Result<()> {
    if k == 0 || u64::from(k) > steps.min(HISTORY as u64) {
        return Err(CoreError::InvalidChooserOption {
            option: "readChosen k",
            value: k.to_string(),
            allowed: "1 ..= the steps chosen since the reset, at most 64",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocabulary() -> Vocabulary {
        // Ids 4..8: "a", "b" content, "ー", "、" not.
        Vocabulary::new(["a", "b", "ー", "、"].map(String::from).to_vec()).unwrap()
    }

    #[test]
    fn starting_contents() {
        let layout = Layout::new(
            &vocabulary(),
            GpuChooserOptions {
                sequences: 2,
                ..GpuChooserOptions::default()
            },
        )
        .unwrap();
        assert_eq!((layout.vocab, layout.words), (8, 1));
        assert_eq!(layout.content, vec![0b0011_0000]);
        assert_eq!(layout.initial_seen(), vec![1 << BOS, 1 << BOS]);
        let records = layout.initial_records();
        assert_eq!(records.len(), 2 * RECORD_WORDS);
        assert_eq!((records[0], records[RECORD_WORDS]), (u32::MAX, u32::MAX));
        assert!(records[1..RECORD_WORDS].iter().all(|&w| w == 0));
        assert_eq!(layout.params(), [8, 1, 12, 0]);
        assert_eq!(layout.logits_bytes(), 2 * 8 * 4);
    }

    #[test]
    fn options_are_checked() {
        let v = vocabulary();
        let d = GpuChooserOptions::default();
        let err = |options| Layout::new(&v, options).unwrap_err().to_string();
        assert!(err(GpuChooserOptions { bos: 8, ..d }).contains("bos"));
        assert!(err(GpuChooserOptions { max_run: 0, ..d }).contains("maxRun"));
        assert!(err(GpuChooserOptions { sequences: 0, ..d }).contains("1..=4096"));
        assert!(err(GpuChooserOptions {
            sequences: 4097,
            ..d
        })
        .contains("sequences"));
    }

    #[test]
    fn reads_the_last_ids_of_each_ring_in_order() {
        let layout = Layout::new(
            &vocabulary(),
            GpuChooserOptions {
                sequences: 2,
                ..GpuChooserOptions::default()
            },
        )
        .unwrap();
        // 70 steps: the ring wrapped, step s wrote 100 + s (sequence 0) and 200 + s (1),
        // step 69 of sequence 1 had no candidate.
        let steps = 70u64;
        let mut records = layout.initial_records();
        for (sequence, record) in records.chunks_exact_mut(RECORD_WORDS).enumerate() {
            record[2] = steps as u32;
            for step in 0..steps {
                let id = 100 * (sequence as u32 + 1) + step as u32;
                record[HEADER_WORDS + (step % 64) as usize] = id;
            }
        }
        records[RECORD_WORDS + HEADER_WORDS + 69 % 64] = NO_CANDIDATE as u32;
        assert_eq!(
            layout.last_chosen(&records, steps, 3).unwrap(),
            vec![167, 168, 169, 267, 268, NO_CANDIDATE]
        );
        let all = layout.last_chosen(&records, steps, 64).unwrap();
        assert_eq!((all[0], all[63], all[64]), (106, 169, 206));
        for k in [0, 65] {
            assert!(layout.last_chosen(&records, steps, k).is_err(), "k = {k}");
        }
        assert!(
            layout.last_chosen(&records, 2, 3).is_err(),
            "more than chosen"
        );
        assert!(
            layout.last_chosen(&records, 71, 3).is_err(),
            "a count behind"
        );
        assert!(layout.last_chosen(&records[1..], steps, 3).is_err());
    }
}
