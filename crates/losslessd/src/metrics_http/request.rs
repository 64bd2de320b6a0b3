//! What the metrics endpoint reads of a request head and how it answers: no HTTP
//! library, as the endpoint serves one path and the head is bounded.

use std::net::{IpAddr, SocketAddr};

/// An answer: the status line, the web configuration's headers and `extra` (each
/// `Name: value`), the body.
pub fn response(status: &str, headers: &[(String, String)], extra: &[&str], body: &str) -> String {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    for line in extra {
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    out.push_str(body);
    out
}

/// What the endpoint reads of a request head.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Head {
    pub method: Option<String>,
    pub path: Option<String>,
    pub host: Option<String>,
    pub authorization: Option<String>,
}

impl Head {
    pub fn parse(head: &[u8]) -> Head {
        let first = lines(head).next().unwrap_or_default();
        let first = String::from_utf8_lossy(first);
        let mut parts = first.split_whitespace();
        Head {
            method: parts.next().map(str::to_string),
            path: parts.next().map(str::to_string),
            host: header(head, "host"),
            authorization: header(head, "authorization"),
        }
    }

    /// `GET /metrics` (or `/metrics/`).
    pub fn is_scrape(&self) -> bool {
        self.method.as_deref() == Some("GET")
            && matches!(self.path.as_deref(), Some("/metrics") | Some("/metrics/"))
    }
}

/// Whether the request head in `buf` is complete: an empty line, after CRLF or a bare
/// LF.
pub fn head_complete(buf: &[u8]) -> bool {
    buf.windows(2).any(|w| w == b"\n\n") || buf.windows(3).any(|w| w == b"\n\r\n")
}

/// The request head's lines, without their CR.
fn lines(head: &[u8]) -> impl Iterator<Item = &[u8]> {
    head.split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
}

/// The first value of header `name` (case-insensitive), if the head has one.
fn header(head: &[u8], name: &str) -> Option<String> {
    lines(head)
        .skip(1)
        .take_while(|l| !l.is_empty())
        .find_map(|l| {
            let l = String::from_utf8_lossy(l);
            let (n, value) = l.split_once(':')?;
            n.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
}

/// Whether a request with this Host header may be answered: none (HTTP/1.0), or one
/// naming the bound address or `localhost`, with any port. A page that rebinds its
/// own name to 127.0.0.1 reaches the endpoint with its name in Host: refused.
pub fn host_allowed(host: Option<&str>, bound: SocketAddr) -> bool {
    let Some(host) = host else {
        return true;
    };
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((v6, port)) if port.is_empty() || port.starts_with(':') => v6,
            _ => return false,
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, _port)) => name,
            None => host,
        }
    };
    let name = name.strip_suffix('.').unwrap_or(name);
    if name.eq_ignore_ascii_case("localhost") {
        return true;
    }
    name.parse::<IpAddr>().is_ok_and(|ip| ip == bound.ip())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> SocketAddr {
        s.parse()
            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    #[test]
    fn a_head_ends_at_an_empty_line_after_crlf_or_a_bare_lf() {
        assert!(head_complete(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert!(head_complete(b"GET /metrics HTTP/1.1\nHost: x\n\n"));
        assert!(head_complete(b"GET /metrics HTTP/1.0\n\n"));
        assert!(!head_complete(b"GET /metrics HTTP/1.1\r\nHost: x\r\n"));
        let head = Head::parse(
            b"GET /metrics HTTP/1.1\nhOsT:  localhost:9717 \nAuthorization: Basic YTpi\n\n",
        );
        assert_eq!(head.host.as_deref(), Some("localhost:9717"));
        assert_eq!(head.authorization.as_deref(), Some("Basic YTpi"));
        assert!(head.is_scrape());
        assert!(!Head::parse(b"POST /metrics HTTP/1.1\n\n").is_scrape());
    }

    #[test]
    fn only_the_bound_address_and_localhost_are_hosts_of_the_endpoint() {
        let v4 = at("127.0.0.1:9717");
        let v6 = at("[::1]:9717");
        for ok in [
            "127.0.0.1:9717",
            "127.0.0.1",
            "localhost",
            "LOCALHOST:80",
            "localhost.",
        ] {
            assert!(host_allowed(Some(ok), v4), "{ok}");
        }
        assert!(host_allowed(None, v4));
        for bad in [
            "evil.example:9717",
            "127.0.0.2:9717",
            "[::1]:9717",
            "localhost.evil.example",
            "",
        ] {
            assert!(!host_allowed(Some(bad), v4), "{bad}");
        }
        assert!(host_allowed(Some("[::1]:9717"), v6));
        assert!(host_allowed(Some("[::1]"), v6));
        assert!(!host_allowed(Some("[::1"), v6));
        assert!(!host_allowed(Some("127.0.0.1:9717"), v6));
    }
}
