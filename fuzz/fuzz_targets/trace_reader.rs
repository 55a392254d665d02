//! Any bytes, as a trace: the reader, the checker and the report must answer (an error or a
//! result), never panic, whatever the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = clxfer::trace::check::check(data);
    let mut events = Vec::new();
    if clxfer::trace::read::parse_with(data, |_, e| events.extend(e)).is_ok() {
        for report in clxfer::report::from_trace::report(events) {
            for format in [
                clxfer::report::Format::Text,
                clxfer::report::Format::Json,
                clxfer::report::Format::Markdown,
            ] {
                let _ = report.render(format);
            }
        }
    }
});
