//! The PFC relay of draft-he-rtgwg-wan-pfc-00 ("PFC PAUSE Frame Forwarded
//! Transparently in Wide Area Networks"), sans-IO.
//!
//! ```text
//!  AIDC 1 <- DC1 GW <- PE1 <====== WAN (P1..Pn) ======< PE2 <- DC2 GW <- AIDC 2
//!                 ingress PE: decapsulate,        egress PE: validate,
//!                 validate, rewrite SMAC          encapsulate, mark
//! ```
//!
//! - [`Relay`]: a PE, both directions ([`relay`] has the rules).
//! - [`GatewayCheck`]: a DC gateway's check of forwarded PFC.
//! - [`pfc`]: the legality rules; [`DropReason`]: one counter per rule.
//! - [`storm`]: the per-priority ceiling and the episode definition;
//!   [`pause`]: how long a pause lasts at the far side, and its timeline.
//! - [`tunnel`]: SRv6, VXLAN and SR-MPLS with the headers of
//!   `lossless_wire::tunnel`.
//! - [`config`]: a `[relay]` TOML section ([`error`]: what it refuses);
//!   [`status`]: the core's counters.
//! - [`host`]: what runs a section around the core, the same in the daemon and
//!   the lab (which ports are open, their counters, which frames they hand
//!   over); [`show`]: what it answers to `relay show`.
//! - [`example`]: the draft's two-DC topology as ready configurations.
//! - [`buffer`]: the draft's buffer condition at the gateway, by the headroom
//!   model, and the physically safe bound beside it.
//! - [`delay`]: the WAN delay measured PE to PE inside the tunnel.
//!
//! Time is a parameter ([`Instant`]): nothing here reads a clock or does I/O.

pub mod batch;
pub mod buffer;
pub mod config;
pub mod delay;
pub mod error;
pub mod example;
pub mod gateway;
pub mod host;
pub mod pause;
pub mod pfc;
pub mod reason;
pub mod relay;
pub mod show;
pub mod status;
pub mod storm;
pub mod tunnel;

pub use batch::{Port, Transmit, TxBatch};
pub use config::{
    ConfigError, Datapath, DcSide, GatewayConfig, Marking, Poll, RelayConfig, RelaySection,
    StormConfig, TunnelConfig, WanSide, XdpMode,
};
pub use delay::{Departure, MeasureConfig, WanDelay, WanDelayStatus};
pub use gateway::GatewayCheck;
pub use host::{Handled, Host};
pub use lossless_time::{Duration, Instant};
pub use pause::{PauseClock, PauseTimeline};
pub use pfc::{check_pfc, AllowedSources, PfcFrame};
pub use reason::{DropCounts, DropReason};
pub use relay::{Relay, Verdict};
pub use status::{EgressCounters, GatewayCounters, IngressCounters, RelayStatus, StormStatus};
