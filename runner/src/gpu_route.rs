//! The way a browser reaches WebGPU: a real GPU through its Vulkan driver, or software
//! (SwiftShader in Chromium). Chosen from the Vulkan drivers this machine has, or forced with
//! `--gpu-route`; recorded in each run's closing `run` record. `docs/portable-bundle.md`
//! ("Chromium's GPU route") says why each Chromium switch is there and what was measured.
//!
//! [`detect`] is pure: its inputs are the Vulkan environment variables, the ICD manifests
//! (path and text) and which GPU device nodes exist; [`Detection::of_this_machine`] reads them.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::exit::Cause;

/// What `--gpu-route` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GpuRouteRequest {
    /// The GPU route when a hardware Vulkan driver is present, else software; a fallback
    /// adapter on the GPU route is accepted (and recorded as such).
    #[default]
    Auto,
    /// The GPU route whatever was found; a fallback adapter stops the run.
    Gpu,
    /// The software route (today's switches) whatever was found.
    Software,
}

impl FromStr for GpuRouteRequest {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(GpuRouteRequest::Auto),
            "gpu" => Ok(GpuRouteRequest::Gpu),
            "software" => Ok(GpuRouteRequest::Software),
            other => Err(format!(
                "unknown GPU route {other:?}; allowed: auto, gpu, software"
            )),
        }
    }
}

impl fmt::Display for GpuRouteRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GpuRouteRequest::Auto => "auto",
            GpuRouteRequest::Gpu => "gpu",
            GpuRouteRequest::Software => "software",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Route {
    Gpu,
    Software,
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Route::Gpu => "gpu",
            Route::Software => "software",
        })
    }
}

/// Chromium's switches on the GPU route, on top of the fixed ones (`browser.rs`). This set
/// reached an NVIDIA H200 (driver 580, no display) from a bundle of Chromium 156.0.8078.114
/// on 2026-12-04; each of the first three left out alone fell back to SwiftShader there, the
/// fourth left out still got the H200 (docs/portable-bundle.md, "Chromium's GPU route"):
/// - `--use-angle=vulkan`: ANGLE, which Chromium's GPU process draws through, on Vulkan
///   instead of SwiftShader. Needed on the H200.
/// - `--enable-features=Vulkan`: Chromium's own use of Vulkan in the GPU process. Needed.
/// - `--disable-vulkan-surface`: Chromium's Vulkan start asks for `VK_KHR_surface` and
///   `VK_KHR_xcb_surface`, which a display-less NVIDIA driver does not offer
///   (`vkCreateInstance() failed: -7`); this leaves them out. Needed.
/// - `--ignore-gpu-blocklist`: not needed for the H200, kept for GPUs and drivers on
///   Chromium's blocklist, which would otherwise be given up for software.
pub const CHROMIUM_GPU_SWITCHES: &[&str] = &[
    "--use-angle=vulkan",
    "--enable-features=Vulkan",
    "--disable-vulkan-surface",
    "--ignore-gpu-blocklist",
];

/// The Vulkan loader's own search directories for ICD manifests (Linux, system-wide).
pub const LOADER_ICD_DIRS: &[&str] = &[
    "/etc/xdg/vulkan/icd.d",
    "/etc/vulkan/icd.d",
    "/usr/local/share/vulkan/icd.d",
    "/usr/share/vulkan/icd.d",
];
/// NVIDIA's container layout, which the loader does not search: a manifest found only here
/// is named to the loader with `VK_DRIVER_FILES`.
pub const NVIDIA_ONLY_ICD_DIR: &str = "/usr/local/nvidia/share/vulkan/icd.d";

/// Driver libraries that are CPU rasterisers, by a piece of their file name.
const SOFTWARE_DRIVERS: &[&str] = &["lvp", "lavapipe", "llvmpipe", "swiftshader", "mock_icd"];

/// The Vulkan environment variables as the runner found them (empty counts as unset).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VulkanEnv {
    pub driver_files: Option<String>,
    pub icd_filenames: Option<String>,
}

impl VulkanEnv {
    /// `VK_DRIVER_FILES`, else the older `VK_ICD_FILENAMES`, as the loader reads them.
    fn named(&self) -> Option<(&'static str, &str)> {
        fn set(v: &Option<String>) -> Option<&str> {
            v.as_deref().filter(|v| !v.is_empty())
        }
        set(&self.driver_files)
            .map(|v| ("VK_DRIVER_FILES", v))
            .or_else(|| set(&self.icd_filenames).map(|v| ("VK_ICD_FILENAMES", v)))
    }
}

