//! What a browser is started with: Chromium's switches (the fixed ones and, on the GPU route,
//! those that reach the GPU through Vulkan) and Firefox's prefs. The local launch and the
//! WebDriver target's default capabilities both take them from here, and so does the check
//! that a user's own switch or pref (`--chromium-switch`, `--firefox-pref`) is none of these.

use super::kind::BrowserKind;
use crate::gpu_route::{self, GpuRoute, GpuRouteRequest, Route, CHROMIUM_GPU_SWITCHES};

/// Chromium switches. `--enable-unsafe-webgpu` gives WebGPU on SwiftShader where there is no
/// GPU; the memory switches make `performance.memory` unbucketed and
/// `measureUserAgentSpecificMemory` answer at once instead of waiting for a garbage
/// collection (7–19 s per call with the seed page here).
const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--enable-unsafe-webgpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-breakpad",
    "--mute-audio",
    "--enable-precise-memory-info",
    "--enable-blink-features=ForceEagerMeasureMemory",
    // Chromium starts an OnDeviceModelService utility process (about 94 MiB) 3 minutes after
    // startup to benchmark the device's "performance class" (seen at 170-182 s here), which
    // would count as the page's memory. Giving the class on the command line skips the
    // benchmark: of four idle browsers watched for 210 s, only the one with this switch never
    // started the service; --disable-features=OptimizationGuideOnDeviceModel,
    // LogOnDeviceMetricsOnStartup (and a dozen more AI features) and
    // --disable-field-trial-config did not stop it. 1 is the class "error": not capable.
    "--optimization-guide-performance-class=1",
];

/// Chromium's switches on `route`: the fixed ones, and on the GPU route those that reach
/// the GPU through Vulkan ([`crate::gpu_route::CHROMIUM_GPU_SWITCHES`]).
pub fn chromium_switches(route: Route) -> Vec<String> {
    let on_gpu: &[&str] = match route {
        Route::Gpu => CHROMIUM_GPU_SWITCHES,
        Route::Software => &[],
    };
    CHROMIUM_FLAGS
        .iter()
        .chain(on_gpu)
        .map(|s| (*s).to_owned())
        .collect()
}

/// Switches a local launch adds beside the route's: the profile, the sandbox off when the
/// runner is root, and the runner's self-signed certificate accepted (`--tls`).
pub(crate) const PROFILE_SWITCH: &str = "--user-data-dir";
pub(crate) const NO_SANDBOX_SWITCH: &str = "--no-sandbox";
pub(crate) const SELF_SIGNED_SWITCH: &str = "--ignore-certificate-errors";

/// A switch's name: what comes before its `=`.
pub(crate) fn switch_name(switch: &str) -> &str {
    switch.split_once('=').map_or(switch, |(name, _)| name)
}

/// Where the harness sets a switch of the same name as `switch` itself (a second one would
/// override it or be overridden, Chromium keeping the last), in words; `None` where it does not.
pub(crate) fn set_by_the_harness(switch: &str) -> Option<&'static str> {
    let name = switch_name(switch);
    let among = |list: &[&str]| list.iter().any(|s| switch_name(s) == name);
    if among(CHROMIUM_FLAGS) {
        Some("one of its fixed switches")
    } else if among(CHROMIUM_GPU_SWITCHES) {
        Some("on the GPU route")
    } else if among(&[PROFILE_SWITCH, NO_SANDBOX_SWITCH, SELF_SIGNED_SWITCH]) {
        Some("at the launch (the profile, the sandbox as root, a self-signed page)")
    } else {
        None
    }
}

/// Whether the harness sets the Firefox pref `name` itself.
pub(crate) fn pref_set_by_the_harness(name: &str) -> bool {
    FIREFOX_PREFS
        .iter()
        .chain([&MEMORY_REPORT_PREF])
        .any(|(set, _)| *set == name)
}

/// The GPU route of one run of `browser` as `asked`: this machine's route, with the switches
/// that start `browser` on it (Firefox takes prefs, not switches).
pub fn gpu_route(asked: GpuRouteRequest, browser: BrowserKind) -> GpuRoute {
    let mut route = gpu_route::resolve(asked);
    route.flags = match browser {
        BrowserKind::Chromium => chromium_switches(route.route),
        BrowserKind::Firefox => Vec::new(),
    };
    route
}

/// The Firefox pref under `--memory-reports`: Firefox watches `$TMPDIR/debug_info_trigger` and
/// writes its memory reports when `memory report` is written into it.
pub(crate) const MEMORY_REPORT_PREF: (&str, &str) =
    ("memory_info_dumper.watch_fifo.enabled", "true");

/// Firefox prefs: WebGPU on (lavapipe here, with `shader-f16`), and everything that would
/// start network traffic, updates, telemetry or first-run pages off. Values are JavaScript
/// literals that are JSON too (a WebDriver session takes them as `moz:firefoxOptions` prefs).
pub(crate) const FIREFOX_PREFS: &[(&str, &str)] = &[
    ("dom.webgpu.enabled", "true"),
    ("gfx.webgpu.ignore-blocklist", "true"),
    ("app.update.enabled", "false"),
    ("app.update.auto", "false"),
    ("app.update.disabledForTesting", "true"),
    ("app.normandy.enabled", "false"),
    ("browser.shell.checkDefaultBrowser", "false"),
    ("browser.startup.homepage_override.mstone", "\"ignore\""),
    ("browser.startup.firstrunSkipsHomepage", "true"),
    ("browser.aboutwelcome.enabled", "false"),
    ("startup.homepage_welcome_url", "\"\""),
    ("startup.homepage_welcome_url.additional", "\"\""),
    ("trailhead.firstrun.didSeeAboutWelcome", "true"),
    ("datareporting.policy.dataSubmissionEnabled", "false"),
    ("datareporting.healthreport.uploadEnabled", "false"),
    ("toolkit.telemetry.enabled", "false"),
    ("toolkit.telemetry.unified", "false"),
    ("toolkit.telemetry.archive.enabled", "false"),
    ("extensions.update.enabled", "false"),
    ("extensions.getAddons.cache.enabled", "false"),
    ("browser.safebrowsing.malware.enabled", "false"),
    ("browser.safebrowsing.phishing.enabled", "false"),
    ("browser.safebrowsing.downloads.enabled", "false"),
    ("browser.safebrowsing.update.enabled", "false"),
    ("network.captive-portal-service.enabled", "false"),
    ("network.connectivity-service.enabled", "false"),
    ("browser.newtabpage.enabled", "false"),
    ("browser.sessionstore.resume_from_crash", "false"),
    ("toolkit.startup.max_resumed_crashes", "-1"),
    ("browser.tabs.warnOnClose", "false"),
    // The page's console goes to the browser log, which the runner shows on failure.
    ("devtools.console.stdout.content", "true"),
];
