//! Device profiles: what clxfer knows about each device, read from the driver once per device.

/// The kind of device, from `CL_DEVICE_TYPE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    Cpu,
    Gpu,
    Accelerator,
    Other,
}

impl DeviceKind {
    pub fn from_type(device_type: u64) -> DeviceKind {
        use opencl_sys::*;
        if device_type & CL_DEVICE_TYPE_GPU != 0 {
            DeviceKind::Gpu
        } else if device_type & CL_DEVICE_TYPE_CPU != 0 {
            DeviceKind::Cpu
        } else if device_type & CL_DEVICE_TYPE_ACCELERATOR != 0 {
            DeviceKind::Accelerator
        } else {
            DeviceKind::Other
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "CPU",
            DeviceKind::Gpu => "GPU",
            DeviceKind::Accelerator => "accelerator",
            DeviceKind::Other => "other",
        }
    }
}

/// One device as the driver describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceProfile {
    /// `#1`, `#2`, … in the order clxfer first saw the devices.
    pub index: u32,
    pub name: String,
    pub vendor: String,
    /// PCI vendor id (`CL_DEVICE_VENDOR_ID`): 0x10de NVIDIA, 0x1002 AMD, 0x8086 Intel.
    pub vendor_id: u32,
    pub platform: String,
    pub kind: DeviceKind,
    /// `CL_DEVICE_HOST_UNIFIED_MEMORY`: device memory is host memory (CPUs, integrated GPUs).
    pub host_unified: bool,
    pub global_mem: u64,
    /// OpenCL version from `CL_DEVICE_VERSION` ("OpenCL 3.0 …" → (3, 0)).
    pub version: (u32, u32),
    /// `CL_DEVICE_MEM_BASE_ADDR_ALIGN`, in bytes.
    pub base_addr_align: u64,
    /// Whether `clGetDeviceAndHostTimer` answered for this device.
    pub host_timer: bool,
    /// A host-memory import extension the device reports ([`HOST_IMPORTS`]; "": none): a way to
    /// pin the program's own memory that the staging advice offers first.
    pub host_import: &'static str,
}

/// Extensions that let a device use the program's own pages in place, with their specifications.
pub const HOST_IMPORTS: [(&str, &str); 2] = [
    (
        "cl_arm_import_memory",
        "clImportMemoryARM: https://registry.khronos.org/OpenCL/extensions/arm/cl_arm_import_memory.txt",
    ),
    (
        "cl_qcom_ext_host_ptr",
        "clCreateBuffer with CL_MEM_EXT_HOST_PTR_QCOM: https://registry.khronos.org/OpenCL/extensions/qcom/cl_qcom_ext_host_ptr.txt",
    ),
];

/// The first of [`HOST_IMPORTS`] in a device's extension string.
pub fn host_import(extensions: &str) -> &'static str {
    let names: Vec<&str> = extensions.split_whitespace().collect();
    (HOST_IMPORTS.iter())
        .find(|(name, _)| names.contains(name))
        .map_or("", |(name, _)| name)
}

impl DeviceProfile {
    /// A profile for tests and for devices the driver would not describe.
    pub fn unknown(index: u32) -> DeviceProfile {
        DeviceProfile {
            index,
            name: "unknown device".into(),
            vendor: String::new(),
            vendor_id: 0,
            platform: String::new(),
            kind: DeviceKind::Other,
            host_unified: false,
            global_mem: 0,
            version: (0, 0),
            base_addr_align: 0,
            host_timer: false,
            host_import: "",
        }
    }

    /// `device #2 (NVIDIA H200)`.
    pub fn label(&self) -> String {
        format!("device #{} ({})", self.index, self.name)
    }
}

/// "OpenCL 3.0 CUDA 12.4" → (3, 0).
pub fn parse_version(text: &str) -> (u32, u32) {
    let number = text.split_whitespace().nth(1).unwrap_or("");
    let mut parts = number.split('.').map(|p| {
        p.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap_or(0)
    });
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_kinds() {
        assert_eq!(parse_version("OpenCL 3.0 CUDA 12.4.131"), (3, 0));
        assert_eq!(parse_version("OpenCL 1.2 pocl"), (1, 2));
        assert_eq!(parse_version("garbage"), (0, 0));
        assert_eq!(parse_version(""), (0, 0));
        use opencl_sys::*;
        assert_eq!(DeviceKind::from_type(CL_DEVICE_TYPE_GPU), DeviceKind::Gpu);
        let cpu = CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_DEFAULT;
        assert_eq!(DeviceKind::from_type(cpu), DeviceKind::Cpu);
        assert_eq!(DeviceKind::from_type(0), DeviceKind::Other);
    }
}

/// The fastest any device moves bytes, GB/s: no memory does 10 TB/s today (an H200's HBM3e
/// moves 4.8, a B200's 8); a device time that implies more was not measured (issue #56: Rusticl
/// on llvmpipe reports 1 ns for every command, PoCL's migrations between its devices ~320 TB/s).
pub const MAX_GBPS: f64 = 10_000.0;

/// Why a device time cannot be a measurement, if it cannot: a command that took `ns` and moved
/// `bytes` (0 for a kernel).
pub fn implausible(bytes: u64, ns: u64) -> Option<Implausible> {
    if ns <= 1 {
        return Some(Implausible::Resolution);
    }
    let gbps = bytes as f64 / ns as f64;
    (gbps > MAX_GBPS).then_some(Implausible::Bandwidth(gbps))
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Implausible {
    /// A nanosecond or less: below any driver's timer (a command is not launched that fast).
    Resolution,
    /// Faster than [`MAX_GBPS`], GB/s.
    Bandwidth(f64),
}
