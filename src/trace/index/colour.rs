//! A slice's colour on the timeline, as the page colours it (viewer/model.js's `colorOf`): a
//! transfer by its path, a kernel, a wait, another call; the index keeps one byte per slice, the
//! position of its colour's word in [`WORDS`], which the page maps to its own colours.

/// The colours' words: the paths (docs/RULES.md's words, in the page's order), then the other
/// kinds of slice.
pub const WORDS: [&str; 12] = [
    "pinned",
    "staged",
    "zero-copy",
    "host-copy",
    "device",
    "peer",
    "via-host",
    "none",
    "unknown",
    "kernel",
    "wait",
    "call",
];

pub const UNKNOWN: u8 = 8;
pub const KERNEL: u8 = 9;
pub const WAIT: u8 = 10;
pub const CALL: u8 = 11;

/// Host calls that wait for the device.
const WAITS: [&str; 2] = ["clFinish", "clWaitForEvents"];

/// A host slice's keys that vary per call; any other key makes it its class's first slice, which
/// carries the class's members (docs/TRACE.md, *Compact*).
pub use super::super::compact::PER_CALL;

/// The colour of a path's word, if it is one.
pub fn of_path(path: &[u8]) -> Option<u8> {
    WORDS[..=UNKNOWN as usize]
        .iter()
        .position(|w| w.as_bytes() == path)
        .map(|i| i as u8)
}

/// What a slice's args say of its colour: its path's, else a kernel's; `None` where they say
/// nothing (a compact slice's class may).
pub fn of_args(path: Option<u8>, kernel: bool) -> Option<u8> {
    path.or(kernel.then_some(KERNEL))
}

/// What a slice's name says of its colour: whether it decides whatever the args say (a device's
/// kernel), and the colour where the args say nothing (on a device, the path its last word names:
/// a device slice of a compact trace leaves its path to its host slice, and its name ends with
/// it, `Write H2D staged`; on the host, a wait's or another call's).
pub fn of_name(on_device: bool, name: &str) -> (bool, u8) {
    if on_device {
        if name.starts_with("Kernel ") {
            return (true, KERNEL);
        }
        let last = name.rsplit(' ').next().unwrap_or("");
        return (false, of_path(last.as_bytes()).unwrap_or(UNKNOWN));
    }
    (false, if WAITS.contains(&name) { WAIT } else { CALL })
}

/// A slice's colour: from its args (or its class's, for a compact host slice: `said`), else its
/// name's ([`of_name`]).
pub fn of_slice(on_device: bool, name: &str, said: Option<u8>) -> u8 {
    by_name(of_name(on_device, name), said)
}

/// [`of_slice`], what the name says given.
pub fn by_name((decides, colour): (bool, u8), said: Option<u8>) -> u8 {
    if decides {
        colour
    } else {
        said.unwrap_or(colour)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_as_the_page_gives_them() {
        assert_eq!(
            of_slice(false, "clEnqueueWriteBuffer H2D staged", of_path(b"staged")),
            1
        );
        assert_eq!(
            of_slice(false, "clEnqueueNDRangeKernel", of_args(None, true)),
            KERNEL
        );
        assert_eq!(of_slice(false, "clFinish", None), WAIT);
        assert_eq!(of_slice(false, "clGetEventInfo", None), CALL);
        assert_eq!(of_slice(true, "Kernel scale", None), KERNEL);
        assert_eq!(of_slice(true, "Write H2D zero-copy", None), 2);
        assert_eq!(of_slice(true, "Marker", None), UNKNOWN);
        assert_eq!(of_path(b"kernel"), None);
    }
}
