//! One module per subcommand; each exposes `Args` (clap) and `run`.

pub mod daemon;
pub mod dcbx;
pub mod dcbx_show;
pub mod decode;
pub mod doctor;
pub mod dscp;
pub mod generate;
pub mod headroom;
pub mod headroom_compare;
pub mod headroom_show;
pub mod lab;
pub mod pfc;
pub mod policy;
pub mod profile;
pub mod relay;
pub mod roce;
pub mod table;
