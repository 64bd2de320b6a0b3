//! QoS policy engine for InfiniBand and lossless Ethernet fabrics.
//!
//! Reads OpenSM's `qos-policy.conf` (and the OFA QoS RFC's XML form), checks it, compiles
//! SL2VL/VLArb tables, and answers "what service level will this flow get, and why" exactly
//! as OpenSM's SA would. Sans-IO: every function takes text and returns values.

pub mod ast;
pub mod bind;
pub mod check;
pub mod compile;
pub mod ethernet;
pub mod fabric;
pub mod lexer;
pub mod matcher;
pub mod opensm_conf;
pub mod parse;
pub mod partitions;
pub mod resolve;
pub mod route;

pub use ast::Policy;
pub use parse::{parse_policy, parse_policy_all, ParseError};
