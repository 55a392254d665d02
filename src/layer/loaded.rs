//! How the process will unload clxfer, as its loader said: kept at the bottom of the layer, where
//! the exit paths of the hooks below the loader entry can ask it (the loader layer sets it).

use std::sync::atomic::{AtomicBool, Ordering};

static DEINIT_MANAGED: AtomicBool = AtomicBool::new(false);

/// The loader called `clInitLayerWithProperties`: it will call `clDeinitLayer` (and then unload
/// clxfer) before the process's exit handlers run.
pub fn deinit_will_come() {
    DEINIT_MANAGED.store(true, Ordering::Relaxed);
}

/// Whether the loader will call `clDeinitLayer` (and then unload clxfer).
pub fn deinit_managed() -> bool {
    DEINIT_MANAGED.load(Ordering::Relaxed)
}
