//! Finding a browser on this machine: its executable and its version, and what the user added
//! to its start.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::extra::ExtraOptions;
use super::kind::BrowserKind;
use crate::exit::{Cause, Failure};

/// A browser found on this machine, and what the user added to its start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrowserInfo {
    pub name: BrowserKind,
    pub executable: PathBuf,
    pub version: String,
    /// The user's own switches or prefs (`--chromium-switch`, `--firefox-pref`), this
    /// browser's only; absent when there are none, and in older files.
    #[serde(default, skip_serializing_if = "ExtraOptions::is_empty")]
    pub extra: ExtraOptions,
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Finds the browser's executable and asks it for its version.
/// Errors name the executable or the variable; their exit status is "browser missing".
pub fn probe(kind: BrowserKind) -> Result<BrowserInfo> {
    probe_executable(kind).map_err(|e| Failure::new(Cause::BrowserMissing, format!("{e:#}")).into())
}

fn probe_executable(kind: BrowserKind) -> Result<BrowserInfo> {
    let (variable, names) = kind.candidates();
    let named = std::env::var_os(variable).is_some();
    let executable = match std::env::var_os(variable) {
        Some(path) => {
            let path = PathBuf::from(path);
            if !path.is_file() {
                bail!(
                    "{variable}={} names no file; allowed: the path of a {kind} executable, or leave {variable} unset to look for {} on PATH",
                    path.display(),
                    names.join(", ")
                );
            }
            path
        }
        None => names
            .iter()
            .find_map(|n| find_in_path(n))
            .with_context(|| {
                format!(
                    "{kind} is not installed: none of {} is on PATH (or set {variable})",
                    names.join(", ")
                )
            })?,
    };
    let output = Command::new(&executable)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .with_context(|| {
            // A file that is there but will not run: say which setting named it.
            let source = if named {
                format!(" ({variable} names it)")
            } else {
                String::new()
            };
            format!("running {} --version{source}", executable.display())
        })?;
    // Debian's chromium wrapper also prints shell noise on stderr; the version is on stdout.
    let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if !output.status.success() || version.is_empty() {
        bail!(
            "{} --version failed ({}): {}",
            executable.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(BrowserInfo {
        name: kind,
        executable,
        version,
        extra: ExtraOptions::default(),
    })
}
