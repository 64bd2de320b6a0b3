//! A blocking client of losslessd's control socket: one JSON request per line, one
//! response line back. The protocol and every view it carries are `lossless-proto`'s
//! types, and that is all this crate depends on (not the node core): [`Client::call_as`]
//! reads a result into its view, and a method per request does it for the views
//! `lossless-proto` holds ([`Client::status`], [`Client::dcbx_show`], ...);
//! [`Client::call`] keeps the result as JSON (what `--json` prints). Used by the
//! `lossless` CLI and the tests.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use lossless_proto::headroom::HeadroomShow;
use lossless_proto::pfc::PortPfcView;
use lossless_proto::{
    Changed, CountersResult, DcbxView, ErrorBody, EventsResult, FeatureChange, FeatureName,
    PortNeighbors, Ports, ReloadResult, Request, Response, RoceView, StatusResult,
};
use serde::de::DeserializeOwned;

/// A blocking client.
pub struct Client {
    stream: BufReader<UnixStream>,
}

/// What went wrong talking to the daemon.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot connect to {path}: {source} (is losslessd running? --socket sets the path)")]
    Connect {
        path: String,
        source: std::io::Error,
    },
    #[error("control socket: {0}")]
    Io(#[from] std::io::Error),
    #[error("daemon sent a line that is not a response: {0}")]
    Decode(#[from] serde_json::Error),
    #[error("daemon closed the connection without answering")]
    Closed,
    #[error("{}: {}", serde_json::to_value(.0.kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default(), .0.message)]
    Daemon(ErrorBody),
}

impl Client {
    pub fn connect(path: &Path) -> Result<Client, ClientError> {
        let stream = UnixStream::connect(path).map_err(|source| ClientError::Connect {
            path: path.display().to_string(),
            source,
        })?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(Client {
            stream: BufReader::new(stream),
        })
    }

    /// Sends one request and returns its result.
    pub fn call(&mut self, req: &Request) -> Result<serde_json::Value, ClientError> {
        let mut line = serde_json::to_string(req)?;
        line.push('\n');
        self.stream.get_mut().write_all(line.as_bytes())?;
        let resp: Response = serde_json::from_str(&self.read_line()?)?;
        match (resp.ok, resp.result, resp.error) {
            (true, Some(r), _) => Ok(r),
            (_, _, Some(e)) => Err(ClientError::Daemon(e)),
            _ => Err(ClientError::Closed),
        }
    }

    /// Sends one request and reads its result into `T`, the view the request answers
    /// with (a result that does not read as `T` is [`ClientError::Decode`]).
    pub fn call_as<T: DeserializeOwned>(&mut self, req: &Request) -> Result<T, ClientError> {
        Ok(serde_json::from_value(self.call(req)?)?)
    }

    /// `status`: the daemon, its health and a line per port.
    pub fn status(&mut self) -> Result<StatusResult, ClientError> {
        self.call_as(&Request::Status)
    }

    /// `neighbors`: one port's LLDP neighbours, or every port's.
    pub fn neighbors(&mut self, port: Option<&str>) -> Result<Ports<PortNeighbors>, ClientError> {
        self.call_as(&Request::Neighbors {
            port: port.map(str::to_owned),
        })
    }

    /// `dcbx show`: one port's DCBX, or every port's.
    pub fn dcbx_show(&mut self, port: Option<&str>) -> Result<Ports<DcbxView>, ClientError> {
        self.call_as(&Request::DcbxShow {
            port: port.map(str::to_owned),
        })
    }

    /// `dcbx set`: the port's `dcbx show` after the change.
    pub fn dcbx_set(
        &mut self,
        port: &str,
        change: FeatureChange,
    ) -> Result<Changed<DcbxView>, ClientError> {
        self.call_as(&Request::DcbxSet {
            port: port.to_owned(),
            change,
        })
    }

    /// `dcbx reset`: one feature's runtime change dropped, or every one.
    pub fn dcbx_reset(
        &mut self,
        port: &str,
        feature: Option<FeatureName>,
    ) -> Result<Changed<DcbxView>, ClientError> {
        self.call_as(&Request::DcbxReset {
            port: port.to_owned(),
            feature,
        })
    }

    /// `roce reset`: the port's RoCE host settings after the file's run again.
    pub fn roce_reset(&mut self, port: &str) -> Result<Changed<RoceView>, ClientError> {
        self.call_as(&Request::RoceReset {
            port: port.to_owned(),
        })
    }

    /// `counters`: one port's, or every port's, and the shared sockets'.
    pub fn counters(&mut self, port: Option<&str>) -> Result<CountersResult, ClientError> {
        self.call_as(&Request::Counters {
            port: port.map(str::to_owned),
        })
    }

    /// `reload`: what the configuration file changed.
    pub fn reload(&mut self) -> Result<ReloadResult, ClientError> {
        self.call_as(&Request::Reload)
    }

    /// `headroom show`: one port's, or every port's, adaptive headroom.
    pub fn headroom_show(
        &mut self,
        port: Option<&str>,
    ) -> Result<Ports<HeadroomShow>, ClientError> {
        self.call_as(&Request::HeadroomShow {
            port: port.map(str::to_owned),
        })
    }

    /// `pfc show`: one port's, or every port's, PFC per priority and storm watchdog.
    pub fn pfc_show(&mut self, port: Option<&str>) -> Result<Ports<PortPfcView>, ClientError> {
        self.call_as(&Request::PfcShow {
            port: port.map(str::to_owned),
        })
    }

    /// `events`: the events the daemon kept, oldest first; with `follow` the connection
    /// stays open and [`Client::next_event`] reads the ones that follow.
    pub fn events(&mut self, follow: bool) -> Result<EventsResult, ClientError> {
        self.call_as(&Request::Events { follow })
    }

    /// The next streamed event (after `events --follow`); None at end of stream.
    pub fn next_event(&mut self) -> Result<Option<serde_json::Value>, ClientError> {
        self.stream.get_mut().set_read_timeout(None)?;
        match self.read_line() {
            Ok(l) => Ok(Some(serde_json::from_str(&l)?)),
            Err(ClientError::Closed) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn read_line(&mut self) -> Result<String, ClientError> {
        let mut line = String::new();
        if self.stream.read_line(&mut line)? == 0 {
            return Err(ClientError::Closed);
        }
        Ok(line)
    }
}
