//! Sweeps: the cartesian product of a list of values per parameter, each value checked as a
//! query value would be, in an order that does not depend on how the axes were listed.

use crate::config::{parameter_index, Config, PARAMETER_NAMES};
use crate::error::{CoreError, Result};

/// Expands a sweep from the default configuration: see [`expand_sweep_from`].
pub fn expand_sweep<N, V>(axes: &[(N, Vec<V>)]) -> Result<Vec<Config>>
where
    N: AsRef<str>,
    V: AsRef<str>,
{
    expand_sweep_from(&Config::default(), axes)
}

/// The cartesian product of a list of values per parameter, starting from `base` for the
/// parameters not listed. Every value is validated as a query value would be. The order is
/// stable and independent of the order of `axes`: parameters nest in [`PARAMETER_NAMES`]
/// order (the first varies slowest), values in the order given.
pub fn expand_sweep_from<N, V>(base: &Config, axes: &[(N, Vec<V>)]) -> Result<Vec<Config>>
where
    N: AsRef<str>,
    V: AsRef<str>,
{
    let mut ordered: Vec<(usize, &'static str, &[V])> = Vec::with_capacity(axes.len());
    for (name, values) in axes {
        let name = name.as_ref();
        let index = parameter_index(name)?;
        let parameter = PARAMETER_NAMES[index];
        if ordered.iter().any(|(i, _, _)| *i == index) {
            return Err(CoreError::DuplicateParameter {
                name: name.to_owned(),
            });
        }
        if values.is_empty() {
            return Err(CoreError::EmptySweepAxis { parameter });
        }
        let mut probe = base.clone();
        for (position, value) in values.iter().enumerate() {
            let value = value.as_ref();
            probe.set(parameter, value)?;
            if values[..position].iter().any(|v| v.as_ref() == value) {
                return Err(CoreError::DuplicateSweepValue {
                    parameter,
                    value: value.to_owned(),
                });
            }
        }
        ordered.push((index, parameter, values));
    }
    ordered.sort_by_key(|(index, _, _)| *index);

    let mut configs = vec![base.clone()];
    for (_, parameter, values) in ordered {
        let mut next = Vec::with_capacity(configs.len() * values.len());
        for config in &configs {
            for value in values {
                let mut c = config.clone();
                c.set(parameter, value.as_ref())?;
                next.push(c);
            }
        }
        configs = next;
    }
    // Each value alone may be fine while a combination is not (sync=4 with choose=cpu): the
    // grid is refused with the combination's own message rather than run in part.
    for config in &configs {
        config.check_combination()?;
    }
    Ok(configs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Milliseconds, Poll};

    #[test]
    fn a_grid_with_a_refused_combination_is_refused() {
        let axes = vec![("choose", vec!["cpu", "gpu"]), ("sync", vec!["1", "4"])];
        let error = expand_sweep_from(&Config::default(), &axes)
            .unwrap_err()
            .to_string();
        assert!(error.contains("sync=4 needs choose=gpu"), "{error}");
        let fine = vec![("choose", vec!["gpu"]), ("sync", vec!["1", "4"])];
        assert_eq!(
            expand_sweep_from(&Config::default(), &fine).unwrap().len(),
            2
        );
    }

    #[test]
    fn sweep_is_the_ordered_cartesian_product() {
        let axes = vec![
            ("maxTokens", vec!["8", "16"]),
            ("tier", vec!["242", "121"]),
            ("decoder", vec!["baseline", "fixed-kv", "gather-opt"]),
        ];
        let configs = expand_sweep(&axes).unwrap();
        assert_eq!(configs.len(), 12);
        // tier varies slowest (first in PARAMETER_NAMES), maxTokens fastest.
        let keys: Vec<_> = configs
            .iter()
            .map(|c| (c.tier.as_str(), c.decoder.as_str(), c.max_tokens))
            .collect();
        assert_eq!(keys[0], ("242", "baseline", 8));
        assert_eq!(keys[1], ("242", "baseline", 16));
        assert_eq!(keys[2], ("242", "fixed-kv", 8));
        assert_eq!(keys[11], ("121", "gather-opt", 16));
        // The order of the axes does not matter.
        let mut reversed = axes.clone();
        reversed.reverse();
        assert_eq!(expand_sweep(&reversed).unwrap(), configs);
        // No axes: the one base config.
        let none: Vec<(&str, Vec<&str>)> = Vec::new();
        assert_eq!(expand_sweep(&none).unwrap(), vec![Config::default()]);
    }

    #[test]
    fn sweep_rejects_bad_axes() {
        let err = expand_sweep(&[("tier", vec!["121", "3/0"])])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`tier`") && err.contains("A-Z a-z 0-9 _ -"),
            "{err}"
        );
        let err = expand_sweep(&[("tier", Vec::<&str>::new())]).unwrap_err();
        assert_eq!(err, CoreError::EmptySweepAxis { parameter: "tier" });
        let err = expand_sweep(&[("tier", vec!["121", "121"])]).unwrap_err();
        assert!(matches!(err, CoreError::DuplicateSweepValue { .. }));
        let err = expand_sweep(&[("tier", vec!["121"]), ("tier", vec!["242"])]).unwrap_err();
        assert!(matches!(err, CoreError::DuplicateParameter { .. }));
        assert!(expand_sweep(&[("speed", vec!["1"])]).is_err());
    }

    #[test]
    fn sweep_takes_the_added_parameters() {
        let axes = [("kickMs", vec!["2", "0.25"]), ("poll", vec!["kick"])];
        let configs = expand_sweep(&axes).unwrap();
        let kicks: Vec<_> = configs.iter().map(|c| (c.poll, c.kick_ms)).collect();
        assert_eq!(
            kicks,
            [
                (Poll::Kick, Milliseconds::from_micros(2000)),
                (Poll::Kick, Milliseconds::from_micros(250))
            ]
        );
        assert_eq!(configs[1].to_query(), "poll=kick&kickMs=0.25");
        let err = expand_sweep(&[("repeat", vec!["1", "0"])])
            .unwrap_err()
            .to_string();
        assert!(err.contains("`repeat`") && err.contains("1..=100"), "{err}");
    }
}
