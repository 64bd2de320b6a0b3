//! The metrics endpoint: a minimal HTTP/1.x responder for `GET /metrics` on a loopback
//! address, each scrape a message for the core task. At the descriptor limit it takes
//! the control socket's spare descriptor (or has an idle control connection closed), so
//! a scrape still gets through.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

use crate::control::{out_of_descriptors, CoreMsg};
use crate::control_state::Control;

/// Binds the metrics endpoint; only loopback addresses are accepted (the
/// config checks too: metrics carry topology and are not authenticated).
pub async fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    if !addr.ip().is_loopback() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("metrics address {addr} is not a loopback address"),
        ));
    }
    TcpListener::bind(addr).await
}

/// Serves scrapes for ever.
pub(crate) async fn serve(listener: TcpListener, core: mpsc::Sender<CoreMsg>, control: Control) {
    loop {
        control.refill_spare();
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(scrape(stream, core.clone()));
            }
            Err(e) if out_of_descriptors(&e) => {
                if control.take_spare() {
                    if let Ok((stream, _)) = listener.accept().await {
                        // Served here, so the descriptor is free again before the
                        // spare is taken back.
                        scrape(stream, core.clone()).await;
                    }
                } else if !control.make_room() {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                for _ in 0..4 {
                    tokio::task::yield_now().await;
                }
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// One scrape: the request head (5 s at most), then the answer.
async fn scrape(mut stream: TcpStream, core: mpsc::Sender<CoreMsg>) {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    let read = async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        io::Result::Ok(())
    };
    if tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .is_err()
    {
        return;
    }
    let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let first = String::from_utf8_lossy(first);
    let mut parts = first.split_whitespace();
    let (method, path) = (parts.next(), parts.next());
    let (status, body) =
        if method == Some("GET") && matches!(path, Some("/metrics") | Some("/metrics/")) {
            let (tx, rx) = oneshot::channel();
            if core.send(CoreMsg::Metrics { reply: tx }).await.is_err() {
                return;
            }
            match rx.await {
                Ok(text) => ("200 OK", text),
                Err(_) => return,
            }
        } else {
            ("404 Not Found", "only GET /metrics is served\n".to_string())
        };
    let resp = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        let _ = stream.write_all(resp.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
}
