//! The type of each browser process, from its command line: Chromium's `--type=` switch,
//! Firefox's trailing `-contentproc` type, and a label finer than the type (the utility
//! service a process hosts, for example) so that a background service never passes as the
//! model's memory.

use serde::{Deserialize, Serialize};

/// Process types of the architecture: Chromium's `--type=` switch, Firefox's
/// `-contentproc` trailing type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProcessType {
    Browser,
    Gpu,
    Renderer,
    Utility,
    Other,
}

/// A process's type and a finer label (the utility service it hosts, for example), so that a
/// background service never passes as the model's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    pub kind: ProcessType,
    pub label: String,
}

/// Classifies a process from its command line. `is_browser_main` is true for the process the
/// runner launched itself.
pub fn classify(cmdline: &[String], is_browser_main: bool) -> Classified {
    let exe = cmdline
        .first()
        .map(|a| a.rsplit('/').next().unwrap_or(a).to_owned())
        .unwrap_or_default();
    if let Some(kind) = cmdline.iter().find_map(|a| a.strip_prefix("--type=")) {
        let sub_type = cmdline
            .iter()
            .find_map(|a| a.strip_prefix("--utility-sub-type="));
        return match kind {
            "gpu-process" => Classified {
                kind: ProcessType::Gpu,
                label: "gpu-process".into(),
            },
            "renderer" => Classified {
                kind: ProcessType::Renderer,
                label: "renderer".into(),
            },
            "utility" => Classified {
                kind: ProcessType::Utility,
                label: format!("utility:{}", sub_type.unwrap_or("unknown")),
            },
            other => Classified {
                kind: ProcessType::Other,
                label: other.to_owned(),
            },
        };
    }
    if cmdline.iter().any(|a| a == "-contentproc") {
        // Firefox puts the process type last: `… -contentproc … tab`.
        let last = cmdline.last().map(String::as_str).unwrap_or("");
        let kind = match last {
            "tab" => ProcessType::Renderer,
            "gpu" => ProcessType::Gpu,
            "rdd" | "socket" | "utility" => ProcessType::Utility,
            _ => ProcessType::Other,
        };
        let label = match kind {
            ProcessType::Utility => format!("utility:{last}"),
            _ => last.to_owned(),
        };
        return Classified { kind, label };
    }
    if is_browser_main {
        return Classified {
            kind: ProcessType::Browser,
            label: "browser".into(),
        };
    }
    // Firefox's fork server and background tasks, crash handlers and reporters: none of them
    // is the model's, and each is labelled so that it is seen.
    let background_task = cmdline
        .iter()
        .position(|a| a == "--backgroundtask" || a == "-backgroundtask")
        .and_then(|i| cmdline.get(i + 1));
    let label = if cmdline.iter().any(|a| a == "-forkserver") {
        "forkserver".to_owned()
    } else if let Some(task) = background_task {
        format!("backgroundtask:{task}")
    } else {
        exe
    };
    Classified {
        kind: ProcessType::Other,
        label,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn classifies_chromium_processes() {
        let main = classify(
            &args("/usr/lib/chromium/chromium --headless --user-data-dir=/tmp/x"),
            true,
        );
        assert_eq!(main.kind, ProcessType::Browser);
        let gpu = classify(
            &args("/usr/lib/chromium/chromium --type=gpu-process --use-angle=swiftshader"),
            false,
        );
        assert_eq!(gpu.kind, ProcessType::Gpu);
        let renderer = classify(
            &args("/usr/lib/chromium/chromium --type=renderer --lang=en"),
            false,
        );
        assert_eq!(renderer.kind, ProcessType::Renderer);
        let odm = classify(
            &args("/usr/lib/chromium/chromium --type=utility --utility-sub-type=on_device_model.mojom.OnDeviceModelService"),
            false,
        );
        assert_eq!(odm.kind, ProcessType::Utility);
        assert_eq!(
            odm.label,
            "utility:on_device_model.mojom.OnDeviceModelService"
        );
        let zygote = classify(
            &args("/usr/lib/chromium/chromium --type=zygote --no-zygote-sandbox"),
            false,
        );
        assert_eq!(
            (zygote.kind, zygote.label.as_str()),
            (ProcessType::Other, "zygote")
        );
    }

    #[test]
    fn classifies_firefox_processes() {
        let main = classify(
            &args("/usr/lib/firefox-esr/firefox-esr --headless --profile /tmp/p"),
            true,
        );
        assert_eq!(main.kind, ProcessType::Browser);
        let tab = classify(
            &args("/usr/lib/firefox-esr/firefox-esr -contentproc -isForBrowser {u} 123 tab"),
            false,
        );
        assert_eq!(tab.kind, ProcessType::Renderer);
        let gpu = classify(
            &args("/usr/lib/firefox-esr/firefox-esr -contentproc {u} 123 gpu"),
            false,
        );
        assert_eq!(gpu.kind, ProcessType::Gpu);
        for (last, kind) in [
            ("rdd", ProcessType::Utility),
            ("socket", ProcessType::Utility),
            ("utility", ProcessType::Utility),
        ] {
            let c = classify(
                &args(&format!(
                    "/usr/lib/firefox-esr/firefox-esr -contentproc {{u}} 123 {last}"
                )),
                false,
            );
            assert_eq!(c.kind, kind, "{last}");
            assert_eq!(c.label, format!("utility:{last}"));
        }
        let task = classify(
            &args(
                "/usr/lib/firefox-esr/firefox-esr --backgroundtask crashreporterNetworkBackend x",
            ),
            false,
        );
        assert_eq!(
            (task.kind, task.label.as_str()),
            (
                ProcessType::Other,
                "backgroundtask:crashreporterNetworkBackend"
            )
        );
        let fork = classify(&args("/usr/lib/firefox-esr/firefox-esr -forkserver"), false);
        assert_eq!(
            (fork.kind, fork.label.as_str()),
            (ProcessType::Other, "forkserver")
        );
    }
}
