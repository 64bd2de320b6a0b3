//! A control-socket request line: any bytes in, a request or an error out,
//! no panic; an accepted request serialises back to a line that parses to
//! the same request.
#![no_main]
use libfuzzer_sys::fuzz_target;
use lossless_node::protocol::Request;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(req) = serde_json::from_str::<Request>(line) {
        let again = serde_json::to_string(&req).expect("a request serialises");
        let back: Request = serde_json::from_str(&again).expect("its own line parses");
        assert_eq!(back, req);
    }
});