/// One ICD manifest: where it is and its text (`None`: it could not be read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IcdManifest {
    pub path: PathBuf,
    pub text: Option<String>,
}

/// GPU device nodes present: `/dev/nvidia*` (NVIDIA's driver), `/dev/dri/renderD*` (any
/// other kernel GPU driver, which Mesa's hardware ICDs need).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Devices {
    pub nvidia: bool,
    pub dri_render: bool,
}

/// What was found: a hardware driver or none, and why, in words for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    pub hardware: Option<HardwareIcd>,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HardwareIcd {
    pub manifest: PathBuf,
    pub library: String,
    /// The runner found the manifest itself (the caller named none), so the GPU route names
    /// it, and only it, in `VK_DRIVER_FILES`: the browser then sees the one driver the runner
    /// judged, not every manifest the loader would find (software drivers, or a second
    /// manifest of the same driver: the H200 has two naming `libGLX_nvidia.so.0`). Chromium
    /// got the NVIDIA adapter that way there (2026-12-04), as it did with the variable set by
    /// hand; whether it also does with the variable unset was not settled (its one try was a
    /// first start, which gives no adapter either way: `run::run_once`).
    pub name_for_loader: bool,
}

/// The manifest's `library_path`, if it has one.
fn library_path(text: &str) -> Option<String> {
    let json: Value = serde_json::from_str(text).ok()?;
    json.get("ICD")?
        .get("library_path")?
        .as_str()
        .map(str::to_owned)
}

fn is_software(library: &str) -> bool {
    let name = library
        .rsplit('/')
        .next()
        .unwrap_or(library)
        .to_ascii_lowercase();
    SOFTWARE_DRIVERS.iter().any(|s| name.contains(s))
}

/// Why a manifest does or does not count as a usable hardware driver: `Ok(library)` when it
/// does, else the words that say why not.
fn judge(manifest: &IcdManifest, devices: Devices) -> Result<String, String> {
    let path = manifest.path.display();
    let Some(text) = &manifest.text else {
        return Err(format!("{path} cannot be read"));
    };
    let Some(library) = library_path(text) else {
        return Err(format!("{path} names no ICD.library_path"));
    };
    if is_software(&library) {
        return Err(format!("{path} is a software driver ({library})"));
    }
    if library.to_ascii_lowercase().contains("nvidia") {
        if !devices.nvidia {
            return Err(format!(
                "{path} is NVIDIA's ({library}) but there is no /dev/nvidia* device"
            ));
        }
    } else if !devices.dri_render {
        return Err(format!(
            "{path} ({library}) has no GPU here: no /dev/dri/renderD* device"
        ));
    }
    Ok(library)
}

/// Finds a hardware Vulkan driver among `manifests` (those of [`LOADER_ICD_DIRS`] and
/// [`NVIDIA_ONLY_ICD_DIR`], plus the files the environment names). When `VK_DRIVER_FILES`
/// (or `VK_ICD_FILENAMES`) is set, only the files it names count, as for the loader.
pub fn detect(env: &VulkanEnv, manifests: &[IcdManifest], devices: Devices) -> Detection {
    let mut why_not = Vec::new();
    if let Some((variable, list)) = env.named() {
        for named in list.split(':').filter(|p| !p.is_empty()) {
            let path = Path::new(named);
            let Some(manifest) = manifests.iter().find(|m| m.path == path) else {
                why_not.push(format!("{named} cannot be read"));
                continue;
            };
            match judge(manifest, devices) {
                Ok(library) => {
                    return Detection {
                        reason: format!(
                            "{variable} names the hardware Vulkan driver {named} ({library})"
                        ),
                        hardware: Some(HardwareIcd {
                            manifest: path.to_owned(),
                            library,
                            name_for_loader: false,
                        }),
                    }
                }
                Err(why) => why_not.push(why),
            }
        }
        return Detection {
            hardware: None,
            reason: format!(
                "{variable} names no hardware Vulkan driver: {}",
                why_not.join("; ")
            ),
        };
    }
    let in_dir = |m: &&IcdManifest, dir: &str| m.path.parent() == Some(Path::new(dir));
    let searched: Vec<(&IcdManifest, bool)> = manifests
        .iter()
        .filter(|m| LOADER_ICD_DIRS.iter().any(|d| in_dir(m, d)))
        .map(|m| (m, false))
        .chain(
            manifests
                .iter()
                .filter(|m| in_dir(m, NVIDIA_ONLY_ICD_DIR))
                .map(|m| (m, true)),
        )
        .collect();
    for (manifest, only_here) in &searched {
        match judge(manifest, devices) {
            Ok(library) => {
                let how = if *only_here {
                    "named in VK_DRIVER_FILES: the loader does not search that directory"
                } else {
                    "named alone in VK_DRIVER_FILES (the loader finds it by itself, but not alone)"
                };
                return Detection {
                    reason: format!(
                        "hardware Vulkan driver {} ({library}), {how}",
                        manifest.path.display()
                    ),
                    hardware: Some(HardwareIcd {
                        manifest: manifest.path.clone(),
                        library,
                        name_for_loader: true,
                    }),
                };
            }
            Err(why) => why_not.push(why),
        }
    }
    let reason = if searched.is_empty() {
        format!(
            "no Vulkan ICD manifest in {} or {NVIDIA_ONLY_ICD_DIR}",
            LOADER_ICD_DIRS.join(", ")
        )
    } else {
        format!("no hardware Vulkan driver: {}", why_not.join("; "))
    };
    Detection {
        hardware: None,
        reason,
    }
}

