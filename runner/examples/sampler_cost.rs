//! What one memory sample costs, measured side by side on a live headless browser: an RSS
//! tick (`/proc/PID/statm` of every process in the tree) against a PSS pass
//! (`/proc/PID/smaps_rollup` of every process). The page holds `MIB` MiB of touched memory
//! so that the page-table walk of a PSS pass has something to walk.
//!
//! ```text
//! cargo run --release -p ocr-bench --example sampler_cost -- [chromium|firefox] [MIB]
//! ```

use std::time::Duration;

use anyhow::Result;
use ocr_bench::browser::{self, Browser, BrowserKind};
use ocr_bench::procfs;

const ROUNDS: usize = 200;

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let kind: BrowserKind = args
        .next()
        .as_deref()
        .unwrap_or("chromium")
        .parse()
        .map_err(anyhow::Error::msg)?;
    let mib: u32 = args.next().map_or(Ok(1024), |v| v.parse())?;
    procfs::become_subreaper()?;
    let info = browser::probe(kind)?;
    let page = format!(
        "data:text/html,<script>window.held=new Uint8Array({mib}*1048576).fill(1);document.title='ready'</script>"
    );
    let route = ocr_bench::browser::gpu_route(Default::default(), kind);
    let tag = ocr_bench::browser_processes::BrowserTag::new();
    let mut instance = Browser::launch(&info, &page, &route, &Default::default(), &tag)?;
    // Let every process start and the page fill its buffer.
    std::thread::sleep(Duration::from_secs(12));
    let pids = procfs::descendants(std::process::id());
    let page_size = procfs::page_size();
    let total_rss: u64 = pids
        .iter()
        .filter_map(|p| procfs::read_rss(*p, page_size))
        .sum();
    let (mut rss_ticks, mut pss_passes) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let before = procfs::thread_cpu_time();
        for pid in &pids {
            let _ = procfs::read_rss(*pid, page_size);
        }
        let middle = procfs::thread_cpu_time();
        for pid in &pids {
            let _ = procfs::read_pss(*pid);
        }
        let after = procfs::thread_cpu_time();
        rss_ticks.push(middle - before);
        pss_passes.push(after - middle);
        std::thread::sleep(Duration::from_millis(20));
    }
    let stop = instance.stop();
    let rss = median(rss_ticks);
    let pss = median(pss_passes);
    println!(
        "{} · {} processes · {:.0} MiB RSS in all · {ROUNDS} rounds",
        info.version,
        pids.len(),
        total_rss as f64 / 1048576.0
    );
    println!(
        "RSS tick (statm):        median {:>8.1} µs CPU",
        rss.as_secs_f64() * 1e6
    );
    println!(
        "PSS pass (smaps_rollup): median {:>8.1} µs CPU ({:.0}x an RSS tick)",
        pss.as_secs_f64() * 1e6,
        pss.as_secs_f64() / rss.as_secs_f64()
    );
    println!(
        "RSS at 40 Hz costs {:.2}% of one core",
        rss.as_secs_f64() * 40.0 * 100.0
    );
    println!(
        "PSS every tick at 40 Hz would cost {:.1}% of one core; within 5% it runs at {:.1} Hz",
        pss.as_secs_f64() * 40.0 * 100.0,
        0.05 / pss.as_secs_f64()
    );
    if !stop.left.is_empty() {
        anyhow::bail!("processes left after stopping the browser: {:?}", stop.left);
    }
    Ok(())
}
