//! The daemon's metrics endpoint as a scraper sees it: an HTTP GET from inside the
//! daemon's namespace, and the value of one series in the Prometheus text.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::netns::Netns;

/// An HTTP reply: the status code, the head (status line and headers, as sent) and the
/// body.
#[derive(Debug, Clone)]
pub struct HttpReply {
    pub status: u16,
    pub head: String,
    pub body: String,
}

/// `GET PATH HTTP/1.1` to `addr` (e.g. `127.0.0.1:9717`) from inside `ns`, with `addr`
/// as its Host (as a scraper sends it), read until the server closes (the endpoint
/// sends `Connection: close`). Panics when the connection fails or the reply is not
/// HTTP.
pub fn http_get(ns: &Netns, addr: &str, path: &str) -> HttpReply {
    http_request(
        ns,
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes(),
    )
}

/// `request`, as it is, to `addr` from inside `ns`; the reply as [`http_get`] reads it.
pub fn http_request(ns: &Netns, addr: &str, request: &[u8]) -> HttpReply {
    let mut s = ns
        .run(|| TcpStream::connect(addr))
        .unwrap_or_else(|e| panic!("connect to {addr} in {}: {e}", ns.name));
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    s.write_all(request)
        .unwrap_or_else(|e| panic!("send to {addr}: {e}"));
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)
        .unwrap_or_else(|e| panic!("read from {addr}: {e}"));
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("not an HTTP reply from {addr}: {text:?}"));
    let status = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP/1.1 status line from {addr}: {head:?}"));
    HttpReply {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// The body of `GET /metrics` from `addr` inside `ns`, which must answer 200.
pub fn scrape_metrics(ns: &Netns, addr: &str) -> String {
    let r = http_get(ns, addr, "/metrics");
    assert_eq!(r.status, 200, "GET /metrics: {}\n{}", r.head, r.body);
    r.body
}

/// The value of `series` in Prometheus text: the sample line that is exactly `series`
/// (a name with its labels as rendered, e.g. `lossless_link_up{port="va"}`), a space and
/// the value. None when no such line, or its value is not a number.
pub fn metric_value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

/// [`metric_value`], which must be there: panics naming `series` and showing the text.
pub fn metric(text: &str, series: &str) -> f64 {
    metric_value(text, series).unwrap_or_else(|| panic!("{series} missing:\n{text}"))
}

/// What curl made of a request: its exit status (0: an HTTP answer came; 35, 56,
/// 58, 60...: the TLS handshake or the connection failed, see curl(1)), the status
/// code (0 without an answer), the head and body of the answer, and curl's stderr.
#[derive(Debug, Clone)]
pub struct CurlReply {
    pub exit: i32,
    pub status: u16,
    pub head: String,
    pub body: String,
    pub stderr: String,
}

/// curl (a client we did not write) run in `ns` with `args` (the URL among them: TLS
/// options, `-u`, `--cert`...), for one request, whose answer's head and body are
/// returned apart. At most 10 s.
pub fn curl(ns: &Netns, args: &[&str]) -> CurlReply {
    let out = ns
        .command("curl")
        .args(["-sS", "-i", "--max-time", "10"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run curl: {e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .map_or((text.clone(), String::new()), |(h, b)| {
            (h.to_string(), b.to_string())
        });
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    CurlReply {
        exit: out.status.code().unwrap_or(-1),
        status,
        head,
        body,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
