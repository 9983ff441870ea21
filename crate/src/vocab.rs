//! The vocabulary: `vocab.json`'s characters behind four special ids, and the seed's rule for
//! which ids are "content" (the only ones a repetition block applies to).

use unicode_general_category::{get_general_category, GeneralCategory};

use crate::error::{CoreError, Result};

/// Ids below this are special (0 pad, 1 BOS, 2 EOS, 3 unknown) and decode to nothing.
pub const SPECIAL_IDS: u32 = 4;
pub const BOS: u32 = 1;
pub const EOS: u32 = 2;

/// Characters the seed never counts as content although they are letters: the long-vowel
/// marks and tildes that legitimately repeat (`ーーー`, `〜〜`).
const REPEATABLE: [char; 4] = ['ー', 'ｰ', '〜', '~'];

/// A fixed-size set of ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdSet {
    words: Vec<u64>,
    size: usize,
}

impl IdSet {
    pub fn new(size: usize) -> Self {
        Self {
            words: vec![0; size.div_ceil(64)],
            size,
        }
    }

    #[inline]
    pub fn contains(&self, id: usize) -> bool {
        id < self.size && self.words[id / 64] >> (id % 64) & 1 == 1
    }

    /// Adds `id`; ids beyond the set's size are ignored.
    #[inline]
    pub fn insert(&mut self, id: usize) {
        if id < self.size {
            self.words[id / 64] |= 1 << (id % 64);
        }
    }

    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// The bits, 64 ids per word, id 0 in bit 0 of word 0; bits past the size are 0.
    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

/// The seed's content rule for one vocabulary entry:
/// `character.length === 1 && !"ーｰ〜~".includes(character) && /[\p{Letter}\p{Number}]/u.test(character)`.
///
/// `length === 1` counts UTF-16 code units, so a character outside the Basic Multilingual
/// Plane (two units, e.g. 𠮷) is never content; this keeps that on purpose, for parity.
pub fn is_content_entry(entry: &str) -> bool {
    let mut chars = entry.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return false;
    };
    c.len_utf16() == 1 && !REPEATABLE.contains(&c) && is_letter_or_number(c)
}

/// Unicode general category L* or N* (JS `\p{Letter}` / `\p{Number}`).
fn is_letter_or_number(c: char) -> bool {
    use GeneralCategory::*;
    matches!(
        get_general_category(c),
        UppercaseLetter
            | LowercaseLetter
            | TitlecaseLetter
            | ModifierLetter
            | OtherLetter
            | DecimalNumber
            | LetterNumber
            | OtherNumber
    )
}

#[derive(Debug, Clone)]
pub struct Vocabulary {
    entries: Vec<String>,
    content: IdSet,
}

impl Vocabulary {
    /// Builds the vocabulary from `vocab.json`'s array: entry `i` is id `i + 4`.
    pub fn new(entries: Vec<String>) -> Result<Self> {
        if entries.is_empty() {
            return Err(CoreError::EmptyVocabulary);
        }
        let mut content = IdSet::new(entries.len() + SPECIAL_IDS as usize);
        for (index, entry) in entries.iter().enumerate() {
            if is_content_entry(entry) {
                content.insert(index + SPECIAL_IDS as usize);
            }
        }
        Ok(Self { entries, content })
    }

    /// Number of ids: the entries plus the four special ids (the logits' length).
    pub fn size(&self) -> usize {
        self.entries.len() + SPECIAL_IDS as usize
    }

    pub fn is_content(&self, id: i64) -> bool {
        usize::try_from(id).is_ok_and(|id| self.content.contains(id))
    }

    pub fn content_ids(&self) -> &IdSet {
        &self.content
    }

    /// The text of one id: `""` for a special id, an error outside the vocabulary.
    pub fn token(&self, id: i64) -> Result<&str> {
        let out_of_range = || CoreError::TokenOutOfRange {
            id,
            size: self.size(),
        };
        let index = usize::try_from(id).map_err(|_| out_of_range())?;
        match index.checked_sub(SPECIAL_IDS as usize) {
            None => Ok(""),
            Some(entry) => self
                .entries
                .get(entry)
                .map(String::as_str)
                .ok_or_else(out_of_range),
        }
    }

    /// The text of a token sequence. Special ids decode to `""`; an id outside the
    /// vocabulary is an error (the seed's `idToCharacter[token] ?? ""` would hide it).
    pub fn decode<I>(&self, ids: I) -> Result<String>
    where
        I: IntoIterator,
        I::Item: Into<i64>,
    {
        let mut text = String::new();
        for id in ids {
            text.push_str(self.token(id.into())?);
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn vocab(entries: &[&str]) -> Vocabulary {
        Vocabulary::new(entries.iter().map(|s| s.to_string()).collect()).unwrap()
    }

    #[test]
    fn content_rule_matches_the_seed() {
        // Letters and numbers of any script, one UTF-16 unit.
        for c in [
            "a", "Z", "7", "あ", "ア", "ｱ", "漢", "Ａ", "５", "Ⅻ", "½", "²", "ß", "ǅ",
        ] {
            assert!(is_content_entry(c), "{c} should be content");
        }
        // Repeatable marks, punctuation, symbols, spaces, and more than one unit.
        for c in [
            "ー", "ｰ", "〜", "~", "、", "。", "!", "？", "・", " ", "\u{3000}", "", "ab", "𠮷",
            "𝟘", "😀", "\u{301}",
        ] {
            assert!(!is_content_entry(c), "{c:?} should not be content");
        }
    }

    #[test]
    fn ids_are_offset_by_four() {
        let v = vocab(&["a", "ー", "b"]);
        assert_eq!(v.size(), 7);
        assert_eq!(v.decode([4i64, 5, 6, 4]).unwrap(), "aーba");
        assert_eq!(v.decode([0i64, 1, 2, 3, 4]).unwrap(), "a");
        assert!(v.is_content(4) && !v.is_content(5) && v.is_content(6));
        assert!(!v.is_content(0) && !v.is_content(7) && !v.is_content(-1));
        let err = v.decode([4i64, 7]).unwrap_err();
        assert_eq!(err, CoreError::TokenOutOfRange { id: 7, size: 7 });
        assert!(v.decode([-1i64]).is_err());
        assert!(Vocabulary::new(Vec::new()).is_err());
    }

    #[test]
    fn the_project_vocabulary_has_the_seed_size() {
        let json = include_str!("../../models/vocab.json");
        let entries: Vec<String> = serde_json::from_str(json).unwrap();
        let v = Vocabulary::new(entries.clone()).unwrap();
        assert_eq!(v.size(), 14630);
        let astral = entries
            .iter()
            .filter(|e| e.chars().any(|c| c.len_utf16() == 2))
            .count();
        assert!(
            astral > 0,
            "the vocabulary has astral characters, never content"
        );
    }

    proptest! {
        #[test]
        fn id_set_matches_a_hash_set(size in 1usize..300, ids in prop::collection::vec(0usize..400, 0..50)) {
            let mut set = IdSet::new(size);
            let mut reference = std::collections::HashSet::new();
            for &id in &ids {
                set.insert(id);
                if id < size { reference.insert(id); }
            }
            for id in 0..400 {
                prop_assert_eq!(set.contains(id), reference.contains(&id));
            }
        }

        #[test]
        fn content_entries_are_single_bmp_letters_or_numbers(s in "\\PC{0,2}") {
            if is_content_entry(&s) {
                let units: Vec<u16> = s.encode_utf16().collect();
                prop_assert_eq!(units.len(), 1);
                prop_assert!(!"ーｰ〜~".contains(s.as_str()));
            }
        }
    }
}
