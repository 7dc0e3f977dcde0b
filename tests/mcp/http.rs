//! server-everything in its streamable HTTP mode.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::server;
use super::stdio::result_of;
use crate::support::cli::{Cli, events, of_type, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

/// The HTTP server, stopped on every way out of the test.
pub struct HttpServer(Child);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

pub async fn start_http_server() -> (HttpServer, u16) {
    let port = free_port();
    let child = Command::new("node")
        .arg(server("everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start node");
    let server = HttpServer(child);
    // Up when it accepts a connection (bounded: a broken install fails here).
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return (server, port);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server-everything streamableHttp did not listen on port {port}");
}

#[tokio::test]
async fn tools_of_a_streamable_http_server_are_called_like_stdio_ones() {
    let (_server, port) = start_http_server().await;
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("mcp__web__get-sum", r#"{"a":2,"b":40}"#)]),
        Reply::text("done"),
    ]);
    let config = format!(
        "[mcp.servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ X-Egirl-Test = \"yes\" }}\n"
    );
    let cli = Cli::new(&fake, &config);
    let out = cli.run(&["-m", "add", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let sum = result_of(&ev, "mcp__web__get-sum");
    assert_eq!(sum["success"], true, "{sum}");
    assert!(sum["output"].as_str().unwrap().contains("42"), "{sum}");
    assert!(of_type(&ev, "approval_request").is_empty());
}
