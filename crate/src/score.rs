//! Scoring one case: the seed's `normalize` and `editDistance`.
//!
//! `normalize` is the seed's `text.normalize("NFKC").replace(/\s+/g, "")` exactly.
//! `edit_distance` is Levenshtein over Unicode scalar values, where the seed's loop indexed
//! UTF-16 code units: a character outside the Basic Multilingual Plane counts once here and
//! twice in the seed (and half of a mismatched pair could "match" there). For BMP-only text,
//! which is all of the seed's evaluation set, both give the same number.

use unicode_normalization::UnicodeNormalization;

/// JS `\s`: WhiteSpace and LineTerminator of ECMA-262. Not U+0085 (NEL), which Rust's
/// `char::is_whitespace` includes; U+FEFF, which it leaves out.
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// NFKC, then every JS-whitespace character removed.
pub fn normalize(text: &str) -> String {
    text.nfkc().filter(|&c| !is_js_whitespace(c)).collect()
}

/// Levenshtein distance (insert, delete, substitute, each 1) over Unicode scalar values.
pub fn edit_distance(left: &str, right: &str) -> usize {
    strsim::levenshtein(left, right)
}

/// The length the seed divides by: here the scalar count (the seed's `.length` counted
/// UTF-16 units).
pub fn characters(text: &str) -> usize {
    text.chars().count()
}

/// One case compared: normalized reference vs normalized reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaseScore {
    pub distance: usize,
    pub characters: usize,
    pub exact: bool,
    /// The reading is the expected text followed by one or more extra characters: the model
    /// read on past the end of the text (a balloon's tail, a panel border), which an exact
    /// reading with junk after it turns into a failure.
    pub trailing_extras: bool,
}

pub fn score_case(expected: &str, actual: &str) -> CaseScore {
    let expected = normalize(expected);
    let actual = normalize(actual);
    CaseScore {
        distance: edit_distance(&expected, &actual),
        characters: characters(&expected),
        exact: expected == actual,
        trailing_extras: actual.len() > expected.len() && actual.starts_with(&expected),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The textbook full-matrix Levenshtein, over chars.
    fn naive_distance(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                d[i][j] = (d[i - 1][j] + 1)
                    .min(d[i][j - 1] + 1)
                    .min(d[i - 1][j - 1] + cost);
            }
        }
        d[a.len()][b.len()]
    }

    #[test]
    fn whitespace_is_the_js_set() {
        let js = "\t\n\u{B}\u{C}\r \u{A0}\u{1680}\u{2000}\u{2001}\u{2002}\u{2003}\u{2004}\u{2005}\
                  \u{2006}\u{2007}\u{2008}\u{2009}\u{200A}\u{2028}\u{2029}\u{202F}\u{205F}\u{3000}\u{FEFF}";
        assert!(js.chars().all(is_js_whitespace));
        for c in ['\u{85}', '\u{180E}', '\u{200B}', '\u{2060}', 'a', '_'] {
            assert!(!is_js_whitespace(c), "{c:?}");
        }
        assert_eq!(normalize("a\u{3000}b\u{FEFF}c\u{85}"), "abc\u{85}");
    }

    #[test]
    fn normalize_is_nfkc_without_spaces() {
        assert_eq!(normalize("Ｅｈ～Ｉ ｄｏｎ＇ｔ"), "Eh~Idon't");
        assert_eq!(normalize("ｶﾅﾃﾞ"), "カナデ");
        assert_eq!(normalize("．．．２級"), "...2級");
        assert_eq!(normalize("①"), "1");
        // NFKC turns U+2003 into a space first; every kind of space goes.
        assert_eq!(normalize(" \u{2003}x\u{3000}y \n"), "xy");
    }

    #[test]
    fn trailing_extras_is_the_expected_text_and_more() {
        let extras = |expected, actual| score_case(expected, actual).trailing_extras;
        assert!(extras("いってらっしゃい", "いってらっしゃい！！"));
        assert!(extras("", "ケ"), "any reading of a text-free crop is extra");
        assert!(extras("ＯＫ", "OK―"), "after the scoring's normalization");
        assert!(!extras("いってらっしゃい", "いってらっしゃい"), "exact");
        assert!(!extras("", ""));
        assert!(!extras("いってらっしゃい", "いってらっしゃ"), "short");
        assert!(
            !extras("いってらっしゃい", "！いってらっしゃい"),
            "extra before the text"
        );
        assert!(
            !extras("いってらっしゃい", "いってらしゃい！！"),
            "a miss inside the text"
        );
        assert!(
            extras("ＯＫ", "ＯＫ　！"),
            "whitespace goes before the comparison"
        );
    }

    #[test]
    fn seed_cases_score_as_expected() {
        let s = score_case("建設会社社員行方", "建設会社社員行方");
        assert_eq!(
            s,
            CaseScore {
                distance: 0,
                characters: 8,
                exact: true,
                trailing_extras: false
            }
        );
        let s = score_case("パチパチパチパチ", "パチパチパチ");
        assert_eq!(
            s,
            CaseScore {
                distance: 2,
                characters: 8,
                exact: false,
                trailing_extras: false
            }
        );
        // Full-width reference, half-width reading: equal after NFKC.
        assert!(score_case("Ｅｈ～Ｉｄｏｎ＇ｔ", "Eh~Idon't").exact);
        // Astral characters count once (the seed: twice).
        let s = score_case("𠮷野家", "吉野家");
        assert_eq!(
            s,
            CaseScore {
                distance: 1,
                characters: 3,
                exact: false,
                trailing_extras: false
            }
        );
        assert_eq!(edit_distance("", "abc"), 3);
    }

    proptest! {
        #[test]
        fn distance_matches_the_naive_matrix(a in "[abあア𠮷 ]{0,12}", b in "[abあア𠮷 ]{0,12}") {
            prop_assert_eq!(edit_distance(&a, &b), naive_distance(&a, &b));
        }

        #[test]
        fn distance_is_a_metric(a in "\\PC{0,8}", b in "\\PC{0,8}", c in "\\PC{0,8}") {
            let ab = edit_distance(&a, &b);
            prop_assert_eq!(ab, edit_distance(&b, &a));
            prop_assert_eq!(ab == 0, a == b);
            prop_assert!(edit_distance(&a, &c) <= ab + edit_distance(&b, &c));
        }

        #[test]
        fn whitespace_matches_an_independent_definition(s in "\\PC{0,20}|[\\s\u{85}\u{FEFF}\u{180E}a]{0,10}") {
            // JS `\s` is Unicode White_Space (Rust's `is_whitespace`) without U+0085 (NEL),
            // plus U+FEFF (ZWNBSP): the same set stated another way.
            let reference = |c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{FEFF}';
            for c in s.chars() {
                prop_assert_eq!(is_js_whitespace(c), reference(c), "{:?}", c);
            }
            let n = normalize(&s);
            prop_assert!(!n.chars().any(reference));
        }
    }
}