impl Detection {
    /// Reads this machine's Vulkan environment variables, ICD manifests and device nodes.
    pub fn of_this_machine() -> Detection {
        let var = |name| std::env::var(name).ok();
        let env = VulkanEnv {
            driver_files: var("VK_DRIVER_FILES"),
            icd_filenames: var("VK_ICD_FILENAMES"),
        };
        let mut paths: Vec<PathBuf> = Vec::new();
        for dir in LOADER_ICD_DIRS.iter().chain([&NVIDIA_ONLY_ICD_DIR]) {
            let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
            found.sort();
            paths.extend(found);
        }
        if let Some((_, list)) = env.named() {
            paths.extend(list.split(':').filter(|p| !p.is_empty()).map(PathBuf::from));
        }
        let manifests: Vec<IcdManifest> = paths
            .into_iter()
            .map(|path| IcdManifest {
                text: std::fs::read_to_string(&path).ok(),
                path,
            })
            .collect();
        let any_in = |dir: &str, prefix: &str| {
            std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(prefix))
        };
        let devices = Devices {
            nvidia: any_in("/dev", "nvidia"),
            dri_render: any_in("/dev/dri", "renderD"),
        };
        detect(&env, &manifests, devices)
    }
}

/// The route one run takes: what was asked, what was chosen and why, and what it adds to the
/// browser's start. Written into the run's closing `run` record as `gpuRoute`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuRoute {
    pub asked: GpuRouteRequest,
    pub route: Route,
    pub reason: String,
    /// Every switch the browser was started with (Chromium), or none (Firefox: prefs).
    pub flags: Vec<String>,
    /// Environment variables the runner set for the browser, `NAME=value` each.
    pub env: Vec<String>,
    /// The page's adapter: `gpu`, `software` (a fallback or software adapter) or absent
    /// when the page reported none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<Route>,
    /// The GPU route was chosen by `auto` and the page got a fallback adapter: accepted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fallback_accepted: bool,
}

impl GpuRoute {
    /// The route in lines for a person (`ocr-bench gpu-route`, a bundle's `./check`).
    pub fn describe(&self) -> String {
        let none = |list: &[String]| {
            if list.is_empty() {
                "(none)".to_owned()
            } else {
                list.join(" ")
            }
        };
        format!(
            "GPU route: {} (--gpu-route {})\n  why: {}\n  switches: {}\n  environment added: {}\n",
            self.route,
            self.asked,
            self.reason,
            none(&self.flags),
            none(&self.env)
        )
    }
}

/// What the page's adapter means for a run on its route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdapterVerdict {
    /// As the route expects, or the page did not say.
    Fits,
    /// `auto` took the GPU route and the page got a fallback adapter: the run goes on.
    FallbackAccepted,
    /// `--gpu-route gpu` and the page got a fallback adapter: the run stops.
    FallbackRefused,
}

