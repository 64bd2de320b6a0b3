//! Prints a lab scenario's report: `cargo run -p lossless-lab --example scenario -- NAME`.
fn main() {
    let name = std::env::args()
        .nth(1)
        .unwrap_or_else(|| lossless_lab::scenario::DEFAULT.into());
    match lossless_lab::scenario::run(&name, 1) {
        Ok(r) => print!("{}", r.render_text()),
        Err(e) => eprintln!("{e}"),
    }
}
