//! The DC gateway's side of draft-he-rtgwg-wan-pfc-00: "the source DC gateway
//! needs to parse the forwarded PFC frame and determine that it is a legal PFC frame, that
//! is, besides its correct frame format, its destination MAC address must be
//! the multicast address: 0180-C200-0001 and the source MAC address must be
//! its directly connected ingress PE port MAC address (some vendors also use
//! device system MAC address). Otherwise, the source DC gateway must discard
//! this illegal PFC frame."

use crate::buffer::GatewayBuffer;
use crate::config::{BufferConfig, ConfigError, GatewayConfig};
use crate::pfc::{AllowedSources, PfcFrame};
use crate::status::GatewayCounters;
use crate::DropReason;

/// Checks PFC frames arriving at a DC gateway from its PE, and counts.
#[derive(Debug, Clone)]
pub struct GatewayCheck {
    sources: AllowedSources,
    counters: GatewayCounters,
    buffer: Option<GatewayBuffer>,
}

impl GatewayCheck {
    pub fn new(cfg: &GatewayConfig) -> Result<GatewayCheck, ConfigError> {
        cfg.validate()?;
        Ok(GatewayCheck {
            sources: AllowedSources {
                port_mac: cfg.pe_port_mac,
                system_mac: cfg.pe_system_mac,
            },
            counters: GatewayCounters::default(),
            buffer: cfg
                .buffer
                .as_ref()
                .map(BufferConfig::evaluate)
                .transpose()?,
        })
    }

    /// The frame's PFC content if it is legal and from the PE.
    pub fn check(&mut self, frame: &[u8]) -> Result<PfcFrame, DropReason> {
        self.counters.received += 1;
        match self.sources.check(frame) {
            Ok(pfc) => {
                self.counters.accepted += 1;
                Ok(pfc)
            }
            Err(r) => {
                self.counters.dropped.add(r);
                Err(r)
            }
        }
    }

    pub fn sources(&self) -> &AllowedSources {
        &self.sources
    }

    pub fn counters(&self) -> &GatewayCounters {
        &self.counters
    }

    /// The draft's buffer condition at this gateway, when configured.
    pub fn buffer(&self) -> Option<&GatewayBuffer> {
        self.buffer.as_ref()
    }
}