impl GpuRoute {
    /// Notes the page's adapter in the route and judges it.
    pub fn judge_adapter(&mut self, adapter: &Value) -> AdapterVerdict {
        self.adapter = adapter_route(adapter);
        if self.route != Route::Gpu || self.adapter != Some(Route::Software) {
            return AdapterVerdict::Fits;
        }
        if self.asked == GpuRouteRequest::Gpu {
            return AdapterVerdict::FallbackRefused;
        }
        self.fallback_accepted = true;
        AdapterVerdict::FallbackAccepted
    }
}

/// The route `asked` takes given what was found. `flags` and `env` are left for the caller
/// (they depend on the browser).
pub fn choose(asked: GpuRouteRequest, found: &Detection) -> (Route, String) {
    match (asked, &found.hardware) {
        (GpuRouteRequest::Gpu, Some(_)) => {
            (Route::Gpu, format!("--gpu-route gpu; {}", found.reason))
        }
        // Forced without a driver, the browser falls back to a software adapter, which this
        // route refuses: say what that costs before a run finds out.
        (GpuRouteRequest::Gpu, None) => (
            Route::Gpu,
            format!(
                "--gpu-route gpu; {}; a run here would most likely get a software adapter and \
                 end with exit {} (--gpu-route auto or software runs on it)",
                found.reason,
                Cause::SoftwareAdapter.code()
            ),
        ),
        (GpuRouteRequest::Software, _) => (
            Route::Software,
            format!("--gpu-route software; {}", found.reason),
        ),
        (GpuRouteRequest::Auto, Some(_)) => (Route::Gpu, found.reason.clone()),
        (GpuRouteRequest::Auto, None) => (Route::Software, found.reason.clone()),
    }
}

/// The route of a run as `asked`, from what this machine has; its `flags` are left to the
/// browser's side ([`crate::browser::gpu_route`]), which knows each browser's switches.
pub fn resolve(asked: GpuRouteRequest) -> GpuRoute {
    let found = Detection::of_this_machine();
    let (route, reason) = choose(asked, &found);
    GpuRoute {
        asked,
        route,
        reason,
        flags: Vec::new(),
        env: route_env(route, &found)
            .into_iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect(),
        adapter: None,
        fallback_accepted: false,
    }
}

/// The environment the GPU route adds: the one hardware manifest the runner found, for the
/// loader (unset on the software route, and when the caller named one already).
pub fn route_env(route: Route, found: &Detection) -> Vec<(String, String)> {
    match (&found.hardware, route) {
        (Some(icd), Route::Gpu) if icd.name_for_loader => {
            let path = icd.manifest.display().to_string();
            vec![
                ("VK_DRIVER_FILES".to_owned(), path.clone()),
                ("VK_ICD_FILENAMES".to_owned(), path),
            ]
        }
        _ => Vec::new(),
    }
}

/// The page's verdict on its adapter (its `software` field, else `isFallbackAdapter`);
/// `None` when it says neither.
pub fn adapter_route(adapter: &Value) -> Option<Route> {
    let flag = |key| adapter.get(key).and_then(Value::as_bool);
    match flag("software").or(flag("isFallbackAdapter"))? {
        true => Some(Route::Software),
        false => Some(Route::Gpu),
    }
}

