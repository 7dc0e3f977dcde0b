//! Starting and stopping the real llama-server for the suite.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn cache_dir() -> PathBuf {
    std::env::var_os("EGIRL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/egirl")
        })
}

pub fn binary() -> PathBuf {
    let path = std::env::var_os("LLAMA_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache_dir().join("llama/bin/llama-server"));
    assert!(
        path.is_file(),
        "llama-server not found at {} — run scripts/install-llama.sh (make test does)",
        path.display()
    );
    path
}

pub fn model() -> PathBuf {
    let path = std::env::var_os("LLAMA_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache_dir().join("models/SmolLM2-135M-Instruct.Q4_1.gguf"));
    assert!(
        path.is_file(),
        "model not found at {} — run scripts/install-llama.sh (make test does)",
        path.display()
    );
    path
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Arguments the suite starts the server with (also used for the managed one).
pub const SERVER_ARGS: [&str; 4] = ["--ctx-size", "8192", "--parallel", "1"];

pub struct RealServer {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl RealServer {
    pub fn start(log_dir: &Path) -> Self {
        Self::start_on(free_port(), log_dir)
    }

    pub fn start_on(port: u16, log_dir: &Path) -> Self {
        Self::start_with(port, log_dir, &[])
    }

    /// `start_on` with more arguments after [`SERVER_ARGS`] (`--slot-save-path DIR`).
    pub fn start_with(port: u16, log_dir: &Path, extra: &[&str]) -> Self {
        let log = log_dir.join(format!("llama-server-{port}.log"));
        let out = std::fs::File::create(&log).expect("log file");
        let child = Command::new(binary())
            .args(["--jinja", "-m"])
            .arg(model())
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(SERVER_ARGS)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("log file"))
            .stderr(out)
            .spawn()
            .expect("start llama-server");
        let server = Self { child, port, log };
        server.wait_healthy(Duration::from_secs(120));
        server
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn wait_healthy(&self, limit: Duration) {
        let started = Instant::now();
        while started.elapsed() < limit {
            if health(self.port) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "llama-server did not become healthy in {limit:?}; log:\n{}",
            std::fs::read_to_string(&self.log).unwrap_or_default()
        );
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RealServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// GET /health answered 200.
pub fn health(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut buf = String::new();
    let _ = s.read_to_string(&mut buf);
    buf.starts_with("HTTP/1.1 200")
}

/// Processes whose command line mentions `--port <port>` (orphan check).
pub fn processes_on_port(port: u16) -> Vec<u32> {
    let needle = format!("--port\0{port}\0");
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline).contains(&needle)
        {
            found.push(pid);
        }
    }
    found
}
