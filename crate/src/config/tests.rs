use super::*;
use proptest::prelude::*;

#[test]
fn empty_query_is_the_seed_default() {
    let c = parse_query("").unwrap();
    assert_eq!(c, Config::default());
    assert_eq!(c.tier, "121");
    assert_eq!(c.memory, Memory::Lean);
    assert_eq!(c.loader, Loader::Url);
    assert_eq!(c.schedule, Schedule::Staged);
    assert_eq!(c.decoder, "baseline");
    assert_eq!(c.scope, Scope::Full);
    assert_eq!(c.cases, "hayai13");
    assert_eq!(c.manifest, "/models/manifest.json");
    assert_eq!(c.weights, Weights::Embedded);
    assert_eq!(c.max_tokens, 128);
    assert_eq!(c.poll, Poll::Plain);
    assert_eq!(c.kick_ms, Milliseconds::from_micros(500));
    assert_eq!(c.warmup, 0);
    assert_eq!(c.repeat, 1);
    assert_eq!(c.profile, Profile::Off);
    assert_eq!(c.choose, Choose::Cpu);
    assert_eq!(c.sync, 1);
    assert_eq!(c.verify, Verify::Off);
    assert_eq!(c.capture, Capture::Off);
    assert_eq!(c.realm, Realm::Page);
    assert_eq!(parse_query("?").unwrap(), Config::default());
    assert_eq!(c.to_query(), "");
}

#[test]
fn parses_every_parameter() {
    let c = parse_query(
        "?tier=242&memory=default&loader=bytes&schedule=resident&decoder=fixed-kv\
         &scope=decoder&cases=short_3&manifest=%2Fm%2Fx.json&weights=external&maxTokens=8",
    )
    .unwrap();
    assert_eq!(c.tier, "242");
    assert_eq!(c.memory, Memory::Default);
    assert_eq!(c.loader, Loader::Bytes);
    assert_eq!(c.schedule, Schedule::Resident);
    assert_eq!(c.decoder, "fixed-kv");
    assert_eq!(c.scope, Scope::Decoder);
    assert_eq!(c.cases, "short_3");
    assert_eq!(c.manifest, "/m/x.json");
    assert_eq!(c.weights, Weights::External);
    assert_eq!(c.max_tokens, 8);
}

#[test]
fn decodes_like_url_search_params() {
    // `+` is a space, so a manifest URL with `+` must be sent as %2B.
    let c = parse_query("manifest=a%2Bb.json&decoder=gather%2Dopt").unwrap();
    assert_eq!(c.manifest, "a+b.json");
    assert_eq!(c.decoder, "gather-opt");
    let err = parse_query("manifest=a+b.json").unwrap_err();
    assert!(err.to_string().contains("manifest"), "{err}");
    // Empty pieces are skipped, as URLSearchParams does.
    assert_eq!(parse_query("&&tier=242&").unwrap().tier, "242");
}

