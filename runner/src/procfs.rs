//! What the runner reads of its own and the browser's processes from `/proc` (and the two
//! system calls beside it: becoming a subreaper, a thread's CPU time).
//!
//! Hand-rolled rather than through the `procfs` crate: each read is a few lines over one
//! small file, two of them sit on the sampler's every tick (`statm`, `task/*/children`), and
//! they need quirks of their own (Chromium's rewritten process title, a zombie's empty command
//! line). The crate would add `procfs` and `procfs-core`, open every `/proc/PID` as a
//! directory first, parse all of `smaps_rollup` into a map to get one line, and still
//! provide neither `prctl(PR_SET_CHILD_SUBREAPER)` nor a thread's CPU clock.

use std::fs;
use std::time::Duration;

/// Makes this process the reaper of its orphaned descendants, so that none escapes the
/// sampled tree or the final kill.
pub fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes one integer argument and touches no memory.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Every descendant of `root`, found through the `children` files of each of its threads.
pub fn descendants(root: u32) -> Vec<u32> {
    descendants_with_parents(root)
        .into_iter()
        .map(|(pid, _)| pid)
        .collect()
}

/// Every descendant of `root` with its parent, each parent listed before its children.
pub fn descendants_with_parents(root: u32) -> Vec<(u32, u32)> {
    let mut found: Vec<(u32, u32)> = Vec::new();
    let mut queue = std::collections::VecDeque::from([root]);
    while let Some(pid) = queue.pop_front() {
        let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let path = task.path().join("children");
            let Ok(text) = fs::read_to_string(path) else {
                continue;
            };
            for child in text
                .split_ascii_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
            {
                if !found.iter().any(|(known, _)| *known == child) {
                    found.push((child, pid));
                    queue.push_back(child);
                }
            }
        }
    }
    found
}

/// Whether the environment `pid` started with holds `name=value`; `None` where it cannot be
/// read (the process is gone, or a zombie, whose environment reads empty).
pub fn environment_holds(pid: u32, name: &str, value: &str) -> Option<bool> {
    let raw = fs::read(format!("/proc/{pid}/environ")).ok()?;
    if raw.is_empty() {
        return None;
    }
    let entry = format!("{name}={value}");
    Some(raw.split(|b| *b == 0).any(|e| e == entry.as_bytes()))
}

/// Whether `/proc/PID` still exists: a live process or a zombie not yet reaped.
pub fn exists(pid: u32) -> bool {
    fs::metadata(format!("/proc/{pid}")).is_ok()
}

/// The command line of `pid`, split into arguments; `None` for a process that has exited or
/// is a zombie.
pub fn read_cmdline(pid: u32) -> Option<Vec<String>> {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    // Chromium rewrites its process title: its children show one NUL-free string.
    let args = match args.as_slice() {
        [single] if single.contains(' ') => {
            single.split_ascii_whitespace().map(str::to_owned).collect()
        }
        _ => args,
    };
    // A zombie has an empty command line; it holds no memory worth sampling.
    if args.is_empty() {
        None
    } else {
        Some(args)
    }
}

pub fn page_size() -> u64 {
    // SAFETY: sysconf reads a constant of the running system.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as u64
    } else {
        4096
    }
}

/// Resident set size in bytes, from the second field of `/proc/PID/statm`.
pub fn read_rss(pid: u32, page: u64) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages: u64 = text.split_ascii_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page)
}

/// Proportional set size in bytes, from `/proc/PID/smaps_rollup`.
pub fn read_pss(pid: u32) -> Option<u64> {
    read_rollup(pid).map(|rollup| rollup.pss)
}

/// What one read of `/proc/PID/smaps_rollup` gives: the proportional set size, and the part of
/// it in shared memory (`Pss_Shmem`: the buffers browsers share between their processes, GPU
/// transfer buffers among them), where the kernel reports it (Linux 5.14 and later).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rollup {
    pub pss: u64,
    pub pss_shmem: Option<u64>,
}

pub fn read_rollup(pid: u32) -> Option<Rollup> {
    parse_rollup(&fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?)
}

fn parse_rollup(text: &str) -> Option<Rollup> {
    let bytes = |name: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line.split_ascii_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    };
    Some(Rollup {
        pss: bytes("Pss:")?,
        pss_shmem: bytes("Pss_Shmem:"),
    })
}

/// CPU time this thread has used.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// `pid (name) state command line` for a report; a zombie has a name but no command line.
pub fn describe_process(pid: u32) -> String {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let head = stat
        .find(')')
        .map_or(stat.as_str(), |end| &stat[..(end + 3).min(stat.len())]);
    let cmdline = read_cmdline(pid).unwrap_or_default().join(" ");
    format!("{} {cmdline}", head.trim())
}

/// A process that exists and is not a zombie.
pub fn is_alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat_field(&stat, 0).is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Field `index` of `/proc/PID/stat` counted after the command name (0 = state).
fn stat_field(stat: &str, index: usize) -> Option<&str> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_ascii_whitespace().nth(index)
}

/// Every live process whose process group is `pgid` (a full scan of /proc: used only while
/// stopping, not by the sampler).
pub fn process_group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .is_some_and(|stat| {
                    let alive = stat_field(&stat, 0).is_some_and(|s| s != "Z" && s != "X");
                    alive && stat_field(&stat, 2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
                })
        })
        .collect()
}

/// The open file descriptors of this process (the soak's leak check).
pub fn own_open_fds() -> Option<usize> {
    std::fs::read_dir("/proc/self/fd").ok().map(|d| d.count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollup_reads_pss_and_its_shared_memory_part() {
        let text = "5581a39e0000-7ffdce672000 ---p 00000000 00:00 0 [rollup]\nRss: 1756 kB\nPss:  413 kB\nPss_Dirty: 116 kB\nPss_Shmem:   12 kB\n";
        assert_eq!(
            parse_rollup(text),
            Some(Rollup {
                pss: 413 * 1024,
                pss_shmem: Some(12 * 1024)
            })
        );
        // Kernels before 5.14 have no Pss_Shmem line: PSS alone.
        assert_eq!(
            parse_rollup("Rss: 8 kB\nPss: 4 kB\n"),
            Some(Rollup {
                pss: 4096,
                pss_shmem: None
            })
        );
        assert_eq!(parse_rollup("Rss: 8 kB\n"), None);
        // This process's own file parses, and its shared part is within its PSS.
        let own = read_rollup(std::process::id()).expect("smaps_rollup of this process");
        assert!(own.pss > 0 && own.pss_shmem.is_none_or(|shmem| shmem <= own.pss));
    }

    #[test]
    fn stat_fields_survive_spaces_in_the_command_name() {
        let stat = "1234 (Web Content) S 1 1200 1200 0 -1";
        assert_eq!(stat_field(stat, 0), Some("S"));
        assert_eq!(stat_field(stat, 2), Some("1200"));
    }
}
