//! `clxfer doctor`'s look at the OpenCL installation: which loader, which platforms and devices.
//! Opens the loader privately with libloading and calls it directly (this runs in the CLI, not in a
//! traced program).

use crate::model::device::{DeviceKind, DeviceProfile};
use crate::model::rules;
use opencl_sys::*;
use std::ffi::c_void;

#[derive(Debug, Clone)]
pub struct Device {
    pub name: String,
    pub kind: String,
    pub version: String,
    pub global_mem: u64,
    /// The rule set `CLXFER_RULES=auto` picks for it.
    pub rules: &'static str,
}

#[derive(Debug, Clone)]
pub struct Platform {
    pub name: String,
    pub vendor: String,
    pub version: String,
    pub devices: Vec<Device>,
}

#[derive(Debug, Clone)]
pub struct Installation {
    /// The loader's file, symlinks resolved.
    pub library: String,
    /// Loader name and version from `clGetICDLoaderInfoOCLICD`, where the loader answers it.
    pub loader: Option<String>,
    pub platforms: Vec<Platform>,
    /// `clGetPlatformIDs`'s error, when it failed.
    pub error: Option<cl_int>,
}

type PlatformIds = unsafe extern "C" fn(cl_uint, *mut cl_platform_id, *mut cl_uint) -> cl_int;
type Info = unsafe extern "C" fn(*mut c_void, cl_uint, usize, *mut c_void, *mut usize) -> cl_int;
type DeviceIds = unsafe extern "C" fn(
    cl_platform_id,
    cl_device_type,
    cl_uint,
    *mut cl_device_id,
    *mut cl_uint,
) -> cl_int;
type ExtAddr = unsafe extern "C" fn(*const std::ffi::c_char) -> *mut c_void;
type LoaderInfo = unsafe extern "C" fn(cl_uint, usize, *mut c_void, *mut usize) -> cl_int;

const CL_ICDL_VERSION: cl_uint = 2;
const CL_ICDL_NAME: cl_uint = 3;

/// Opens `lib` and lists what it offers.
pub fn inspect(lib: &str) -> Result<Installation, String> {
    // SAFETY: opening the ICD loader runs only its constructors; the symbols used below have the
    // signatures of the OpenCL specification.
    unsafe {
        let loader =
            libloading::Library::new(lib).map_err(|e| format!("cannot open {lib}: {e}"))?;
        let get = |name: &[u8]| {
            loader
                .get::<*mut c_void>(name)
                .map(|s| *s)
                .ok()
                .filter(|p| !p.is_null())
        };
        let ids: PlatformIds = std::mem::transmute(
            get(b"clGetPlatformIDs\0").ok_or(format!("{lib} has no clGetPlatformIDs"))?,
        );
        let platform_info: Info =
            std::mem::transmute(get(b"clGetPlatformInfo\0").ok_or("no clGetPlatformInfo")?);
        let device_ids: DeviceIds =
            std::mem::transmute(get(b"clGetDeviceIDs\0").ok_or("no clGetDeviceIDs")?);
        let device_info: Info =
            std::mem::transmute(get(b"clGetDeviceInfo\0").ok_or("no clGetDeviceInfo")?);
        let library = super::preload::library_of(Some(ids as *const c_void));

        let loader_name = get(b"clGetExtensionFunctionAddress\0").and_then(|f| {
            let ext: ExtAddr = std::mem::transmute(f);
            let f = ext(c"clGetICDLoaderInfoOCLICD".as_ptr());
            (!f.is_null()).then(|| {
                let info: LoaderInfo = std::mem::transmute(f);
                let text = |param| string(|size, value, ret| info(param, size, value, ret));
                format!("{} {}", text(CL_ICDL_NAME), text(CL_ICDL_VERSION))
            })
        });

        let mut count: cl_uint = 0;
        let err = ids(0, std::ptr::null_mut(), &mut count);
        let mut platforms = Vec::new();
        if err == CL_SUCCESS && count > 0 {
            let mut handles = vec![std::ptr::null_mut(); count as usize];
            ids(count, handles.as_mut_ptr(), std::ptr::null_mut());
            for p in handles {
                let text =
                    |param| string(|size, value, ret| platform_info(p, param, size, value, ret));
                let text_of_platform = text(CL_PLATFORM_NAME);
                let mut n: cl_uint = 0;
                device_ids(p, CL_DEVICE_TYPE_ALL, 0, std::ptr::null_mut(), &mut n);
                let mut devs = vec![std::ptr::null_mut(); n as usize];
                if n > 0 {
                    device_ids(
                        p,
                        CL_DEVICE_TYPE_ALL,
                        n,
                        devs.as_mut_ptr(),
                        std::ptr::null_mut(),
                    );
                }
                let devices = devs
                    .into_iter()
                    .map(|d| {
                        let text = |param| {
                            string(|size, value, ret| device_info(d, param, size, value, ret))
                        };
                        let num = |param| {
                            let mut v: u64 = 0;
                            device_info(
                                d,
                                param,
                                8,
                                (&mut v as *mut u64).cast(),
                                std::ptr::null_mut(),
                            );
                            v
                        };
                        let profile = DeviceProfile {
                            vendor: text(CL_DEVICE_VENDOR),
                            vendor_id: num(CL_DEVICE_VENDOR_ID) as u32,
                            kind: DeviceKind::from_type(num(CL_DEVICE_TYPE)),
                            host_unified: num(CL_DEVICE_HOST_UNIFIED_MEMORY) != 0,
                            platform: text_of_platform.clone(),
                            ..DeviceProfile::unknown(0)
                        };
                        Device {
                            name: text(CL_DEVICE_NAME),
                            kind: device_type(num(CL_DEVICE_TYPE)),
                            version: text(CL_DEVICE_VERSION),
                            global_mem: num(CL_DEVICE_GLOBAL_MEM_SIZE),
                            rules: rules::for_device(&profile).name,
                        }
                    })
                    .collect();
                platforms.push(Platform {
                    name: text(CL_PLATFORM_NAME),
                    vendor: text(CL_PLATFORM_VENDOR),
                    version: text(CL_PLATFORM_VERSION),
                    devices,
                });
            }
        }
        // Keep the loader open: its ICDs may have registered exit handlers.
        std::mem::forget(loader);
        Ok(Installation {
            library,
            loader: loader_name,
            platforms,
            error: (err != CL_SUCCESS).then_some(err),
        })
    }
}

