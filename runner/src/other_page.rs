//! Another page's figures: what `table`, `compare`, `report` and `run` can read from a result
//! that is not this page's summary (the original experiment's page, a person's own page, an
//! older version of this one), kept as posted. Every figure is optional: what is absent is
//! named by `lacks`, never made up. `docs/benchmark-protocol.md` ("Another page's result")
//! lists the fields read.

use ocr_bench_core::stats::median;
use serde_json::Value;

/// One case as another page reported it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OtherCase {
    pub id: String,
    pub expected: Option<String>,
    /// `actual`, else `text`.
    pub actual: Option<String>,
    pub distance: Option<usize>,
    pub characters: Option<usize>,
    pub token_ids: Option<Vec<i64>>,
    /// `tokens` when it is a count, else the length of `tokenIds`.
    pub tokens: Option<usize>,
    pub vision_ms: Option<f64>,
    pub prefill_ms: Option<f64>,
    pub decode_ms: Option<f64>,
    pub total_ms: Option<f64>,
    /// `timeToFirstTokenMs`: vision, the first decoder step and its choice, as this page's.
    pub time_to_first_token_ms: Option<f64>,
}

/// The figures of another page's result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OtherFigures {
    pub run_id: Option<String>,
    /// `nCER` as posted, else the cases' distance over their characters.
    pub ncer: Option<f64>,
    /// `medianMs` as posted, else the median of the cases' `totalMs`.
    pub median_case_ms: Option<f64>,
    /// `results`, in the page's order.
    pub cases: Vec<OtherCase>,
    /// The length of `memorySamples` (the page's own heap readings).
    pub memory_samples: Option<usize>,
    /// Whether per-token latencies (this page's `decodeProbe`) are there.
    pub token_latencies: bool,
    /// `decodeProbe.tokenLatency.p50Ms`: the per-token p50 over every case, as this page's.
    pub token_p50_ms: Option<f64>,
    /// What read the model, where the page names it: `transformersVersion` and `ortVersion`
    /// (the transformers.js peer page's).
    pub runtime: Option<String>,
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn number(value: &Value, key: &str) -> Option<f64> {
    value
        .get(key)
        .and_then(Value::as_f64)
        .filter(|v| v.is_finite())
}

fn count(value: &Value, key: &str) -> Option<usize> {
    value
        .get(key)
        .and_then(Value::as_u64)
        .and_then(|v| usize::try_from(v).ok())
}

impl OtherCase {
    fn read(case: &Value) -> Option<Self> {
        let id = match case.get("id")? {
            Value::String(id) => id.clone(),
            Value::Number(id) => id.to_string(),
            _ => return None,
        };
        let token_ids: Option<Vec<i64>> = case
            .get("tokenIds")
            .and_then(Value::as_array)
            .and_then(|ids| ids.iter().map(Value::as_i64).collect());
        Some(Self {
            id,
            expected: text(case, "expected"),
            actual: text(case, "actual").or_else(|| text(case, "text")),
            distance: count(case, "distance"),
            characters: count(case, "characters"),
            tokens: count(case, "tokens").or_else(|| token_ids.as_ref().map(Vec::len)),
            token_ids,
            vision_ms: number(case, "visionMs"),
            prefill_ms: number(case, "prefillMs"),
            decode_ms: number(case, "decodeMs"),
            total_ms: number(case, "totalMs"),
            time_to_first_token_ms: number(case, "timeToFirstTokenMs"),
        })
    }
}

/// "transformers.js 4.3.2, onnxruntime-web 1.31.0-dev…" from the versions a page posted.
fn runtime(posted: &Value) -> Option<String> {
    let named: Vec<String> = [
        ("transformers.js", "transformersVersion"),
        ("onnxruntime-web", "ortVersion"),
    ]
    .iter()
    .filter_map(|(name, key)| text(posted, key).map(|version| format!("{name} {version}")))
    .collect();
    (!named.is_empty()).then(|| named.join(", "))
}

impl OtherFigures {
    /// Reads what is there; a field of another type than expected counts as absent.
    pub fn read(posted: &Value) -> Self {
        let cases: Vec<OtherCase> = posted
            .get("results")
            .and_then(Value::as_array)
            .map(|cases| cases.iter().filter_map(OtherCase::read).collect())
            .unwrap_or_default();
        let scored: Vec<(usize, usize)> = cases
            .iter()
            .filter_map(|c| Some((c.distance?, c.characters?)))
            .collect();
        let characters: usize = scored.iter().map(|(_, c)| c).sum();
        let scored_ncer = (!scored.is_empty() && scored.len() == cases.len() && characters > 0)
            .then(|| scored.iter().map(|(d, _)| d).sum::<usize>() as f64 / characters as f64);
        Self {
            run_id: text(posted, "runId"),
            ncer: number(posted, "nCER").or(scored_ncer),
            median_case_ms: number(posted, "medianMs")
                .or_else(|| median(cases.iter().map(|c| c.total_ms))),
            memory_samples: posted
                .get("memorySamples")
                .and_then(Value::as_array)
                .map(Vec::len),
            token_latencies: posted.get("decodeProbe").is_some_and(Value::is_object),
            token_p50_ms: posted
                .pointer("/decodeProbe/tokenLatency")
                .and_then(|stats| number(stats, "p50Ms")),
            runtime: runtime(posted),
            cases,
        }
    }

