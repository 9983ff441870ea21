//! `ocr-bench plan --base QUERY COMBINATION...`: each combination's parameters over the base's,
//! parsed and checked by the core, as the queries to run (canonical, one per configuration).

use ocr_bench_core::error::quoted;
use ocr_bench_core::parse_query;

use super::InputError;

/// One configuration to run: the combination as given and the query the runner will send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub given: String,
    /// [`ocr_bench_core::Config::to_query`] of the merged query ("" for the defaults).
    pub query: String,
}

/// The plan, and the combinations dropped because an earlier one is the same configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub planned: Vec<Planned>,
    /// `(dropped, kept)`: the given text of each.
    pub duplicates: Vec<(String, String)>,
}

/// The name of one `name=value` piece of a query (a leading `?` dropped).
fn name_of(piece: &str) -> &str {
    piece.split_once('=').map_or(piece, |(name, _)| name)
}

fn pieces(query: &str) -> impl Iterator<Item = &str> {
    let query = query.strip_prefix('?').unwrap_or(query);
    query.split('&').filter(|piece| !piece.is_empty())
}

/// The base's pieces whose parameter the combination does not set, then the combination's:
/// a combination's value wins over the base's. A parameter given twice within one of them
/// stays twice, so the core refuses it.
pub fn merge(base: &str, combination: &str) -> String {
    let own: Vec<&str> = pieces(combination).map(name_of).collect();
    pieces(base)
        .filter(|piece| !own.contains(&name_of(piece)))
        .chain(pieces(combination))
        .collect::<Vec<_>>()
        .join("&")
}

/// Every combination over the base, in order; the first bad one is refused with the core's
/// message, naming the combination.
pub fn plan(base: &str, combinations: &[String]) -> Result<Plan, InputError> {
    if combinations.is_empty() {
        return Err(InputError(
            "no combination given; give at least one query, such as 'poll=kick'".to_owned(),
        ));
    }
    let mut planned: Vec<Planned> = Vec::new();
    let mut duplicates = Vec::new();
    for (index, given) in combinations.iter().enumerate() {
        let merged = merge(base, given);
        let config = parse_query(&merged).map_err(|e| {
            InputError(format!(
                "combination {} {} over the base {}: {e}",
                index + 1,
                quoted(given),
                quoted(base)
            ))
        })?;
        let query = config.to_query();
        match planned.iter().find(|p| p.query == query) {
            Some(earlier) => duplicates.push((given.clone(), earlier.given.clone())),
            None => planned.push(Planned {
                given: given.clone(),
                query,
            }),
        }
    }
    Ok(Plan {
        planned,
        duplicates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_combination_overrides_the_base_and_keeps_the_rest() {
        assert_eq!(
            merge("cases=smoke2&maxTokens=4&poll=none", "poll=kick&choose=gpu"),
            "cases=smoke2&maxTokens=4&poll=kick&choose=gpu"
        );
        assert_eq!(merge("?cases=smoke2", ""), "cases=smoke2");
        assert_eq!(merge("", "?sync=4&&choose=gpu"), "sync=4&choose=gpu");
    }

    #[test]
    fn the_queries_are_canonical_and_the_seed_loop_is_the_base_alone() {
        let plan = plan(
            "cases=smoke2&maxTokens=4",
            &strings(&[
                "choose=cpu&poll=none&decoder=baseline",
                "sync=4&choose=gpu&poll=kick&decoder=nbits-int4",
            ]),
        )
        .unwrap();
        let queries: Vec<&str> = plan.planned.iter().map(|p| p.query.as_str()).collect();
        assert_eq!(
            queries,
            [
                "cases=smoke2&maxTokens=4",
                "decoder=nbits-int4&cases=smoke2&maxTokens=4&poll=kick&choose=gpu&sync=4"
            ]
        );
        assert_eq!(
            plan.planned[1].given,
            "sync=4&choose=gpu&poll=kick&decoder=nbits-int4"
        );
        assert!(plan.duplicates.is_empty());
    }

    #[test]
    fn a_second_spelling_of_one_configuration_runs_once() {
        let plan = plan(
            "poll=kick",
            &strings(&["choose=cpu", "", "poll=kick&sync=1", "choose=gpu"]),
        )
        .unwrap();
        assert_eq!(plan.planned.len(), 2);
        assert_eq!(
            plan.duplicates,
            [
                ("".to_owned(), "choose=cpu".to_owned()),
                ("poll=kick&sync=1".to_owned(), "choose=cpu".to_owned())
            ]
        );
    }

    #[test]
    fn bad_input_is_refused_with_the_cores_message_naming_the_combination() {
        let refused = plan("cases=smoke2", &strings(&["poll=kick", "sync=4"])).unwrap_err();
        assert!(
            refused
                .0
                .starts_with("combination 2 \"sync=4\" over the base \"cases=smoke2\""),
            "{refused}"
        );
        assert!(refused.0.contains("sync=4 needs choose=gpu"), "{refused}");

        let unknown = plan("", &strings(&["decoder=nbits-int4&speed=max"])).unwrap_err();
        assert!(unknown.0.contains("`speed`"), "{unknown}");
        assert!(
            unknown.0.contains("decoder"),
            "the allowed names: {unknown}"
        );

        // A decoder's name is checked against the manifest by `plan_command`, which reads it.
        let value = plan("cases=smoke2", &strings(&["poll=fast"])).unwrap_err();
        assert!(value.0.contains("fast"), "{value}");
        assert!(
            value.0.contains("none, kick"),
            "the allowed values: {value}"
        );

        let twice = plan("", &strings(&["poll=kick&poll=none"])).unwrap_err();
        assert!(twice.0.contains("poll"), "{twice}");

        let bad_base = plan("maxTokens=0", &strings(&["poll=kick"])).unwrap_err();
        assert!(bad_base.0.contains("maxTokens"), "{bad_base}");

        let none = plan("", &[]).unwrap_err();
        assert!(none.0.contains("no combination"), "{none}");
    }
}
