//! The endpoint's web configuration while it serves: read again when its file or a
//! certificate, key or CA it names changes (a rotated certificate is served from the
//! next connection, as exporter-toolkit reads its file on every request), kept when
//! the new reading is refused, and the rate limit's bucket.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::Instant;
use tracing::{error, info};

use crate::web_config::{self, RateLimit, WebConfig, WebConfigError};

/// The configuration served and how it came to be.
#[derive(Clone)]
pub struct Web(Arc<Mutex<Inner>>);

struct Inner {
    current: Arc<WebConfig>,
    bound: SocketAddr,
    /// The last change that was refused, while the one before still serves.
    refused: Option<WebConfigError>,
    /// The files as they looked when last read, refused or not.
    seen: web_config::Fingerprint,
    /// After a refusal: when to read again even if no file the served configuration
    /// names changed (the refused one may name others, such as a certificate still to
    /// be written).
    retry_at: Option<Instant>,
    bucket: Option<Bucket>,
}

/// A token bucket: `burst` tokens, one more every `interval`.
struct Bucket {
    limit: RateLimit,
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn new(limit: RateLimit, now: Instant) -> Bucket {
        Bucket {
            limit,
            tokens: f64::from(limit.burst),
            at: now,
        }
    }

    fn take(&mut self, now: Instant) -> bool {
        let gained = now.saturating_duration_since(self.at).as_secs_f64()
            / self.limit.interval.as_secs_f64().max(1e-9);
        self.tokens = (self.tokens + gained).min(f64::from(self.limit.burst));
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

const REFUSED_HEAD: &str = "# HELP lossless_metrics_web_config_refused Whether the last change of the metrics endpoint's web configuration (or a certificate, key or CA it names) was refused: the one before still serves (the daemon's log says why). 0 without a web configuration.\n\
     # TYPE lossless_metrics_web_config_refused gauge";

/// Whether `config` may serve on `bound`: a non-loopback address needs TLS or users.
pub fn may_serve(config: &WebConfig, bound: SocketAddr) -> Result<(), String> {
    if bound.ip().is_loopback() || config.protects() {
        Ok(())
    } else {
        Err(format!(
            "sets neither tls_server_config nor basic_auth_users, and the metrics address \
             {} is not a loopback address: it would serve metrics unprotected",
            bound.ip()
        ))
    }
}

impl Web {
    pub fn new(config: WebConfig, bound: SocketAddr) -> Web {
        let bucket = config
            .spec
            .rate_limit
            .map(|l| Bucket::new(l, Instant::now()));
        Web(Arc::new(Mutex::new(Inner {
            seen: config.fingerprint.clone(),
            current: Arc::new(config),
            bound,
            refused: None,
            retry_at: None,
            bucket,
        })))
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The configuration for a new connection: read again first when a file changed.
    pub fn current(&self) -> Arc<WebConfig> {
        let mut g = self.lock();
        let now = Instant::now();
        if g.seen.changed() || g.retry_at.is_some_and(|t| now >= t) {
            let path = g.current.path.clone();
            let next = web_config::load(&path).and_then(|c| {
                may_serve(&c, g.bound)
                    .map(|()| c)
                    .map_err(|what| WebConfigError {
                        file: path.clone(),
                        line: None,
                        what,
                    })
            });
            match next {
                Ok(c) => {
                    info!(file = %path.display(), "metrics web configuration read again: {}", c.describe());
                    g.seen = c.fingerprint.clone();
                    if g.current.spec.rate_limit != c.spec.rate_limit {
                        g.bucket = c.spec.rate_limit.map(|l| Bucket::new(l, Instant::now()));
                    }
                    g.current = Arc::new(c);
                    g.refused = None;
                    g.retry_at = None;
                }
                Err(e) => {
                    if g.refused.as_ref() != Some(&e) {
                        error!(
                            "metrics web configuration refused, the previous one still serves: {e}"
                        );
                    }
                    g.seen = g.current.fingerprint.now();
                    g.retry_at = Some(now + RETRY_REFUSED);
                    g.refused = Some(e);
                }
            }
        }
        g.current.clone()
    }

    /// Whether a request may be answered now under `rate_limit`.
    pub fn admit_request(&self) -> bool {
        let mut g = self.lock();
        match &mut g.bucket {
            Some(b) => b.take(Instant::now()),
            None => true,
        }
    }

    /// The endpoint's web configuration series (`web` None: no web configuration,
    /// nothing refused).
    pub fn render(web: Option<&Web>, out: &mut String) {
        let Some(web) = web else {
            let _ = writeln!(out, "{REFUSED_HEAD}\nlossless_metrics_web_config_refused 0");
            return;
        };
        let g = web.lock();
        let _ = writeln!(
            out,
            "{REFUSED_HEAD}\nlossless_metrics_web_config_refused {}",
            u8::from(g.refused.is_some())
        );
        if let Some(t) = g.current.cert_not_after {
            let _ = writeln!(
                out,
                "# HELP lossless_metrics_tls_certificate_not_after_seconds When the metrics endpoint's TLS certificate expires (Unix time).\n\
                 # TYPE lossless_metrics_tls_certificate_not_after_seconds gauge\n\
                 lossless_metrics_tls_certificate_not_after_seconds {t}"
            );
        }
    }
}

/// How often a refused web configuration is read again when nothing the served one
/// names has changed.
pub const RETRY_REFUSED: Duration = Duration::from_secs(10);
