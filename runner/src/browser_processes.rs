//! Which of the runner's processes are one launched browser's.
//!
//! The runner is a subreaper ([`crate::procfs::become_subreaper`]), so an orphan of any
//! browser it started (Chromium's crash handler double-forks, Firefox relaunches itself)
//! becomes the runner's own child: the process tree alone cannot say whose it is. With one
//! browser at a time that did not matter; with two jobs of one sweep it did: one job's stop
//! killed the other job's browser mid-run, its reaping took the other's exit status, and each
//! sampler counted both browsers.
//!
//! So every browser starts with a variable of its own in its environment
//! ([`BrowserTag`]), which each of its processes inherits, and a process is the browser's
//! when it carries the tag, descends from one that does, or is its main process. A process
//! once recognised stays recognised: a zombie's environment reads empty, yet it is still the
//! browser's to reap.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::procfs;

/// The environment variable that names the browser a process belongs to.
pub const TAG_VARIABLE: &str = "OCR_BENCH_BROWSER";

/// The mark one launched browser's processes carry: `OCR_BENCH_BROWSER=<runner pid>-<n>`,
/// unique within the runner and across runners on one machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserTag {
    value: String,
}

impl BrowserTag {
    /// A tag no other browser of this runner has.
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        BrowserTag {
            value: format!("{}-{n}", std::process::id()),
        }
    }

    /// The variable's value, to set in the browser's environment.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Whether `pid`'s environment carries this tag; `None` where it cannot be read.
    fn carried_by(&self, pid: u32) -> Option<bool> {
        procfs::environment_holds(pid, TAG_VARIABLE, &self.value)
    }
}

impl Default for BrowserTag {
    fn default() -> Self {
        Self::new()
    }
}

/// The browsers of this runner that have started and not yet been stopped.
static LIVE_BROWSERS: AtomicUsize = AtomicUsize::new(0);

/// One browser counted among the runner's live ones while this is held.
#[derive(Debug)]
pub struct LiveBrowser(());

impl LiveBrowser {
    pub fn register() -> Self {
        LIVE_BROWSERS.fetch_add(1, Ordering::SeqCst);
        LiveBrowser(())
    }

    /// Whether this is the runner's only live browser (a `run`, a sweep of one job at a time):
    /// then every other descendant of the runner is its own too, as a safety net for a process
    /// that neither carries the tag nor was seen under one that does before its parent ended.
    pub fn alone(&self) -> bool {
        LIVE_BROWSERS.load(Ordering::SeqCst) == 1
    }
}

impl Drop for LiveBrowser {
    fn drop(&mut self) {
        LIVE_BROWSERS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The processes of one tagged browser among this process's descendants.
#[derive(Debug)]
pub struct BrowserProcesses {
    tag: BrowserTag,
    /// The browser's main process, once started: the browser's before it has even exec'd.
    main: Option<u32>,
    /// Every process recognised so far and still present (live or zombie).
    known: HashSet<u32>,
    /// Processes whose environment was read and lacks the tag (another job's browser, the
    /// runner's helpers), so that a scan reads each environment once.
    strangers: HashSet<u32>,
}

impl BrowserProcesses {
    pub fn new(tag: BrowserTag) -> Self {
        BrowserProcesses {
            tag,
            main: None,
            known: HashSet::new(),
            strangers: HashSet::new(),
        }
    }

    /// Names the browser's main process.
    pub fn set_main(&mut self, pid: u32) {
        self.main = Some(pid);
        self.known.insert(pid);
    }

    /// The browser's processes among this process's descendants now, zombies included, each
    /// parent before its children. Chromium starts its zygote, GPU and renderer processes
    /// with an environment of their own, without the tag: they are recognised as children of
    /// a process already recognised, so a scan while the browser runs (the run polls one)
    /// keeps them recognised once their parent has gone.
    pub fn scan(&mut self) -> Vec<u32> {
        let tree = procfs::descendants_with_parents(std::process::id());
        // A pid that left the tree is forgotten, so that a later process given the same pid
        // is judged afresh.
        let in_tree = |pid: &u32| tree.iter().any(|(p, _)| p == pid);
        self.known
            .retain(|pid| Some(*pid) == self.main || in_tree(pid));
        self.strangers.retain(in_tree);
        let mut found = Vec::new();
        for (pid, parent) in tree {
            let ours = self.known.contains(&pid)
                || self.known.contains(&parent)
                || (!self.strangers.contains(&pid) && self.read_tag(pid));
            if ours {
                self.known.insert(pid);
                found.push(pid);
            }
        }
        found
    }

    /// Reads whether `pid` carries the tag, remembering a process that does not. The main
    /// process, the one child whose environment changes at its exec, is known beforehand.
    fn read_tag(&mut self, pid: u32) -> bool {
        match self.tag.carried_by(pid) {
            Some(true) => true,
            Some(false) => {
                self.strangers.insert(pid);
                false
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn tags_differ_and_name_this_runner() {
        let (a, b) = (BrowserTag::new(), BrowserTag::new());
        assert_ne!(a, b);
        assert!(a.value().starts_with(&format!("{}-", std::process::id())));
    }

    #[test]
    fn a_scan_finds_the_tagged_tree_and_not_an_untagged_sibling() {
        let tag = BrowserTag::new();
        let spawn = |tagged: bool| {
            use std::os::unix::process::CommandExt;
            let mut command = Command::new("sh");
            // A child with a grandchild: the grandchild carries the tag by inheritance.
            command
                .args(["-c", "sleep 30 & wait"])
                .stdin(Stdio::null())
                .process_group(0);
            if tagged {
                command.env(TAG_VARIABLE, tag.value());
            }
            command.spawn().expect("sh")
        };
        let mut ours = spawn(true);
        let mut other = spawn(false);
        let mut processes = BrowserProcesses::new(tag.clone());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let found = loop {
            let found = processes.scan();
            if found.len() >= 2 || std::time::Instant::now() > deadline {
                break found;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert!(found.contains(&ours.id()), "{found:?}");
        assert_eq!(found.len(), 2, "the shell and its sleep: {found:?}");
        assert!(!found.contains(&other.id()), "{found:?}");
        for child in [&mut ours, &mut other] {
            // SAFETY: kill with a negative pid signals the child's own process group.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
        }
    }
}
