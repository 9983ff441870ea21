use super::*;

fn round(set_ms: f64, steps: usize) -> PoolRound {
    PoolRound {
        set_ms: Some(set_ms),
        decode_steps: steps,
        ..PoolRound::default()
    }
}

#[test]
fn the_rate_is_every_step_over_the_whole_set() {
    assert_eq!(round(2000.0, 50).steps_per_second(), Some(25.0));
    assert_eq!(round(0.0, 50).steps_per_second(), None);
    assert_eq!(PoolRound::default().steps_per_second(), None);
}

#[test]
fn figures_say_dash_where_unknown() {
    assert_eq!(bytes_cell(Some(3.0 * 1024.0 * 1024.0)), "3 MiB");
    assert_eq!(bytes_cell(None), "-");
    assert_eq!(ms(None), "-");
}
