//! What a browser is started with: Chromium's switches (the fixed ones and, on the GPU route,
//! those that reach the GPU through Vulkan) and Firefox's prefs. The local launch and the
//! WebDriver target's default capabilities both take them from here.

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
