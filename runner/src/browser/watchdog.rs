//! The local browser's watchdog: a small shell process that outlives a runner killed with
//! SIGKILL and then kills the browser's process group and removes its profile.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result};

/// A shell beside the browser that waits on a pipe from the runner. The runner writes `done`
/// once it has stopped the browser itself; end of file without it means the runner died
/// (SIGKILL cannot be caught), and the watchdog kills the browser's process group and removes
/// the profile. It has its own process group and ignores the terminal's signals, so a closed
/// terminal or Ctrl-C reaches only the runner, which stops the browser itself.
pub(super) struct Watchdog {
    child: Child,
}

/// `$1` the browser's process group, `$2` the profile's directory. The wait is bounded: 10 s
/// in steps of 0.1 s (Firefox's 11 processes were gone within 0.3 s of SIGKILL here). The
/// signal is given as `-s KILL`: dash (Debian's `/bin/sh`) reads `kill -KILL -- -PGID` as
/// the number `-` and kills nothing, which only the watchdog-alone test showed.
const WATCHDOG_SCRIPT: &str = r#"trap '' HUP INT TERM QUIT
if read -r word && [ "$word" = done ]; then exit 0; fi
kill -s KILL -- "-$1" 2>/dev/null
i=0
while kill -s 0 -- "-$1" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
rm -rf -- "$2"
"#;

impl Watchdog {
    pub(super) fn start(pgid: u32, workdir: &Path) -> Result<Watchdog> {
        use std::os::unix::process::CommandExt;
        let child = Command::new("/bin/sh")
            .args(["-c", WATCHDOG_SCRIPT, "ocr-bench-watchdog"])
            .arg(pgid.to_string())
            .arg(workdir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .context("starting the browser's watchdog (/bin/sh)")?;
        Ok(Watchdog { child })
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The browser is stopped: tell the watchdog to leave it, and reap it.
    pub(super) fn dismiss(mut self) {
        if let Some(mut pipe) = self.child.stdin.take() {
            use std::io::Write;
            let _ = pipe.write_all(b"done\n");
        }
        let _ = self.child.wait();
    }
}