    /// Whether every case has its token ids (a page that has none can be compared by text only).
    pub fn has_token_ids(&self) -> bool {
        !self.cases.is_empty() && self.cases.iter().all(|c| c.token_ids.is_some())
    }

    /// The cases' decode time over their tokens: the same figure as this page's `msPerToken`.
    pub fn ms_per_token(&self) -> Option<f64> {
        let timed: Vec<(f64, usize)> = self
            .cases
            .iter()
            .filter_map(|c| Some((c.decode_ms?, c.tokens?)))
            .collect();
        let tokens: usize = timed.iter().map(|(_, t)| t).sum();
        (tokens > 0).then(|| timed.iter().map(|(ms, _)| ms).sum::<f64>() / tokens as f64)
    }

    /// The median over the cases of one per-case time.
    pub fn case_p50(&self, time: impl Fn(&OtherCase) -> Option<f64>) -> Option<f64> {
        median(self.cases.iter().map(time))
    }

    /// What this page's summary has and these figures do not, for the reader.
    pub fn lacks(&self) -> Vec<&'static str> {
        let mut lacks = Vec::new();
        if self.cases.is_empty() {
            lacks.push("per-case results");
        } else {
            let all = |f: fn(&OtherCase) -> bool| self.cases.iter().all(f);
            if !self.has_token_ids() {
                lacks.push("token ids");
            }
            if !all(|c| c.actual.is_some()) {
                lacks.push("per-case text");
            }
            if !all(|c| c.total_ms.is_some()) {
                lacks.push("per-case times");
            }
        }
        if self.ncer.is_none() {
            lacks.push("nCER");
        }
        if !self.token_latencies {
            lacks.push("per-token latencies");
        }
        if self.memory_samples.is_none() {
            lacks.push("memory samples");
        }
        lacks.push("configuration");
        lacks
    }

    /// One line: what the figures say and what they lack.
    pub fn describe(&self) -> String {
        let ms = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"));
        let mut parts = vec![format!("{} case(s)", self.cases.len())];
        if let Some(runtime) = &self.runtime {
            parts.push(runtime.clone());
        }
        if let Some(ncer) = self.ncer {
            parts.push(format!("nCER {ncer:.4}"));
        }
        if let Some(median) = self.median_case_ms {
            parts.push(format!("median case {median:.1} ms"));
        }
        if self.cases.iter().any(|c| c.total_ms.is_some()) {
            parts.push(format!(
                "per case p50 vision {} / prefill {} / decode {} / total {} ms",
                ms(self.case_p50(|c| c.vision_ms)),
                ms(self.case_p50(|c| c.prefill_ms)),
                ms(self.case_p50(|c| c.decode_ms)),
                ms(self.case_p50(|c| c.total_ms)),
            ));
        }
        if let Some(p50) = self.token_p50_ms {
            parts.push(format!("per-token p50 {p50:.2} ms"));
        }
        if let Some(per_token) = self.ms_per_token() {
            parts.push(format!("{per_token:.2} ms per decode step"));
        }
        if let Some(samples) = self.memory_samples {
            parts.push(format!("{samples} memory sample(s) of its own"));
        }
        format!(
            "another page's figures: {}; it has no {}",
            parts.join(", "),
            self.lacks().join(", no ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// One run of a page posting the original experiment page's summary shape
    /// (docs/benchmark-protocol.md), as `run` writes it: a mark, the result, the closing record.
    const OTHER_PAGE: &str = include_str!("../tests/data/other-page.jsonl");

    /// The summary that run posted.
    fn original_shape() -> Value {
        OTHER_PAGE
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|r| r["kind"] == "result")
            .unwrap()["summary"]
            .clone()
    }

    #[test]
    fn the_original_pages_shape_gives_its_accuracy_and_times_and_names_the_token_ids_it_lacks() {
        let figures = OtherFigures::read(&original_shape());
        assert_eq!(
            figures.run_id.as_deref(),
            Some("tier-121-lean-url-staged-baseline-full-1")
        );
        assert_eq!(figures.ncer, Some(0.25));
        assert_eq!(figures.median_case_ms, Some(80.0));
        assert_eq!(figures.cases.len(), 2);
        assert_eq!(figures.cases[1].actual.as_deref(), Some("a"));
        assert_eq!(figures.ms_per_token(), Some(15.0));
        assert_eq!(figures.case_p50(|c| c.total_ms), Some(70.0));
        assert!(!figures.has_token_ids());
        assert_eq!(
            figures.lacks(),
            ["token ids", "per-token latencies", "configuration"]
        );
        let line = figures.describe();
        assert!(
            line.contains("nCER 0.2500")
                && line.contains(
                    "per case p50 vision 10.0 / prefill 20.0 / decode 30.0 / total 70.0 ms"
                )
                && line.contains("it has no token ids"),
            "{line}"
        );
    }

    #[test]
    fn table_report_and_compare_read_another_pages_run_and_say_what_it_lacks() {
        let text = OTHER_PAGE;
        let file = std::path::Path::new("original.jsonl");

        let combination = crate::combos::table::parse_combination(text, file).unwrap();
        let table = crate::combos::table::table(&combination, &[], 0.005).render();
        assert!(
            table.contains("| original.html (the seed's loop) | 1 | - | - | - | 15.00 | 0.2500 | n/a (no token ids) | - |")
                && table.contains("original.html (original.jsonl): another page's figures: 2 case(s)")
                && table.contains("it has no token ids, no per-token latencies, no configuration"),
            "{table}"
        );

        let read = crate::report_html::ResultsFile::parse(text, file).unwrap();
        let markdown = crate::report_html::markdown(&[read]);
        assert!(
            markdown.contains("| original.jsonl | original.html | tier-121-lean-url-staged-baseline-full-1 | 2 | 0.2500 | 80.0 | 15.0 | 10.0 / 20.0 / 30.0 / 70.0 | - | token ids, per-token latencies, configuration |"),
            "{markdown}"
        );

        let run = crate::compare::parse_run(text, file, None).unwrap();
        let compared = crate::compare::compare(run.clone(), run).render();
        assert!(
            compared.contains("A and B have no token ids")
                && compared.contains("by text, 2 of 2 shared cases read the same"),
            "{compared}"
        );
    }

    #[test]
    fn run_prints_another_pages_cases_and_what_it_lacks() {
        let text = crate::report::run_report(
            "Mozilla Firefox 153.8.0esr",
            "",
            &crate::record::Posted::Other(original_shape()),
            &crate::record::ProcessMemoryAnswer::not_sampled(),
            2.5,
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Mozilla Firefox 153.8.0esr · no query · in 2.5 s");
        assert_eq!(
            lines[3],
            "02            2         10          20         30        80  a"
        );
        assert!(
            lines[4].starts_with("another page's figures: 2 case(s), nCER 0.2500")
                && lines[5].starts_with("process memory: the browser was not started by ocr-bench"),
            "{text}"
        );
    }

    #[test]
    fn the_peer_pages_per_token_p50_first_token_and_versions_are_read() {
        let case = |id: &str, ttft: f64, total: f64| {
            json!({ "id": id, "expected": "ab", "actual": "ab", "distance": 0, "characters": 2,
                    "tokenIds": [7, 8], "tokens": 2, "visionMs": 4.0, "prefillMs": ttft - 4.0,
                    "decodeMs": total - ttft, "totalMs": total, "timeToFirstTokenMs": ttft })
        };
        let posted = json!({
            "runId": "transformers-js-1", "transformersVersion": "4.3.2",
            "ortVersion": "1.31.0-dev.20260914-8d85527a0", "nCER": 0.0,
            "results": [case("1", 50.0, 80.0), case("2", 10.0, 20.0), case("3", 12.0, 24.0)],
            "decodeProbe": { "tokenLatency": { "count": 3, "minMs": 5.0, "p50Ms": 6.5, "p90Ms": 9.0,
                                               "maxMs": 9.0, "meanMs": 7.0 } },
        });
        let figures = OtherFigures::read(&posted);
        assert_eq!(figures.token_p50_ms, Some(6.5));
        assert_eq!(figures.cases[0].time_to_first_token_ms, Some(50.0));
        assert!(figures.has_token_ids() && figures.token_latencies);
        let line = figures.describe();
        assert!(
            line.contains(
                "3 case(s), transformers.js 4.3.2, onnxruntime-web 1.31.0-dev.20260914-8d85527a0"
            ) && line.contains("per-token p50 6.50 ms")
                && !line.contains("no per-token latencies"),
            "{line}"
        );
    }

    #[test]
    fn figures_absent_or_of_another_type_are_named_not_made_up() {
        let mut posted = original_shape();
        posted["nCER"] = "low".into();
        posted.as_object_mut().unwrap().remove("medianMs");
        posted["results"][1]
            .as_object_mut()
            .unwrap()
            .remove("distance");
        posted["results"][0]["tokenIds"] = json!([5, 6]);
        let figures = OtherFigures::read(&posted);
        // One case unscored: no nCER from the cases either.
        assert_eq!(figures.ncer, None);
        assert_eq!(figures.median_case_ms, Some(70.0));
        assert_eq!(figures.cases[0].token_ids, Some(vec![5, 6]));
        assert!(!figures.has_token_ids(), "one case of two has them");
        assert!(figures.lacks().contains(&"nCER"));

        let bare = OtherFigures::read(&json!({ "runId": "r", "preprocessMs": 1.5 }));
        assert_eq!(
            bare.lacks(),
            [
                "per-case results",
                "nCER",
                "per-token latencies",
                "memory samples",
                "configuration"
            ]
        );
        assert_eq!(bare.ms_per_token(), None);
    }
}
