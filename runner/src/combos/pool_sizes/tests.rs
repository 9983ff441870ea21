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
fn figures_say_dash_where_unknown_and_csv_leaves_them_empty() {
    let size = PoolSize {
        file: "1.jsonl".into(),
        realms: 1,
        query: String::new(),
        rounds: vec![PoolRound {
            gpu_peak_bytes: Some(3 << 20),
            ..round(2000.0, 50)
        }],
        token_rounds: Vec::new(),
    };
    let markdown = render(std::slice::from_ref(&size), Format::Markdown);
    assert!(
        markdown
            .contains("| 1 | 1 | 2000.0 ms | 1.00x | 25.00 | - | - | - |  | 3 MiB | - | - | - |"),
        "{markdown}"
    );
    let csv = render(&[size], Format::Csv);
    assert_eq!(
        csv.lines().nth(1),
        Some("1,1,2000.00,1.00,25.00,,,,,3.0,,,"),
        "{csv}"
    );
}
