//! Accuracy per style, for a set whose cases name one (`style` in its `cases.json`, as the
//! style sets do): each style's cases summarized exactly as the whole set is, so a set that
//! mixes balloons, sound effects and tilted lines says which of them the model misses.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::summary::{summarize, CaseInput, SummaryOptions};

/// Cases with no style in a set where others have one.
pub const UNSTYLED: &str = "(none)";

/// One style's accuracy figures, with the summary's names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StyleSummary {
    pub cases: usize,
    #[serde(rename = "nCER")]
    pub ncer: Option<f64>,
    pub distance: usize,
    pub characters: usize,
    pub exact: usize,
    pub trailing_extras: usize,
}

/// `cases[i]` has style `styles[i]`; None when no case has a style.
pub fn per_style(
    cases: &[CaseInput],
    styles: &[Option<String>],
) -> Result<Option<BTreeMap<String, StyleSummary>>> {
    if styles.iter().all(Option::is_none) {
        return Ok(None);
    }
    let mut groups: BTreeMap<String, Vec<CaseInput>> = BTreeMap::new();
    for (case, style) in cases.iter().zip(styles) {
        let name = style.clone().unwrap_or_else(|| UNSTYLED.to_owned());
        groups.entry(name).or_default().push(case.clone());
    }
    let mut out = BTreeMap::new();
    for (style, group) in groups {
        let s = summarize(
            &group,
            SummaryOptions {
                accuracy_applicable: true,
            },
        )?;
        out.insert(
            style,
            StyleSummary {
                cases: s.cases,
                ncer: s.ncer,
                distance: s.distance.unwrap_or(0),
                characters: s.characters,
                exact: s.exact.unwrap_or(0),
                trailing_extras: s.trailing_extras.unwrap_or(0),
            },
        );
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, expected: &str, actual: &str) -> CaseInput {
        CaseInput {
            id: id.into(),
            expected: expected.into(),
            actual: actual.into(),
            total_ms: 1.0,
            tokens: None,
            decode_ms: None,
        }
    }

    #[test]
    fn each_style_is_summarized_as_the_set_is() {
        let cases = [
            case("1", "いってらっしゃい", "いってらっしゃい！！"),
            case("2", "ドカーン", "ドカーン"),
            case("3", "バタバタ", "パタパタ"),
            case("4", "あ", "あ"),
        ];
        let styles = [
            Some("ending".to_owned()),
            Some("sfx".to_owned()),
            Some("sfx".to_owned()),
            None,
        ];
        let by_style = per_style(&cases, &styles).unwrap().unwrap();
        assert_eq!(
            by_style.keys().collect::<Vec<_>>(),
            ["(none)", "ending", "sfx"]
        );
        let sfx = &by_style["sfx"];
        assert_eq!(
            (
                sfx.cases,
                sfx.distance,
                sfx.characters,
                sfx.exact,
                sfx.trailing_extras
            ),
            (2, 2, 8, 1, 0)
        );
        assert_eq!(sfx.ncer, Some(2.0 / 8.0));
        assert_eq!(
            (by_style["ending"].trailing_extras, by_style["ending"].exact),
            (1, 0)
        );
        assert_eq!(by_style[UNSTYLED].exact, 1);
        // A set whose cases name no style has no breakdown.
        assert_eq!(per_style(&cases, &[None, None, None, None]).unwrap(), None);
    }
}
