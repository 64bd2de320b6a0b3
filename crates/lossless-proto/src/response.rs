//! The response line: `{"ok":true,"result":...}` or `{"ok":false,"error":{...}}`.

use serde::{Deserialize, Serialize};

/// Protocol version, in every response.
pub const PROTOCOL_VERSION: u32 = 1;

/// Where the daemon listens unless told otherwise.
pub const DEFAULT_SOCKET: &str = "/run/lossless/losslessd.sock";

/// A response line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub protocol: u32,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub kind: ErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request line is not valid JSON or not a known request.
    BadRequest,
    /// No such port is managed by the daemon.
    NoSuchPort,
    /// The requested configuration is invalid; nothing changed.
    InvalidConfig,
    /// The new configuration could not be persisted; nothing changed.
    Persist,
    /// The daemon is shutting down or otherwise cannot serve the request.
    Unavailable,
    /// The configuration has no such section (e.g. no `[relay]`).
    NotConfigured,
}

impl Response {
    pub fn ok(result: serde_json::Value) -> Self {
        Response {
            protocol: PROTOCOL_VERSION,
            ok: true,
            result: Some(result),
            error: None,
        }
    }

    pub fn err(kind: ErrorKind, message: impl Into<String>) -> Self {
        Response {
            protocol: PROTOCOL_VERSION,
            ok: false,
            result: None,
            error: Some(ErrorBody {
                kind,
                message: message.into(),
            }),
        }
    }
}