/// A few words on the adapter for a message: vendor, architecture, description, fallback.
pub fn describe_adapter(adapter: &Value) -> String {
    let text = |key| adapter.get(key).and_then(Value::as_str).unwrap_or("");
    format!(
        "vendor {:?}, architecture {:?}, description {:?}, isFallbackAdapter {}",
        text("vendor"),
        text("architecture"),
        text("description"),
        adapter.get("isFallbackAdapter").unwrap_or(&Value::Null)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAVAPIPE: &str = r#"{ "ICD": { "api_version": "1.3.230", "library_path": "/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so" }, "file_format_version": "1.0.0" }"#;
    const NVIDIA: &str = r#"{ "file_format_version" : "1.0.1", "ICD": { "library_path": "libGLX_nvidia.so.0", "api_version" : "1.4.312" } }"#;
    const INTEL: &str = r#"{ "ICD": { "api_version": "1.3.230", "library_path": "/usr/lib/x86_64-linux-gnu/libvulkan_intel.so" }, "file_format_version": "1.0.0" }"#;

    /// Manifests written to a directory of the test's own, read back as the runner reads them.
    fn written(dir: &Path, files: &[(&str, &str)]) -> Vec<IcdManifest> {
        files
            .iter()
            .map(|(name, text)| {
                let path = dir.join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, text).unwrap();
                IcdManifest {
                    text: std::fs::read_to_string(&path).ok(),
                    path,
                }
            })
            .collect()
    }

    /// The written manifests as if they lay in `dir` (the loader's or NVIDIA's directory).
    fn placed(manifests: Vec<IcdManifest>, dir: &str) -> Vec<IcdManifest> {
        manifests
            .into_iter()
            .map(|m| IcdManifest {
                path: Path::new(dir).join(m.path.file_name().unwrap()),
                text: m.text,
            })
            .collect()
    }

    const GPU_HOST: Devices = Devices {
        nvidia: true,
        dri_render: false,
    };

    #[test]
    fn a_lavapipe_icd_takes_the_software_route() {
        let dir = tempfile::tempdir().unwrap();
        let manifests = written(dir.path(), &[("lvp_icd.x86_64.json", LAVAPIPE)]);
        let found = detect(
            &VulkanEnv::default(),
            &placed(manifests, LOADER_ICD_DIRS[3]),
            GPU_HOST,
        );
        assert_eq!(found.hardware, None);
        assert!(found.reason.contains("software driver"), "{}", found.reason);
        let (route, _) = choose(GpuRouteRequest::Auto, &found);
        assert_eq!(route, Route::Software);
        assert!(route_env(route, &found).is_empty());
    }

    #[test]
    fn an_nvidia_icd_the_loader_finds_takes_the_gpu_route_and_is_named_alone() {
        let dir = tempfile::tempdir().unwrap();
        let manifests = written(
            dir.path(),
            &[
                ("lvp_icd.x86_64.json", LAVAPIPE),
                ("nvidia_icd.json", NVIDIA),
            ],
        );
        let found = detect(
            &VulkanEnv::default(),
            &placed(manifests, LOADER_ICD_DIRS[3]),
            GPU_HOST,
        );
        let icd = found.hardware.clone().expect("the NVIDIA driver");
        assert_eq!(icd.library, "libGLX_nvidia.so.0");
        assert!(icd.name_for_loader);
        let (route, reason) = choose(GpuRouteRequest::Auto, &found);
        assert_eq!(route, Route::Gpu);
        assert!(reason.contains("nvidia_icd.json"), "{reason}");
        // Named alone, not the lavapipe manifest beside it.
        let path = format!("{}/nvidia_icd.json", LOADER_ICD_DIRS[3]);
        assert!(
            route_env(route, &found).contains(&("VK_DRIVER_FILES".to_owned(), path)),
            "{:?}",
            route_env(route, &found)
        );
    }

    #[test]
    fn an_nvidia_icd_in_the_container_directory_is_named_for_the_loader() {
        let dir = tempfile::tempdir().unwrap();
        let manifests = written(dir.path(), &[("nvidia_icd.json", NVIDIA)]);
        let found = detect(
            &VulkanEnv::default(),
            &placed(manifests, NVIDIA_ONLY_ICD_DIR),
            GPU_HOST,
        );
        assert!(found.hardware.as_ref().unwrap().name_for_loader);
        let env = route_env(Route::Gpu, &found);
        let path = format!("{NVIDIA_ONLY_ICD_DIR}/nvidia_icd.json");
        assert!(
            env.contains(&("VK_DRIVER_FILES".to_owned(), path)),
            "{env:?}"
        );
        // Forced to software, the variable is not set.
        assert!(route_env(Route::Software, &found).is_empty());
    }

    #[test]
    fn a_hardware_icd_without_its_device_does_not_count() {
        let dir = tempfile::tempdir().unwrap();
        let manifests = written(
            dir.path(),
            &[
                ("intel_icd.x86_64.json", INTEL),
                ("nvidia_icd.json", NVIDIA),
            ],
        );
        let found = detect(
            &VulkanEnv::default(),
            &placed(manifests, LOADER_ICD_DIRS[3]),
            Devices::default(),
        );
        assert_eq!(found.hardware, None);
        assert!(
            found.reason.contains("no /dev/dri/renderD*")
                && found.reason.contains("no /dev/nvidia*"),
            "{}",
            found.reason
        );
    }

    #[test]
    fn the_variable_overrides_the_directories() {
        let dir = tempfile::tempdir().unwrap();
        let mut manifests = placed(
            written(dir.path(), &[("nvidia_icd.json", NVIDIA)]),
            LOADER_ICD_DIRS[3],
        );
        manifests.extend(written(dir.path(), &[("lvp.json", LAVAPIPE)]));
        let lvp = dir.path().join("lvp.json").display().to_string();
        let env = VulkanEnv {
            driver_files: Some(lvp.clone()),
            icd_filenames: None,
        };
        let found = detect(&env, &manifests, GPU_HOST);
        assert_eq!(found.hardware, None, "{}", found.reason);
        assert!(
            found
                .reason
                .starts_with("VK_DRIVER_FILES names no hardware"),
            "{}",
            found.reason
        );
        // The older variable counts when the newer one is unset; one that names nothing is refused.
        let nvidia = format!("{}/nvidia_icd.json", LOADER_ICD_DIRS[3]);
        let env = VulkanEnv {
            driver_files: Some(String::new()),
            icd_filenames: Some(format!("/nonexistent.json:{nvidia}")),
        };
        let found = detect(&env, &manifests, GPU_HOST);
        assert!(
            found
                .reason
                .starts_with("VK_ICD_FILENAMES names the hardware"),
            "{}",
            found.reason
        );
        assert!(!found.hardware.unwrap().name_for_loader);
    }

    #[test]
    fn forcing_a_route_says_so_and_keeps_what_was_found() {
        let found = detect(&VulkanEnv::default(), &[], Devices::default());
        assert!(
            found.reason.starts_with("no Vulkan ICD manifest"),
            "{}",
            found.reason
        );
        let (route, reason) = choose(GpuRouteRequest::Gpu, &found);
        assert_eq!(route, Route::Gpu);
        assert!(
            reason.starts_with("--gpu-route gpu; no Vulkan ICD manifest"),
            "{reason}"
        );
        assert!(
            reason.contains("a software adapter and end with exit 10"),
            "{reason}"
        );
        let err = "cuda".parse::<GpuRouteRequest>().unwrap_err();
        assert!(err.contains("allowed: auto, gpu, software"), "{err}");
    }

    #[test]
    fn a_fallback_adapter_stops_a_forced_gpu_route_and_is_noted_on_auto() {
        let swiftshader = serde_json::json!({ "isFallbackAdapter": true, "software": true, "vendor": "google", "architecture": "swiftshader" });
        let h200 = serde_json::json!({ "isFallbackAdapter": false, "software": false, "vendor": "nvidia" });
        let route = |asked, route| GpuRoute {
            asked,
            route,
            reason: String::new(),
            flags: Vec::new(),
            env: Vec::new(),
            adapter: None,
            fallback_accepted: false,
        };
        let mut forced = route(GpuRouteRequest::Gpu, Route::Gpu);
        assert_eq!(
            forced.judge_adapter(&swiftshader),
            AdapterVerdict::FallbackRefused
        );
        assert_eq!(forced.adapter, Some(Route::Software));
        let mut auto = route(GpuRouteRequest::Auto, Route::Gpu);
        assert_eq!(
            auto.judge_adapter(&swiftshader),
            AdapterVerdict::FallbackAccepted
        );
        assert!(auto.fallback_accepted);
        let record = serde_json::to_value(&auto).unwrap();
        assert_eq!(record["fallbackAccepted"], true, "{record}");
        assert_eq!(record["adapter"], "software", "{record}");
        let mut on_gpu = route(GpuRouteRequest::Gpu, Route::Gpu);
        assert_eq!(on_gpu.judge_adapter(&h200), AdapterVerdict::Fits);
        assert_eq!(on_gpu.adapter, Some(Route::Gpu));
        let mut software = route(GpuRouteRequest::Auto, Route::Software);
        assert_eq!(software.judge_adapter(&swiftshader), AdapterVerdict::Fits);
        assert!(serde_json::to_value(&software)
            .unwrap()
            .get("fallbackAccepted")
            .is_none());
    }

    #[test]
    fn the_page_verdict_is_its_software_field_else_its_fallback_flag() {
        let verdict = |v: Value| adapter_route(&v);
        assert_eq!(
            verdict(serde_json::json!({ "software": true, "isFallbackAdapter": false })),
            Some(Route::Software)
        );
        assert_eq!(
            verdict(serde_json::json!({ "isFallbackAdapter": true })),
            Some(Route::Software)
        );
        assert_eq!(
            verdict(serde_json::json!({ "software": false, "vendor": "nvidia" })),
            Some(Route::Gpu)
        );
        assert_eq!(verdict(serde_json::json!({ "vendor": "" })), None);
    }
}