/// Reads a string-valued info query.
fn string(query: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> String {
    let mut size = 0usize;
    if query(0, std::ptr::null_mut(), &mut size) != CL_SUCCESS || size == 0 {
        return String::new();
    }
    let mut buf = vec![0u8; size];
    if query(size, buf.as_mut_ptr().cast(), std::ptr::null_mut()) != CL_SUCCESS {
        return String::new();
    }
    String::from_utf8_lossy(&buf)
        .trim_end_matches('\0')
        .trim()
        .to_string()
}

fn device_type(bits: u64) -> String {
    let names = [
        (CL_DEVICE_TYPE_CPU, "CPU"),
        (CL_DEVICE_TYPE_GPU, "GPU"),
        (CL_DEVICE_TYPE_ACCELERATOR, "accelerator"),
        (CL_DEVICE_TYPE_CUSTOM, "custom"),
    ];
    let found: Vec<&str> = names
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect();
    if found.is_empty() {
        format!("type {bits:#x}")
    } else {
        found.join("+")
    }
}

/// Whether the loader `lib` loads `layer` when `OPENCL_LAYERS` names it: opens the loader, makes
/// it find its platforms (when loaders read the variable and load their layers) and asks the
/// dynamic linker whether `layer` is now in the process. Run in a process of its own whose
/// environment sets `OPENCL_LAYERS` (and `CLXFER_MODE=off`), and nothing else of clxfer's.
pub fn loads_layer(lib: &str, layer: &std::path::Path) -> Result<bool, String> {
    use std::os::unix::ffi::OsStrExt;
    let layer = std::ffi::CString::new(layer.as_os_str().as_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: as in `inspect`: the loader's constructors and its clGetPlatformIDs; dlopen with
    // RTLD_NOLOAD only looks.
    unsafe {
        let loader =
            libloading::Library::new(lib).map_err(|e| format!("cannot open {lib}: {e}"))?;
        let ids = loader
            .get::<PlatformIds>(b"clGetPlatformIDs\0")
            .map_err(|_| format!("{lib} has no clGetPlatformIDs"))?;
        let mut count: cl_uint = 0;
        ids(0, std::ptr::null_mut(), &mut count);
        let handle = libc::dlopen(layer.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
        std::mem::forget(loader);
        Ok(!handle.is_null())
    }
}
