//! The machine a run was measured on, as records carry it: CPU model, cores, memory, OS.

use std::fs;

use serde_json::{json, Value};

fn first_value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .find(|line| line.split(':').next().is_some_and(|k| k.trim() == key))
        .and_then(|line| line.split_once(':'))
        .map(|(_, value)| value.trim().to_owned())
}

fn os_name() -> String {
    let pretty = fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_owned())
        })
        .unwrap_or_else(|| std::env::consts::OS.to_owned());
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{pretty}, Linux {}", kernel.trim())
}

/// A description of this machine; fields that cannot be read are null.
pub fn describe() -> Value {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory_bytes = first_value(&meminfo, "MemTotal")
        .and_then(|v| v.trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| kib * 1024);
    let cores = std::thread::available_parallelism().map(|n| n.get()).ok();
    json!({
        "cpuModel": first_value(&cpuinfo, "model name"),
        "cores": cores,
        "memoryBytes": memory_bytes,
        "os": os_name(),
        "arch": std::env::consts::ARCH,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_this_machine() {
        let m = describe();
        assert!(m["cores"].as_u64().unwrap() >= 1, "{m}");
        assert!(m["memoryBytes"].as_u64().unwrap() > 1 << 20, "{m}");
        assert!(m["os"].as_str().unwrap().contains("Linux"), "{m}");
    }

    #[test]
    fn reads_colon_separated_values() {
        let text = "processor\t: 0\nmodel name\t: Example CPU @ 2.0GHz\n";
        assert_eq!(
            first_value(text, "model name").as_deref(),
            Some("Example CPU @ 2.0GHz")
        );
        assert_eq!(first_value(text, "missing"), None);
    }
}