#[test]
fn errors_name_the_parameter_and_the_allowed_values() {
    // Tier and decoder are names the manifest checks (manifest.rs); the query refuses only
    // what no manifest could name.
    let err = parse_query("tier=9/9").unwrap_err().to_string();
    assert!(
        err.contains("`tier`") && err.contains("A-Z a-z 0-9 _ -"),
        "{err}"
    );
    let err = parse_query("decoder=a%20b").unwrap_err().to_string();
    assert!(
        err.contains("`decoder`") && err.contains("a name of 1 to 64"),
        "{err}"
    );
    assert_eq!(
        parse_query("decoder=my-decoder").unwrap().decoder,
        "my-decoder"
    );
    let err = parse_query("colour=red").unwrap_err().to_string();
    assert!(
        err.contains("`colour`") && err.contains("maxTokens"),
        "{err}"
    );
    let err = parse_query("tier=121&tier=242").unwrap_err();
    assert_eq!(
        err,
        CoreError::DuplicateParameter {
            name: "tier".into()
        }
    );
    for bad in ["0", "129", "-1", "+5", " 5", "5.0", "", "99999999999"] {
        let err = parse_query(&format!("maxTokens={bad}"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("maxTokens") && err.contains("1..=128"),
            "{bad}: {err}"
        );
    }
    for bad in ["", "a/b", "..", "a b", "é"] {
        let query = format!("cases={}", urlencode(bad));
        let err = parse_query(&query).unwrap_err().to_string();
        assert!(err.contains("`cases`"), "{bad}: {err}");
    }
    // Case matters, as in the seed's Set lookups.
    assert!(parse_query("scope=Full").is_err());
    assert!(parse_query("Tier=121").is_err());
}

fn urlencode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[test]
fn full_query_lists_everything_and_parses_back() {
    let c = Config::default();
    let q = c.to_full_query();
    assert!(q.starts_with("tier=121&memory=lean"), "{q}");
    // The seed's ten first, then the additive ten at the end of the order.
    assert!(
        q.ends_with(
            "maxTokens=128&poll=none&kickMs=0.5&warmup=0&repeat=1&profile=none&choose=cpu&sync=1&verify=none&capture=off&realm=page&pool=1&ort=1.30.0&release=all"
        ),
        "{q}"
    );
    assert_eq!(parse_query(&q).unwrap(), c);
}

#[test]
fn serde_uses_camel_case_and_query_spellings() {
    let c = parse_query("tier=242&maxTokens=16&decoder=fp16-matmul").unwrap();
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["tier"], "242");
    assert_eq!(json["maxTokens"], 16);
    assert_eq!(json["decoder"], "fp16-matmul");
    let back: Config = serde_json::from_value(json).unwrap();
    assert_eq!(back, c);
    // Partial objects fill in defaults; a numeric tier is accepted.
    let partial: Config = serde_json::from_str(r#"{"tier": 242}"#).unwrap();
    assert_eq!(partial.tier, "242");
    assert_eq!(partial.max_tokens, 128);
    for bad in [
        r#"{"tier": "7 7"}"#,
        r#"{"maxTokens": 0}"#,
        r#"{"cases": "../x"}"#,
        r#"{"colour": "red"}"#,
    ] {
        assert!(serde_json::from_str::<Config>(bad).is_err(), "{bad}");
    }
}

#[test]
fn parameter_descriptions_cover_every_parameter() {
    let params = parameters();
    let names: Vec<_> = params.iter().map(|p| p.name).collect();
    assert_eq!(names, PARAMETER_NAMES);
    let defaults = Config::default();
    for p in &params {
        assert_eq!(p.default, defaults.get(p.name).unwrap(), "{}", p.name);
        let mut c = Config::default();
        c.set(p.name, &p.default).unwrap();
        for v in &p.values {
            c.set(p.name, v).unwrap();
        }
    }
    let decoder = &params[4];
    assert_eq!(
        (decoder.kind, decoder.values.len()),
        (ParameterKind::Name, 0)
    );
}

#[test]
fn parses_the_added_parameters() {
    let c = parse_query("poll=kick&kickMs=0.25&warmup=2&repeat=5&profile=ops").unwrap();
    assert_eq!(c.poll, Poll::Kick);
    assert_eq!(c.kick_ms, Milliseconds::from_micros(250));
    assert_eq!(c.warmup, 2);
    assert_eq!(c.repeat, 5);
    assert_eq!(c.profile, Profile::Ops);
    assert_eq!(
        c.to_query(),
        "poll=kick&kickMs=0.25&warmup=2&repeat=5&profile=ops"
    );
    // Spelt at their defaults they leave the short query empty, so the `query` of every
    // configuration recorded before they existed stays the same.
    let defaults = parse_query("poll=none&kickMs=0.5&warmup=0&repeat=1&profile=none").unwrap();
    assert_eq!(defaults, Config::default());
    assert_eq!(defaults.to_query(), "");
    assert_eq!(
        parse_query("tier=242&maxTokens=8").unwrap().to_query(),
        "tier=242&maxTokens=8"
    );
    assert_eq!(parse_query("warmup=32&repeat=100").unwrap().repeat, 100);
}

#[test]
fn choose_and_sync() {
    let c = parse_query("choose=gpu&sync=4").unwrap();
    assert_eq!((c.choose, c.sync), (Choose::Gpu, 4));
    assert_eq!(c.to_query(), "choose=gpu&sync=4");
    assert_eq!(parse_query("choose=gpu&sync=64").unwrap().sync, 64);
    assert_eq!(parse_query("choose=gpu").unwrap().sync, 1);
    assert_eq!(parse_query("choose=cpu&sync=1").unwrap(), Config::default());
    for (query, allowed) in [
        ("choose=GPU", "cpu, gpu"),
        ("choose=gpu&sync=0", "1..=64"),
        ("choose=gpu&sync=65", "1..=64"),
        ("choose=gpu&sync=+4", "1..=64"),
    ] {
        let err = parse_query(query).unwrap_err().to_string();
        assert!(err.contains(allowed), "{query}: {err}");
    }
}

#[test]
fn sync_above_one_needs_the_gpu_chooser() {
    for query in ["sync=4", "choose=cpu&sync=2", "sync=64&choose=cpu"] {
        let err = parse_query(query).unwrap_err().to_string();
        assert!(
            err.contains("`sync`") && err.contains("needs choose=gpu"),
            "{query}: {err}"
        );
    }
    let err = serde_json::from_str::<Config>(r#"{"sync": 3}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs choose=gpu"), "{err}");
    let by_hand = Config {
        sync: 8,
        ..Config::default()
    };
    assert!(by_hand
        .validate()
        .unwrap_err()
        .to_string()
        .contains("sync=8 needs choose=gpu"));
    let gpu: Config = serde_json::from_str(r#"{"choose": "gpu", "sync": 8}"#).unwrap();
    assert_eq!(gpu.validate(), Ok(()));
    let json = serde_json::to_value(&gpu).unwrap();
    assert_eq!(
        (json["choose"].as_str(), json["sync"].as_u64()),
        (Some("gpu"), Some(8))
    );
}

#[test]
fn capture_needs_the_gpu_chooser() {
    // Whether the decoder can be captured is the manifest's (manifest/tests.rs).
    let c = parse_query("decoder=fixed-kv-gpu&choose=gpu&sync=4&capture=on").unwrap();
    assert_eq!(
        (c.decoder.as_str(), c.capture),
        ("fixed-kv-gpu", Capture::On)
    );
    assert_eq!(
        c.to_query(),
        "decoder=fixed-kv-gpu&choose=gpu&sync=4&capture=on"
    );
    assert!(parse_query("decoder=fixed-kv-gpu&choose=gpu&capture=off").is_ok());
    assert!(parse_query("decoder=fixed-kv-fused&choose=gpu&sync=16&capture=on").is_ok());
    let all = parse_query("decoder=fixed-kv-fused&choose=gpu&sync=16&capture=all").unwrap();
    assert_eq!(all.capture, Capture::All);
    assert_eq!(
        all.to_query(),
        "decoder=fixed-kv-fused&choose=gpu&sync=16&capture=all"
    );
    for (query, words) in [
        (
            "decoder=fixed-kv-gpu&capture=on",
            "capture=on needs choose=gpu",
        ),
        (
            "decoder=fixed-kv-gpu&choose=cpu&capture=on",
            "give choose=gpu (and a decoder the manifest marks capturable)",
        ),
        (
            "decoder=fixed-kv-gpu&choose=gpu&capture=yes",
            "off, on, all",
        ),
        (
            "decoder=fixed-kv-fused&capture=all",
            "capture=all needs choose=gpu",
        ),
    ] {
        let err = parse_query(query).unwrap_err().to_string();
        assert!(
            err.contains("`capture`") && err.contains(words),
            "{query}: {err}"
        );
    }
    let err = serde_json::from_str::<Config>(r#"{"capture": "on"}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("capture=on needs choose=gpu"), "{err}");
}

#[test]
fn capture_at_its_default_leaves_older_records_unchanged() {
    // A record written before the parameter existed has no `capture`, and writes none back.
    let older: Config = serde_json::from_str(r#"{"tier": "242", "choose": "gpu"}"#).unwrap();
    assert_eq!(older.capture, Capture::Off);
    let json = serde_json::to_value(&older).unwrap();
    assert!(json.get("capture").is_none(), "{json}");
    let on = parse_query("decoder=fixed-kv-gpu&choose=gpu&capture=on").unwrap();
    assert_eq!(serde_json::to_value(&on).unwrap()["capture"], "on");
    assert_eq!(parse_query("capture=off").unwrap(), Config::default());
}

#[test]
fn kick_ms_is_exact_in_milliseconds() {
    for (text, micros, back) in [
        ("0.5", 500, "0.5"),
        ("2", 2000, "2"),
        ("0.25", 250, "0.25"),
        ("0.05", 50, "0.05"),
        ("100", 100_000, "100"),
        ("2.500", 2500, "2.5"),
        ("07.125", 7125, "7.125"),
    ] {
        let c = parse_query(&format!("kickMs={text}")).unwrap();
        assert_eq!(c.kick_ms.as_micros(), micros, "{text}");
        assert_eq!(c.get("kickMs").unwrap(), back, "{text}");
    }
    for bad in [
        "NaN",
        "inf",
        "-inf",
        "1e2",
        "1E-1",
        "-1",
        "+1",
        "",
        " 1",
        "0x10",
        ".5",
        "5.",
        "0.5.1",
        "0,5",
        "0.0001",
        "0.049",
        "0",
        "100.001",
        "101",
        "99999999999",
    ] {
        let err = parse_query(&format!("kickMs={}", urlencode(bad)))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`kickMs`") && err.contains("0.05..=100"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn added_integers_and_choices_reject_with_their_allowed_values() {
    for (query, allowed) in [
        ("warmup=33", "0..=32"),
        ("warmup=-1", "0..=32"),
        ("warmup=", "0..=32"),
        ("warmup=1.5", "0..=32"),
        ("repeat=0", "1..=100"),
        ("repeat=101", "1..=100"),
        ("repeat=+2", "1..=100"),
        ("poll=busy", "none, kick"),
        ("poll=Kick", "none, kick"),
        ("profile=all", "none, ops"),
        ("verify=cpu", "none, wasm"),
        ("verify=", "none, wasm"),
    ] {
        let err = parse_query(query).unwrap_err().to_string();
        let name = query.split('=').next().unwrap();
        assert!(
            err.contains(&format!("`{name}`")) && err.contains(allowed),
            "{query}: {err}"
        );
    }
    let err = parse_query("speed=1").unwrap_err().to_string();
    assert!(err.contains("kickMs") && err.contains("profile"), "{err}");
}

#[test]
fn verify_comes_last_and_leaves_older_queries_unchanged() {
    let c = parse_query("tier=242&verify=wasm").unwrap();
    assert_eq!(c.verify, Verify::Wasm);
    assert_eq!(c.to_query(), "tier=242&verify=wasm");
    assert_eq!(parse_query("verify=none").unwrap().to_query(), "");
    assert_eq!(
        serde_json::to_value(&c).unwrap()["verify"],
        serde_json::json!("wasm")
    );
    // A record written before the parameter existed has no `verify`: it reads as none.
    let older: Config = serde_json::from_str(r#"{"tier": "242"}"#).unwrap();
    assert_eq!(older.verify, Verify::Off);
}

#[test]
fn realm_is_page_unless_asked_and_left_out_of_older_records() {
    let c = parse_query("realm=worker&choose=gpu&sync=4").unwrap();
    assert_eq!((c.realm, c.choose, c.sync), (Realm::Worker, Choose::Gpu, 4));
    assert_eq!(c.to_query(), "choose=gpu&sync=4&realm=worker");
    assert_eq!(parse_query("realm=page").unwrap(), Config::default());
    assert_eq!(parse_query("realm=page").unwrap().to_query(), "");
    // Every other parameter combines with the worker: the decode loop there is the page's.
    for query in [
        "realm=worker&schedule=resident&profile=ops&verify=wasm&warmup=1&repeat=2",
        "realm=worker&scope=decoder&poll=kick&kickMs=1",
        "realm=worker&choose=gpu&sync=64&decoder=fixed-kv",
    ] {
        assert_eq!(parse_query(query).unwrap().realm, Realm::Worker, "{query}");
    }
    for (bad, words) in [("realm=Worker", "page, worker"), ("realm=", "page, worker")] {
        let err = parse_query(bad).unwrap_err().to_string();
        assert!(
            err.contains("`realm`") && err.contains(words),
            "{bad}: {err}"
        );
    }
    // At its default it is left out of the JSON, so a record written before it existed
    // reads and writes back the same; asked for, it is written.
    let json = serde_json::to_value(Config::default()).unwrap();
    assert!(json.get("realm").is_none(), "{json}");
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["realm"], "worker");
    assert_eq!(serde_json::from_value::<Config>(json).unwrap(), c);
    let older: Config = serde_json::from_str(r#"{"tier": "242"}"#).unwrap();
    assert_eq!(older.realm, Realm::Page);
    let err = serde_json::from_str::<Config>(r#"{"realm": "gpu"}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("page, worker"), "{err}");
    // A sweep compares the two realms as it does any other choice.
    let grid = expand_sweep(&[("realm", vec!["page", "worker"])]).unwrap();
    let realms: Vec<Realm> = grid.iter().map(|c| c.realm).collect();
    assert_eq!(realms, [Realm::Page, Realm::Worker]);
}

#[test]
fn added_parameters_in_json() {
    let c = parse_query("poll=kick&kickMs=0.5&warmup=3&repeat=2&profile=ops").unwrap();
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["poll"], "kick");
    assert_eq!(json["kickMs"], 0.5);
    assert_eq!(json["warmup"], 3);
    assert_eq!(json["repeat"], 2);
    assert_eq!(json["profile"], "ops");
    assert_eq!(serde_json::from_value::<Config>(json).unwrap(), c);
    let partial: Config = serde_json::from_str(r#"{"kickMs": 2, "poll": "kick"}"#).unwrap();
    assert_eq!(partial.kick_ms, Milliseconds::from_micros(2000));
    assert_eq!(partial.repeat, 1);
    for (bad, words) in [
        (r#"{"kickMs": 0.30000000000000004}"#, "0.05..=100"),
        (r#"{"kickMs": 1000}"#, "0.05..=100"),
        (r#"{"kickMs": "0.5"}"#, "expected a number"),
        (r#"{"warmup": 40}"#, "0..=32"),
        (r#"{"repeat": 0}"#, "1..=100"),
        (r#"{"repeat": 2.5}"#, "1..=100"),
        (r#"{"maxTokens": "8"}"#, "expected a number"),
        (r#"{"manifest": 5}"#, "expected a string"),
        (r#"{"profile": "all"}"#, "none, ops"),
        (r#"{"verify": true}"#, "a string or a number"),
        (r#"{"poll": null}"#, "a string or a number"),
        (r#"{"tier": "242", "tier": "121"}"#, "more than once"),
    ] {
        let err = serde_json::from_str::<Config>(bad).unwrap_err().to_string();
        assert!(err.contains(words), "{bad}: {err}");
    }
}

#[test]
fn validate_checks_a_config_built_by_hand() {
    assert_eq!(Config::default().validate(), Ok(()));
    let c = Config {
        kick_ms: Milliseconds::from_micros(20),
        ..Config::default()
    };
    let err = c.validate().unwrap_err().to_string();
    assert!(
        err.contains("`kickMs`") && err.contains("\"0.02\""),
        "{err}"
    );
    let c = Config {
        repeat: 0,
        ..Config::default()
    };
    assert!(c.validate().unwrap_err().to_string().contains("`repeat`"));
}

#[test]
fn added_parameters_are_described() {
    let params = parameters();
    let find = |name: &str| params.iter().find(|p| p.name == name).unwrap();
    let poll = find("poll");
    assert_eq!(
        (poll.kind, poll.values.as_slice(), poll.default.as_str()),
        (ParameterKind::Choice, ["none", "kick"].as_slice(), "none")
    );
    assert!(poll.description.contains("kickMs"), "{}", poll.description);
    let kick = find("kickMs");
    assert_eq!(
        (kick.kind, kick.min, kick.max, kick.default.as_str()),
        (ParameterKind::Decimal, Some(0.05), Some(100.0), "0.5")
    );
    assert!(kick.allowed.contains("0.05..=100"), "{}", kick.allowed);
    let warmup = find("warmup");
    assert_eq!(
        (warmup.kind, warmup.min, warmup.max, warmup.default.as_str()),
        (ParameterKind::Integer, Some(0.0), Some(32.0), "0")
    );
    let repeat = find("repeat");
    assert_eq!(
        (repeat.min, repeat.max, repeat.default.as_str()),
        (Some(1.0), Some(100.0), "1")
    );
    let profile = find("profile");
    assert_eq!(profile.values, ["none", "ops"]);
    assert!(profile.description.contains("per-operator"));
    let verify = find("verify");
    assert_eq!(
        (verify.values.as_slice(), verify.default.as_str()),
        (["none", "wasm"].as_slice(), "none")
    );
    let capture = find("capture");
    assert_eq!(
        (capture.values.as_slice(), capture.default.as_str()),
        (["off", "on", "all"].as_slice(), "off")
    );
    let realm = find("realm");
    assert_eq!(
        (realm.values.as_slice(), realm.default.as_str()),
        (["page", "worker"].as_slice(), "page")
    );
    assert!(
        realm.description.contains("decoder-worker.js"),
        "{}",
        realm.description
    );
    let pool = find("pool");
    assert!(
        pool.description.contains("isolation check"),
        "{}",
        pool.description
    );
    assert_eq!(params.last().map(|p| p.name), Some("release"));
    for p in &params {
        assert!(
            !p.description.is_empty() && !p.allowed.is_empty(),
            "{}",
            p.name
        );
        assert_eq!(Config::kind(p.name), Ok(p.kind), "{}", p.name);
    }
    let json = serde_json::to_value(kick).unwrap();
    assert_eq!(
        (json["kind"].clone(), json["min"].clone()),
        ("decimal".into(), 0.05.into())
    );
}

/// Every version, from a drawn number.
fn ort_of(drawn: u32) -> OrtVersion {
    OrtVersion::ALL[drawn as usize % OrtVersion::ALL.len()]
}

fn any_config() -> impl Strategy<Value = Config> {
    (
        (
            prop::sample::select(vec!["121".to_owned(), "my-tier_2".to_owned()]),
            prop::sample::select(Memory::ALL),
            prop::sample::select(Loader::ALL),
            prop::sample::select(Schedule::ALL),
            "[A-Za-z0-9_-]{1,64}",
        ),
        (
            prop::sample::select(Scope::ALL),
            "[A-Za-z0-9_-]{1,64}",
            // Any non-blank URL-ish text, including `+`, `&`, `=`, `%` and non-ASCII.
            "[/a-z0-9.+&=%?#é日]{1,30}",
            prop::sample::select(Weights::ALL),
            1u32..=128,
        ),
        (
            prop::sample::select(Poll::ALL),
            (50u32..=100_000).prop_map(Milliseconds::from_micros),
            0u32..=32,
            1u32..=100,
            prop::sample::select(Profile::ALL),
        ),
        (
            prop::sample::select(Choose::ALL),
            1u32..=MAX_SYNC_STEPS,
            prop::sample::select(Verify::ALL),
            prop::sample::select(Capture::ALL),
            prop::sample::select(Realm::ALL),
        ),
    )
        .prop_map(
            |(
                (tier, memory, loader, schedule, decoder),
                (scope, cases, manifest, weights, max_tokens),
                (poll, kick_ms, warmup, repeat, profile),
                (choose, sync, verify, capture, realm),
            )| Config {
                tier,
                memory,
                loader,
                schedule,
                decoder,
                scope,
                cases,
                manifest,
                weights,
                max_tokens,
                poll,
                kick_ms,
                warmup,
                repeat,
                profile,
                choose,
                // sync above 1 is refused with choose=cpu (check_combination).
                sync: if choose == Choose::Gpu { sync } else { 1 },
                // verify=wasm is refused with choose=gpu (check_combination).
                verify: if choose == Choose::Gpu {
                    Verify::Off
                } else {
                    verify
                },
                // capture=on is refused without choose=gpu.
                capture: if choose == Choose::Gpu {
                    capture
                } else {
                    Capture::Off
                },
                realm,
                // Every version, from a drawn number.
                ort: ort_of(sync),
                // Every pool size, from a drawn number (the tuples are full); pool above 1 is
                // refused with profile=ops.
                pool: if profile == Profile::Ops {
                    1
                } else {
                    warmup % MAX_POOL + 1
                },
                // Every release mode, from a drawn number; release=realm needs realm=worker,
                // and a version that ends the device with its last session takes only all.
                release: match (repeat % 4, realm) {
                    _ if ort_of(sync).ends_the_device_with_its_last_session() => Release::All,
                    (0, _) => Release::All,
                    (1, _) => Release::Sessions,
                    (2, _) | (3, Realm::Page) => Release::Device,
                    (3, Realm::Worker) => Release::Realm,
                    _ => unreachable!("a remainder of 4"),
                },
            },
        )
}

proptest! {
    #[test]
    fn query_round_trips(c in any_config()) {
        prop_assert_eq!(parse_query(&c.to_query()).unwrap(), c.clone());
        prop_assert_eq!(parse_query(&format!("?{}", c.to_full_query())).unwrap(), c);
    }

    #[test]
    fn json_round_trips(c in any_config()) {
        let json = serde_json::to_string(&c).unwrap();
        prop_assert_eq!(serde_json::from_str::<Config>(&json).unwrap(), c.clone());
        prop_assert!(c.validate().is_ok());
    }

    #[test]
    fn parse_never_panics(q in ".{0,80}") {
        let _ = parse_query(&q);
    }
}

#[test]
fn pool_takes_one_to_eight_realms_and_refuses_the_profile() {
    assert_eq!(parse_query("pool=4&realm=worker").unwrap().pool, 4);
    let too_many = parse_query("pool=9").unwrap_err().to_string();
    assert!(too_many.contains("pool"), "{too_many}");
    let profiled = parse_query("pool=2&profile=ops").unwrap_err().to_string();
    assert!(
        profiled.contains("pool=2 with profile=ops") && profiled.contains("profile with pool=1"),
        "{profiled}"
    );
    // At its default it is left out of the JSON, so older records read back unchanged.
    let json = serde_json::to_value(Config::default()).unwrap();
    assert!(json.get("pool").is_none(), "{json}");
}

#[test]
fn release_takes_four_modes_and_ends_a_realm_only_in_a_worker() {
    assert_eq!(parse_query("").unwrap().release, Release::All);
    assert_eq!(
        parse_query("release=sessions").unwrap().release,
        Release::Sessions
    );
    assert_eq!(
        parse_query("release=realm&realm=worker&pool=2")
            .unwrap()
            .release,
        Release::Realm
    );
    let unknown = parse_query("release=heap").unwrap_err().to_string();
    assert!(
        ["all", "sessions", "device", "realm"]
            .iter()
            .all(|mode| unknown.contains(mode)),
        "{unknown}"
    );
    let in_page = parse_query("release=realm").unwrap_err().to_string();
    assert!(
        in_page.contains("release=realm") && in_page.contains("realm=worker"),
        "{in_page}"
    );
    // At its default it is left out of the JSON, so older records read back unchanged.
    let json = serde_json::to_value(Config::default()).unwrap();
    assert!(json.get("release").is_none(), "{json}");
}

#[test]
fn ort_names_the_pinned_version_unless_asked_and_refuses_any_other() {
    let pinned = parse_query("").unwrap();
    assert_eq!(pinned.ort, OrtVersion::PINNED);
    assert_eq!(parse_query("ort=1.30.0").unwrap(), pinned);
    let later = parse_query("ort=1.31.1&realm=worker").unwrap();
    // 1.31 destroys the realm's device with its last session: only release=all is sampled.
    for release in ["sessions", "device", "realm"] {
        let query = format!("ort=1.31.1&realm=worker&release={release}");
        let err = parse_query(&query).unwrap_err().to_string();
        assert!(
            err.contains(&format!("release={release}"))
                && err.contains("onnxruntime-web 1.31.1 destroys")
                && err.contains("give release=all, or ort=1.30.0"),
            "{query}: {err}"
        );
        parse_query(&format!("realm=worker&release={release}")).unwrap();
    }
    assert_eq!(later.ort, OrtVersion::V1_31_1);
    // In the fixed order: after pool, before release.
    assert_eq!(
        parse_query("release=all&ort=1.31.1&pool=2")
            .unwrap()
            .to_query(),
        "pool=2&ort=1.31.1"
    );
    for bad in [
        "ort=1.31",
        "ort=latest",
        "ort=1.29.0",
        "ort=",
        "ort=v1.31.1",
    ] {
        let err = parse_query(bad).unwrap_err().to_string();
        assert!(
            err.contains("`ort`") && err.contains("1.30.0, 1.31.1"),
            "{bad}: {err}"
        );
    }
    // At its default it is left out of the JSON, so a record written before it existed reads
    // and writes back unchanged; another version is written.
    let json = serde_json::to_value(&pinned).unwrap();
    assert!(json.get("ort").is_none(), "{json}");
    let json = serde_json::to_value(&later).unwrap();
    assert_eq!(json["ort"], "1.31.1");
    assert_eq!(serde_json::from_value::<Config>(json).unwrap(), later);
    // A sweep puts the two versions side by side as it does any other choice.
    let grid = expand_sweep(&[("ort", vec!["1.30.0", "1.31.1"])]).unwrap();
    let versions: Vec<OrtVersion> = grid.iter().map(|c| c.ort).collect();
    assert_eq!(versions, OrtVersion::ALL);
}
