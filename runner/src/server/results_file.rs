//! The results file the server appends to: one record per line, each in one `write` call,
//! every append on a fresh line (so a torn line costs only itself), and the path opened again
//! when the file was deleted or replaced under the server. Every error names the file and the
//! OS error.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::exit::{Cause, Failure};

pub struct ResultsFile {
    path: PathBuf,
    file: File,
    /// False when the file ends in a torn line (a crash mid-append, a failed write): the next
    /// append starts with a newline.
    at_line_start: bool,
}

/// Whether a file ends with a newline (or is empty); unreadable files (`/dev/full`) count as
/// ending cleanly.
fn ends_at_line_start(file: &File) -> bool {
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len == 0 {
        return true;
    }
    let mut last = [0u8; 1];
    match file.read_at(&mut last, len - 1) {
        Ok(1) => last[0] == b'\n',
        _ => true,
    }
}

fn write_failed(what: String) -> impl FnOnce(std::io::Error) -> Failure {
    move |e| Failure::new(Cause::WriteFailed, format!("{what}: {e}"))
}

impl ResultsFile {
    /// Opens (creating it and its directory if needed) the file for appending.
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(write_failed(format!(
                "creating the directory {} of the results file",
                dir.display()
            )))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .or_else(|_| {
                // Write-only places (a FIFO, a device) cannot be read back; append anyway.
                OpenOptions::new().create(true).append(true).open(path)
            })
            .map_err(write_failed(format!(
                "opening the results file {}",
                path.display()
            )))?;
        let at_line_start = ends_at_line_start(&file);
        Ok(Self {
            path: path.to_owned(),
            file,
            at_line_start,
        })
    }

    /// Appends `line` (one JSON record, no newline) on a line of its own.
    pub fn append_line(&mut self, line: &str) -> Result<()> {
        self.reopen_if_replaced()?;
        let mut text = String::with_capacity(line.len() + 2);
        if !self.at_line_start {
            text.push('\n');
        }
        text.push_str(line);
        text.push('\n');
        let written = self
            .file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.flush());
        // A failed write may have left part of the line: the next starts afresh.
        self.at_line_start = written.is_ok();
        written.map_err(|e| {
            Failure::new(
                Cause::WriteFailed,
                format!("appending to the results file {}: {e}", self.path.display()),
            )
            .into()
        })
    }

    /// A results file deleted or replaced under the server would take the records into an
    /// inode nobody can read: open the path again (one `stat` per record).
    fn reopen_if_replaced(&mut self) -> Result<()> {
        use std::os::unix::fs::MetadataExt;
        let open = self.file.metadata().map(|m| (m.dev(), m.ino())).ok();
        let named = fs::metadata(&self.path).map(|m| (m.dev(), m.ino())).ok();
        if open.is_some() && open == named {
            return Ok(());
        }
        eprintln!(
            "ocr-bench: warning: the results file {} was removed or replaced; appending to a new file at that path",
            self.path.display()
        );
        self.file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(write_failed(format!(
                "opening the results file {} again",
                self.path.display()
            )))?;
        self.at_line_start = ends_at_line_start(&self.file);
        Ok(())
    }
}
