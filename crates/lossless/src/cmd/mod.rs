//! One module per subcommand; each exposes `Args` (clap) and `run`.

pub mod daemon;
pub mod decode;
pub mod headroom;
pub mod headroom_compare;
pub mod headroom_show;
pub mod lab;
pub mod policy;
pub mod relay;
pub mod table;
