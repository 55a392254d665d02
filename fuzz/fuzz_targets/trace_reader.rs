//! Any bytes, as a trace: the reader, the checker and the report must answer (an error or a
//! result), never panic, whatever the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(trace) = clxfer::trace::read::parse(data) {
        let _ = clxfer::trace::check::check(&trace);
        for report in clxfer::report::from_trace::report(&trace) {
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
