//! What the registry's objects take: pinned host memory, and each device's memory (all of it,
//! and what ALLOC_HOST_PTR buffers take there).

use opencl_sys::CL_MEM_ALLOC_HOST_PTR;

use super::*;

impl Registry {
    pub(super) fn occupy(&mut self, device: usize, size: u64, flags: u64, add: bool) {
        let d = self.devices.entry(device).or_default();
        let ahp = flags & CL_MEM_ALLOC_HOST_PTR != 0;
        for usage in [Some(&mut d.all), ahp.then_some(&mut d.alloc_host_ptr)]
            .into_iter()
            .flatten()
        {
            if add {
                usage.add(size)
            } else {
                usage.sub(size)
            }
        }
        if ahp {
            match add {
                true => d.alloc_host_ptr_buffers.add(1),
                false => d.alloc_host_ptr_buffers.sub(1),
            }
        }
    }

    /// An SVM or USM allocation taking (`add`) or giving back device memory; `host`: the host
    /// uses it too (counted apart, as ALLOC_HOST_PTR buffers are).
    pub(super) fn occupy_allocation(&mut self, device: usize, size: u64, host: bool, add: bool) {
        self.occupy(device, size, 0, add);
        if !host {
            return;
        }
        let svm = &mut self.devices.entry(device).or_default().svm;
        match add {
            true => svm.add(size),
            false => svm.sub(size),
        }
    }

    /// Pinned or registered host bytes (mappings of USE_HOST_PTR buffers and USM device memory
    /// excluded: they are counted once, or are not host memory).
    pub fn pinned_bytes(&self) -> Usage {
        self.pinned
    }

    /// Bytes of device storage per device, by the vendor rules the caller applied.
    pub fn device_bytes(&self, device: usize) -> Usage {
        self.devices.get(&device).map(|d| d.all).unwrap_or_default()
    }

    /// The part of [`Registry::device_bytes`] that ALLOC_HOST_PTR buffers occupy.
    pub fn alloc_host_ptr_device_bytes(&self, device: usize) -> Usage {
        self.devices
            .get(&device)
            .map(|d| d.alloc_host_ptr)
            .unwrap_or_default()
    }

    /// The part of [`Registry::device_bytes`] that SVM and USM allocations occupy.
    pub fn svm_device_bytes(&self, device: usize) -> Usage {
        self.devices.get(&device).map(|d| d.svm).unwrap_or_default()
    }

    /// A staged transfer on `device` from `len` bytes of pageable host memory at `ptr`.
    pub fn staged_from(&mut self, device: usize, ptr: u64, len: u64) {
        self.staged.entry(device).or_default().add(ptr, len);
    }

    /// The host bytes `device`'s staged transfers from pageable memory reached (each once).
    pub fn staged_region(&self, device: usize) -> u64 {
        self.staged.get(&device).map_or(0, |s| s.bytes())
    }

    /// How many ALLOC_HOST_PTR buffers took device memory at once (`peak`) on `device`.
    pub fn alloc_host_ptr_buffers(&self, device: usize) -> Usage {
        self.devices
            .get(&device)
            .map(|d| d.alloc_host_ptr_buffers)
            .unwrap_or_default()
    }
}
