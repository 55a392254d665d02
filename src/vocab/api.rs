//! The ONE list of OpenCL entry points clxfer intercepts: name, signature and (for core functions)
//! the dispatch slot, which is the field of the same name in `cl_icd_dispatch`. [`entry_points`]
//! hands the list to a macro: here to the one that makes [`Api`] (names only: the signatures and
//! hooks are not resolved here), in `layer/api.rs` to the one that makes the LD_PRELOAD exports,
//! the loader-layer table and the extension wrappers, where the compiler checks every signature
//! against opencl-sys's dispatch table and `_t` types, and in `layer/args.rs` to the one that
//! makes each entry point's arguments a struct whose fields are the parameters named here.
//!
//! `core`: every function the ICD loader exports (OpenCL 3.0 core, with the deprecated 1.x entry
//! points and the GL/EGL sharing functions that have dispatch slots). D3D/DX9 slots (Windows) and
//! slots newer than this list are copied from the next table untouched.
//! `extension`: functions reached only through `clGetExtensionFunctionAddress(ForPlatform)`, for
//! which clxfer hands back its own wrapper (USM, ARM SVM, host import).
//!
//! `[errcode_ret]` names the error out-parameter, set when no OpenCL implementation exists at all;
//! `=> Hook` names the type whose `before`/`after` see the call (default: count it, change nothing).

/// Hands the list to `$then!`, expanded where this is invoked (so the hooks and types resolve
/// there).
macro_rules! entry_points {
    ($then:ident) => {
        $then! {
core {

    fn clGetPlatformIDs(num_entries: cl_uint, platforms: *mut cl_platform_id, num_platforms: *mut cl_uint) -> cl_int;
    fn clGetPlatformInfo(platform: cl_platform_id, param_name: cl_platform_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clGetDeviceIDs(platform: cl_platform_id, device_type: cl_device_type, num_entries: cl_uint, devices: *mut cl_device_id, num_devices: *mut cl_uint) -> cl_int;
    fn clGetDeviceInfo(device: cl_device_id, param_name: cl_device_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clCreateContext(properties: *const cl_context_properties, num_devices: cl_uint, devices: *const cl_device_id, pfn_notify: Option<unsafe extern "C" fn(errinfo: *const c_char, private_info: *const c_void, cb: usize, user_data: *mut c_void)>, user_data: *mut c_void, errcode_ret: *mut cl_int) -> cl_context [errcode_ret] => intercept::ContextCreated;
    fn clCreateContextFromType(properties: *const cl_context_properties, device_type: cl_device_type, pfn_notify: Option<unsafe extern "C" fn(errinfo: *const c_char, private_info: *const c_void, cb: usize, user_data: *mut c_void)>, user_data: *mut c_void, errcode_ret: *mut cl_int) -> cl_context [errcode_ret] => intercept::ContextCreated;
    fn clRetainContext(context: cl_context) -> cl_int;
    fn clReleaseContext(context: cl_context) -> cl_int => intercept::Released;
    fn clGetContextInfo(context: cl_context, param_name: cl_context_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int => intercept::ContextQueried;
    fn clCreateCommandQueue(context: cl_context, device: cl_device_id, properties: cl_command_queue_properties, errcode_ret: *mut cl_int) -> cl_command_queue [errcode_ret] => intercept::QueueCreated;
    fn clRetainCommandQueue(command_queue: cl_command_queue) -> cl_int;
    fn clReleaseCommandQueue(command_queue: cl_command_queue) -> cl_int => intercept::Released;
    fn clGetCommandQueueInfo(command_queue: cl_command_queue, param_name: cl_command_queue_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int => intercept::QueueQueried;
    fn clSetCommandQueueProperty(command_queue: cl_command_queue, properties: cl_command_queue_properties, enable: cl_bool, old_properties: *mut cl_command_queue_properties) -> cl_int => intercept::QueuePropertySet;
    fn clCreateBuffer(context: cl_context, flags: cl_mem_flags, size: usize, host_ptr: *mut c_void, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::CopyHostPtr;
    fn clCreateImage2D(context: cl_context, flags: cl_mem_flags, image_format: *const cl_image_format, image_width: usize, image_height: usize, image_row_pitch: usize, host_ptr: *mut c_void, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::CopyHostPtr;
    fn clCreateImage3D(context: cl_context, flags: cl_mem_flags, image_format: *const cl_image_format, image_width: usize, image_height: usize, image_depth: usize, image_row_pitch: usize, image_slice_pitch: usize, host_ptr: *mut c_void, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::CopyHostPtr;
    fn clRetainMemObject(memobj: cl_mem) -> cl_int;
    fn clReleaseMemObject(memobj: cl_mem) -> cl_int;
    fn clGetSupportedImageFormats(context: cl_context, flags: cl_mem_flags, image_type: cl_mem_object_type, num_entries: cl_uint, image_formats: *mut cl_image_format, num_image_formats: *mut cl_uint) -> cl_int;
    fn clGetMemObjectInfo(memobj: cl_mem, param_name: cl_mem_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int => intercept::MemQueried;
    fn clGetImageInfo(image: cl_mem, param_name: cl_image_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clCreateSampler(context: cl_context, normalized_coords: cl_bool, addressing_mode: cl_addressing_mode, filter_mode: cl_filter_mode, errcode_ret: *mut cl_int) -> cl_sampler [errcode_ret];
    fn clRetainSampler(sampler: cl_sampler) -> cl_int;
    fn clReleaseSampler(sampler: cl_sampler) -> cl_int;
    fn clGetSamplerInfo(sampler: cl_sampler, param_name: cl_sampler_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clCreateProgramWithSource(context: cl_context, count: cl_uint, strings: *mut *const c_char, lengths: *const usize, errcode_ret: *mut cl_int) -> cl_program [errcode_ret] => intercept::ProgramSource;
    fn clCreateProgramWithBinary(context: cl_context, num_devices: cl_uint, device_list: *const cl_device_id, lengths: *const usize, binaries: *mut *const ::core::ffi::c_uchar, binary_status: *mut cl_int, errcode_ret: *mut cl_int) -> cl_program [errcode_ret];
    fn clRetainProgram(program: cl_program) -> cl_int;
    fn clReleaseProgram(program: cl_program) -> cl_int;
    fn clBuildProgram(program: cl_program, num_devices: cl_uint, device_list: *const cl_device_id, options: *const c_char, pfn_notify: Option<unsafe extern "C" fn(program: cl_program, user_data: *mut c_void)>, user_data: *mut c_void) -> cl_int => intercept::ProgramBuilt;
    fn clUnloadCompiler() -> cl_int;
    fn clGetProgramInfo(program: cl_program, param_name: cl_program_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clGetProgramBuildInfo(program: cl_program, device: cl_device_id, param_name: cl_program_build_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clCreateKernel(program: cl_program, kernel_name: *const c_char, errcode_ret: *mut cl_int) -> cl_kernel [errcode_ret] => intercept::KernelCreated;
    fn clCreateKernelsInProgram(program: cl_program, num_kernels: cl_uint, kernels: *mut cl_kernel, num_kernels_ret: *mut cl_uint) -> cl_int;
    fn clRetainKernel(kernel: cl_kernel) -> cl_int;
    fn clReleaseKernel(kernel: cl_kernel) -> cl_int;
    fn clSetKernelArg(kernel: cl_kernel, arg_index: cl_uint, arg_size: usize, arg_value: *const c_void) -> cl_int => intercept::KernelArg;
    fn clGetKernelInfo(kernel: cl_kernel, param_name: cl_kernel_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clGetKernelWorkGroupInfo(kernel: cl_kernel, device: cl_device_id, param_name: cl_kernel_work_group_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clWaitForEvents(num_events: cl_uint, event_list: *const cl_event) -> cl_int => intercept::WaitedFor;
    fn clGetEventInfo(event: cl_event, param_name: cl_event_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int => intercept::EventAsked;
    fn clRetainEvent(event: cl_event) -> cl_int => intercept::EventHeld<true>;
    fn clReleaseEvent(event: cl_event) -> cl_int => intercept::EventHeld<false>;
    fn clGetEventProfilingInfo(event: cl_event, param_name: cl_profiling_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int => intercept::ProfilingQueried;
    fn clFlush(command_queue: cl_command_queue) -> cl_int;
    fn clFinish(command_queue: cl_command_queue) -> cl_int => intercept::Finished;
    fn clEnqueueReadBuffer(command_queue: cl_command_queue, buffer: cl_mem, blocking_read: cl_bool, offset: usize, size: usize, ptr: *mut c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::HostBuffer<false>>;
    fn clEnqueueWriteBuffer(command_queue: cl_command_queue, buffer: cl_mem, blocking_write: cl_bool, offset: usize, size: usize, ptr: *const c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::HostBuffer<true>>;
    fn clEnqueueCopyBuffer(command_queue: cl_command_queue, src_buffer: cl_mem, dst_buffer: cl_mem, src_offset: usize, dst_offset: usize, size: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::CopyBuffer>;
    fn clEnqueueReadImage(command_queue: cl_command_queue, image: cl_mem, blocking_read: cl_bool, origin: *const usize, region: *const usize, row_pitch: usize, slice_pitch: usize, ptr: *mut c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::HostImage<false>>;
    fn clEnqueueWriteImage(command_queue: cl_command_queue, image: cl_mem, blocking_write: cl_bool, origin: *const usize, region: *const usize, input_row_pitch: usize, input_slice_pitch: usize, ptr: *const c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::HostImage<true>>;
    fn clEnqueueCopyImage(command_queue: cl_command_queue, src_image: cl_mem, dst_image: cl_mem, src_origin: *const usize, dst_origin: *const usize, region: *const usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::CopyImage>;
    fn clEnqueueCopyImageToBuffer(command_queue: cl_command_queue, src_image: cl_mem, dst_buffer: cl_mem, src_origin: *const usize, region: *const usize, dst_offset: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::CopyImageToBuffer>;
    fn clEnqueueCopyBufferToImage(command_queue: cl_command_queue, src_buffer: cl_mem, dst_image: cl_mem, src_offset: usize, dst_origin: *const usize, region: *const usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::CopyBufferToImage>;
    fn clEnqueueMapBuffer(command_queue: cl_command_queue, buffer: cl_mem, blocking_map: cl_bool, map_flags: cl_map_flags, offset: usize, size: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event, errcode_ret: *mut cl_int) -> *mut c_void [errcode_ret] => intercept::MapBuffer;
    fn clEnqueueMapImage(command_queue: cl_command_queue, image: cl_mem, blocking_map: cl_bool, map_flags: cl_map_flags, origin: *const usize, region: *const usize, image_row_pitch: *mut usize, image_slice_pitch: *mut usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event, errcode_ret: *mut cl_int) -> *mut c_void [errcode_ret] => intercept::MapImage;
    fn clEnqueueUnmapMemObject(command_queue: cl_command_queue, memobj: cl_mem, mapped_ptr: *mut c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::Unmap>;
    fn clEnqueueNDRangeKernel(command_queue: cl_command_queue, kernel: cl_kernel, work_dim: cl_uint, global_work_offset: *const usize, global_work_size: *const usize, local_work_size: *const usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::Kernel>;
    fn clEnqueueTask(command_queue: cl_command_queue, kernel: cl_kernel, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::Kernel>;
    fn clEnqueueNativeKernel(command_queue: cl_command_queue, user_func: Option<unsafe extern "C" fn(arg1: *mut c_void)>, args: *mut c_void, cb_args: usize, num_mem_objects: cl_uint, mem_list: *const cl_mem, args_mem_loc: *mut *const c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::Kernel>;
    fn clEnqueueMarker(command_queue: cl_command_queue, event: *mut cl_event) -> cl_int => intercept::Marker;
    fn clEnqueueWaitForEvents(command_queue: cl_command_queue, num_events: cl_uint, event_list: *const cl_event) -> cl_int => intercept::Ordered;
    fn clEnqueueBarrier(command_queue: cl_command_queue) -> cl_int => intercept::Ordered;
    fn clGetExtensionFunctionAddress(func_name: *const c_char) -> *mut c_void => extensions::AddressHook<Wrapped>;
    fn clCreateFromGLBuffer(context: cl_context, flags: cl_mem_flags, bufobj: cl_GLuint, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::MemCreated;
    fn clCreateFromGLTexture2D(context: cl_context, flags: cl_mem_flags, target: cl_GLenum, miplevel: cl_GLint, texture: cl_GLuint, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::MemCreated;
    fn clCreateFromGLTexture3D(context: cl_context, flags: cl_mem_flags, target: cl_GLenum, miplevel: cl_GLint, texture: cl_GLuint, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::MemCreated;
    fn clCreateFromGLRenderbuffer(context: cl_context, flags: cl_mem_flags, renderbuffer: cl_GLuint, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::MemCreated;
    fn clGetGLObjectInfo(memobj: cl_mem, gl_object_type: *mut cl_gl_object_type, gl_object_name: *mut cl_GLuint) -> cl_int;
    fn clGetGLTextureInfo(memobj: cl_mem, param_name: cl_gl_texture_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clEnqueueAcquireGLObjects(command_queue: cl_command_queue, num_objects: cl_uint, mem_objects: *const cl_mem, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Timed;
    fn clEnqueueReleaseGLObjects(command_queue: cl_command_queue, num_objects: cl_uint, mem_objects: *const cl_mem, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Timed;
    fn clGetGLContextInfoKHR(properties: *const cl_context_properties, param_name: cl_gl_context_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clSetEventCallback(event: cl_event, command_exec_callback_type: cl_int, pfn_notify: Option<unsafe extern "C" fn(event: cl_event, event_command_status: cl_int, user_data: *mut c_void)>, user_data: *mut c_void) -> cl_int => intercept::CallbackSet;
    fn clCreateSubBuffer(buffer: cl_mem, flags: cl_mem_flags, buffer_create_type: cl_buffer_create_type, buffer_create_info: *const c_void, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::MemCreated;
    fn clSetMemObjectDestructorCallback(memobj: cl_mem, pfn_notify: Option<unsafe extern "C" fn(memobj: cl_mem, user_data: *mut c_void)>, user_data: *mut c_void) -> cl_int;
    fn clCreateUserEvent(context: cl_context, errcode_ret: *mut cl_int) -> cl_event [errcode_ret] => intercept::UserEventCreated;
    fn clSetUserEventStatus(event: cl_event, execution_status: cl_int) -> cl_int => intercept::UserEventSet;
    fn clEnqueueReadBufferRect(command_queue: cl_command_queue, buffer: cl_mem, blocking_read: cl_bool, buffer_origin: *const usize, host_origin: *const usize, region: *const usize, buffer_row_pitch: usize, buffer_slice_pitch: usize, host_row_pitch: usize, host_slice_pitch: usize, ptr: *mut c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::HostRect<false>>;
    fn clEnqueueWriteBufferRect(command_queue: cl_command_queue, buffer: cl_mem, blocking_write: cl_bool, buffer_origin: *const usize, host_origin: *const usize, region: *const usize, buffer_row_pitch: usize, buffer_slice_pitch: usize, host_row_pitch: usize, host_slice_pitch: usize, ptr: *const c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::HostRect<true>>;
    fn clEnqueueCopyBufferRect(command_queue: cl_command_queue, src_buffer: cl_mem, dst_buffer: cl_mem, src_origin: *const usize, dst_origin: *const usize, region: *const usize, src_row_pitch: usize, src_slice_pitch: usize, dst_row_pitch: usize, dst_slice_pitch: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::CopyBufferRect>;
    fn clCreateSubDevicesEXT(in_device: cl_device_id, properties: *const cl_device_partition_property_ext, num_entries: cl_uint, out_devices: *mut cl_device_id, num_devices: *mut cl_uint) -> cl_int;
    fn clRetainDeviceEXT(device: cl_device_id) -> cl_int;
    fn clReleaseDeviceEXT(device: cl_device_id) -> cl_int;
    fn clCreateEventFromGLsyncKHR(context: cl_context, sync: cl_GLsync, errcode_ret: *mut cl_int) -> cl_event [errcode_ret];
    fn clCreateSubDevices(in_device: cl_device_id, properties: *const cl_device_partition_property, num_devices: cl_uint, out_devices: *mut cl_device_id, num_devices_ret: *mut cl_uint) -> cl_int;
    fn clRetainDevice(device: cl_device_id) -> cl_int;
    fn clReleaseDevice(device: cl_device_id) -> cl_int;
    fn clCreateImage(context: cl_context, flags: cl_mem_flags, image_format: *const cl_image_format, image_desc: *const cl_image_desc, host_ptr: *mut c_void, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::CopyHostPtr;
    fn clCreateProgramWithBuiltInKernels(context: cl_context, num_devices: cl_uint, device_list: *const cl_device_id, kernel_names: *const c_char, errcode_ret: *mut cl_int) -> cl_program [errcode_ret];
    fn clCompileProgram(program: cl_program, num_devices: cl_uint, device_list: *const cl_device_id, options: *const c_char, num_input_headers: cl_uint, input_headers: *const cl_program, header_include_names: *mut *const c_char, pfn_notify: Option<unsafe extern "C" fn(program: cl_program, user_data: *mut c_void)>, user_data: *mut c_void) -> cl_int => intercept::ProgramBuilt;
    fn clLinkProgram(context: cl_context, num_devices: cl_uint, device_list: *const cl_device_id, options: *const c_char, num_input_programs: cl_uint, input_programs: *const cl_program, pfn_notify: Option<unsafe extern "C" fn(program: cl_program, user_data: *mut c_void)>, user_data: *mut c_void, errcode_ret: *mut cl_int) -> cl_program [errcode_ret] => intercept::ProgramLinked;
    fn clUnloadPlatformCompiler(platform: cl_platform_id) -> cl_int;
    fn clGetKernelArgInfo(kernel: cl_kernel, arg_index: cl_uint, param_name: cl_kernel_arg_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clEnqueueFillBuffer(command_queue: cl_command_queue, buffer: cl_mem, pattern: *const c_void, pattern_size: usize, offset: usize, size: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::FillBuffer>;
    fn clEnqueueFillImage(command_queue: cl_command_queue, image: cl_mem, fill_color: *const c_void, origin: *const usize, region: *const usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::FillImage>;
    fn clEnqueueMigrateMemObjects(command_queue: cl_command_queue, num_mem_objects: cl_uint, mem_objects: *const cl_mem, flags: cl_mem_migration_flags, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::Migrate>;
    fn clEnqueueMarkerWithWaitList(command_queue: cl_command_queue, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Timed;
    fn clEnqueueBarrierWithWaitList(command_queue: cl_command_queue, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Timed;
    fn clGetExtensionFunctionAddressForPlatform(platform: cl_platform_id, func_name: *const c_char) -> *mut c_void => extensions::AddressForPlatformHook<Wrapped>;
    fn clCreateFromGLTexture(context: cl_context, flags: cl_mem_flags, target: cl_GLenum, miplevel: cl_GLint, texture: cl_GLuint, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::MemCreated;
    fn clCreateFromEGLImageKHR(context: cl_context, egldisplay: CLeglDisplayKHR, eglimage: CLeglImageKHR, flags: cl_mem_flags, properties: *const cl_egl_image_properties_khr, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::MemCreated;
    fn clEnqueueAcquireEGLObjectsKHR(command_queue: cl_command_queue, num_objects: cl_uint, mem_objects: *const cl_mem, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Timed;
    fn clEnqueueReleaseEGLObjectsKHR(command_queue: cl_command_queue, num_objects: cl_uint, mem_objects: *const cl_mem, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Timed;
    fn clCreateEventFromEGLSyncKHR(context: cl_context, sync: CLeglSyncKHR, display: CLeglDisplayKHR, errcode_ret: *mut cl_int) -> cl_event [errcode_ret];
    fn clCreateCommandQueueWithProperties(context: cl_context, device: cl_device_id, properties: *const cl_queue_properties, errcode_ret: *mut cl_int) -> cl_command_queue [errcode_ret] => intercept::QueueCreated;
    fn clCreatePipe(context: cl_context, flags: cl_mem_flags, pipe_packet_size: cl_uint, pipe_max_packets: cl_uint, properties: *const cl_pipe_properties, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::MemCreated;
    fn clGetPipeInfo(pipe: cl_mem, param_name: cl_pipe_info, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clSVMAlloc(context: cl_context, flags: cl_svm_mem_flags, size: usize, alignment: cl_uint) -> *mut c_void => intercept::SvmAlloc;
    fn clSVMFree(context: cl_context, svm_pointer: *mut c_void) -> () => intercept::SvmFree;
    fn clEnqueueSVMFree(command_queue: cl_command_queue, num_svm_pointers: cl_uint, svm_pointers: *mut *mut c_void, pfn_free_func: Option<unsafe extern "C" fn(queue: cl_command_queue, num_svm_pointers: cl_uint, svm_pointers: *mut *mut c_void, user_data: *mut c_void)>, user_data: *mut c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::EnqueueSvmFree;
    fn clEnqueueSVMMemcpy(command_queue: cl_command_queue, blocking_copy: cl_bool, dst_ptr: *mut c_void, src_ptr: *const c_void, size: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::PtrCopy>;
    fn clEnqueueSVMMemFill(command_queue: cl_command_queue, svm_ptr: *mut c_void, pattern: *const c_void, pattern_size: usize, size: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::PtrFill>;
    fn clEnqueueSVMMap(command_queue: cl_command_queue, blocking_map: cl_bool, flags: cl_map_flags, svm_ptr: *mut c_void, size: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::SvmMap>;
    fn clEnqueueSVMUnmap(command_queue: cl_command_queue, svm_ptr: *mut c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::SvmUnmap>;
    fn clCreateSamplerWithProperties(context: cl_context, sampler_properties: *const cl_sampler_properties, errcode_ret: *mut cl_int) -> cl_sampler [errcode_ret];
    fn clSetKernelArgSVMPointer(kernel: cl_kernel, arg_index: cl_uint, arg_value: *const c_void) -> cl_int;
    fn clSetKernelExecInfo(kernel: cl_kernel, param_name: cl_kernel_exec_info, param_value_size: usize, param_value: *const c_void) -> cl_int;
    fn clGetKernelSubGroupInfoKHR(in_kernel: cl_kernel, in_device: cl_device_id, param_name: cl_kernel_sub_group_info, input_value_size: usize, input_value: *const c_void, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clCloneKernel(source_kernel: cl_kernel, errcode_ret: *mut cl_int) -> cl_kernel [errcode_ret] => intercept::KernelCloned;
    fn clCreateProgramWithIL(context: cl_context, il: *const c_void, length: usize, errcode_ret: *mut cl_int) -> cl_program [errcode_ret];
    fn clEnqueueSVMMigrateMem(command_queue: cl_command_queue, num_svm_pointers: cl_uint, svm_pointers: *mut *const c_void, sizes: *const usize, flags: cl_mem_migration_flags, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::SvmMigrate>;
    fn clGetDeviceAndHostTimer(device: cl_device_id, device_timestamp: *mut cl_ulong, host_timestamp: *mut cl_ulong) -> cl_int;
    fn clGetHostTimer(device: cl_device_id, host_timestamp: *mut cl_ulong) -> cl_int;
    fn clGetKernelSubGroupInfo(kernel: cl_kernel, device: cl_device_id, param_name: cl_kernel_sub_group_info, input_value_size: usize, input_value: *const c_void, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clSetDefaultDeviceCommandQueue(context: cl_context, device: cl_device_id, command_queue: cl_command_queue) -> cl_int;
    fn clSetProgramReleaseCallback(program: cl_program, pfn_notify: Option<unsafe extern "C" fn(program: cl_program, user_data: *mut c_void)>, user_data: *mut c_void) -> cl_int;
    fn clSetProgramSpecializationConstant(program: cl_program, spec_id: cl_uint, spec_size: usize, spec_value: *const c_void) -> cl_int;
    fn clCreateBufferWithProperties(context: cl_context, properties: *const cl_mem_properties, flags: cl_mem_flags, size: usize, host_ptr: *mut c_void, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::CopyHostPtr;
    fn clCreateImageWithProperties(context: cl_context, properties: *const cl_mem_properties, flags: cl_mem_flags, image_format: *const cl_image_format, image_desc: *const cl_image_desc, host_ptr: *mut c_void, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::CopyHostPtr;
    fn clSetContextDestructorCallback(context: cl_context, pfn_notify: Option<unsafe extern "C" fn(context: cl_context, user_data: *mut c_void)>, user_data: *mut c_void) -> cl_int;
}
extension {
    fn clHostMemAllocINTEL(context: cl_context, properties: *const cl_mem_properties_intel, size: usize, alignment: cl_uint, errcode_ret: *mut cl_int) -> *mut c_void [errcode_ret] => intercept::UsmHostAlloc;
    fn clDeviceMemAllocINTEL(context: cl_context, device: cl_device_id, properties: *const cl_mem_properties_intel, size: usize, alignment: cl_uint, errcode_ret: *mut cl_int) -> *mut c_void [errcode_ret] => intercept::UsmAlloc<false>;
    fn clSharedMemAllocINTEL(context: cl_context, device: cl_device_id, properties: *const cl_mem_properties_intel, size: usize, alignment: cl_uint, errcode_ret: *mut cl_int) -> *mut c_void [errcode_ret] => intercept::UsmAlloc<true>;
    fn clMemFreeINTEL(context: cl_context, ptr: *mut c_void) -> cl_int => intercept::UsmFree;
    fn clMemBlockingFreeINTEL(context: cl_context, ptr: *mut c_void) -> cl_int => intercept::UsmFree;
    fn clGetMemAllocInfoINTEL(context: cl_context, ptr: *const c_void, param_name: cl_mem_info_intel, param_value_size: usize, param_value: *mut c_void, param_value_size_ret: *mut usize) -> cl_int;
    fn clSetKernelArgMemPointerINTEL(kernel: cl_kernel, arg_index: cl_uint, arg_value: *const c_void) -> cl_int;
    fn clEnqueueMemFillINTEL(command_queue: cl_command_queue, dst_ptr: *mut c_void, pattern: *const c_void, pattern_size: usize, size: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::PtrFill>;
    fn clEnqueueMemcpyINTEL(command_queue: cl_command_queue, blocking: cl_bool, dst_ptr: *mut c_void, src_ptr: *const c_void, size: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::PtrCopy>;
    fn clEnqueueMemAdviseINTEL(command_queue: cl_command_queue, ptr: *const c_void, size: usize, advice: cl_mem_advice_intel, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Timed;
    fn clEnqueueMigrateMemINTEL(command_queue: cl_command_queue, ptr: *const c_void, size: usize, flags: cl_mem_migration_flags, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::UsmMigrate>;
    fn clEnqueueMemsetINTEL(command_queue: cl_command_queue, dst_ptr: *mut c_void, value: cl_int, size: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::Memset>;
    fn clSVMAllocARM(context: cl_context, flags: cl_svm_mem_flags_arm, size: usize, alignment: cl_uint) -> *mut c_void => intercept::SvmAlloc;
    fn clSVMFreeARM(context: cl_context, svm_pointer: *mut c_void) -> () => intercept::SvmFree;
    fn clEnqueueSVMFreeARM(command_queue: cl_command_queue, num_svm_pointers: cl_uint, svm_pointers: *mut *mut c_void, pfn_free_func: Option<unsafe extern "C" fn(queue: cl_command_queue, num_svm_pointers: cl_uint, svm_pointers: *mut *mut c_void, user_data: *mut c_void)>, user_data: *mut c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::EnqueueSvmFree;
    fn clEnqueueSVMMemcpyARM(command_queue: cl_command_queue, blocking_copy: cl_bool, dst_ptr: *mut c_void, src_ptr: *const c_void, size: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::PtrCopy>;
    fn clEnqueueSVMMemFillARM(command_queue: cl_command_queue, svm_ptr: *mut c_void, pattern: *const c_void, pattern_size: usize, size: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::PtrFill>;
    fn clEnqueueSVMMapARM(command_queue: cl_command_queue, blocking_map: cl_bool, flags: cl_map_flags, svm_ptr: *mut c_void, size: usize, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::SvmMap>;
    fn clEnqueueSVMUnmapARM(command_queue: cl_command_queue, svm_ptr: *mut c_void, num_events_in_wait_list: cl_uint, event_wait_list: *const cl_event, event: *mut cl_event) -> cl_int => intercept::Enqueue<intercept::SvmUnmap>;
    fn clSetKernelArgSVMPointerARM(kernel: cl_kernel, arg_index: cl_uint, arg_value: *const c_void) -> cl_int;
    fn clSetKernelExecInfoARM(kernel: cl_kernel, param_name: cl_kernel_exec_info_arm, param_value_size: usize, param_value: *const c_void) -> cl_int;
    fn clImportMemoryARM(context: cl_context, flags: cl_mem_flags, properties: *const cl_import_properties_arm, memory: *mut c_void, size: usize, errcode_ret: *mut cl_int) -> cl_mem [errcode_ret] => intercept::Imported;
}
        }
    };
}

pub(crate) use entry_points;

/// Makes [`Api`] from the list: the names, nothing of the signatures.
macro_rules! api_enum {
    (
        core { $(
            fn $name:ident( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty
                $([$err:ident])? $(=> $hook:path)? ;
        )* }
        extension { $(
            fn $xname:ident( $($xarg:ident : $xty:ty),* $(,)? ) -> $xret:ty
                $([$xerr:ident])? $(=> $xhook:path)? ;
        )* }
    ) => {
        /// Every entry point clxfer intercepts, core first, then extensions.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Api { $($name,)* $($xname,)* }

        impl Api {
            pub const ALL: &'static [Api] = &[$(Api::$name,)* $(Api::$xname,)*];
            pub const COUNT: usize = Api::ALL.len();

            pub const fn name(self) -> &'static str {
                match self { $(Api::$name => stringify!($name),)* $(Api::$xname => stringify!($xname),)* }
            }

            /// The dispatch-table slot of a core function; `None` for extensions.
            pub const fn slot(self) -> Option<usize> {
                match self {
                    $(Api::$name => Some(
                        std::mem::offset_of!(opencl_sys::cl_icd::cl_icd_dispatch, $name)
                            / std::mem::size_of::<usize>(),
                    ),)*
                    _ => None,
                }
            }
        }
    };
}

entry_points!(api_enum);

impl Api {
    pub fn from_name(name: &str) -> Option<Api> {
        Api::ALL.iter().copied().find(|api| api.name() == name)
    }

    /// The verb of an enqueue, for device slice names (`Write`, `Map`, `Migrate`, `Kernel`, …):
    /// looked up, not matched, as every enqueue asks.
    pub fn verb(self) -> &'static str {
        static VERBS: std::sync::LazyLock<Vec<&'static str>> =
            std::sync::LazyLock::new(|| Api::ALL.iter().map(|a| verb_name(a.name())).collect());
        VERBS[self as usize]
    }
}

/// [`Api::verb`] of an entry point's name (a trace gives names).
pub fn verb_name(name: &str) -> &str {
    // The copy COPY_HOST_PTR makes at a buffer's or image's creation is a transfer of the
    // creating call.
    if name.starts_with("clCreateBuffer") || name.starts_with("clCreateImage") {
        return "Create";
    }
    let bare = name.strip_prefix("clEnqueue").unwrap_or(name);
    let starts = |p: &str| bare.starts_with(p);
    if starts("Write") {
        "Write"
    } else if starts("Read") {
        "Read"
    } else if starts("Copy") {
        "Copy"
    } else if starts("Fill") || starts("SVMMemFill") || starts("MemFill") || starts("Memset") {
        "Fill"
    } else if starts("Map") || starts("SVMMap") {
        "Map"
    } else if starts("Unmap") || starts("SVMUnmap") {
        "Unmap"
    } else if starts("Migrate") || starts("SVMMigrate") {
        "Migrate"
    } else if starts("SVMMemcpy") || starts("Memcpy") {
        "Memcpy"
    } else if starts("NDRange") || starts("Task") || starts("NativeKernel") {
        "Kernel"
    } else {
        bare
    }
}

/// How a call reached clxfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Via {
    /// A symbol exported for LD_PRELOAD.
    Preload = 0,
    /// A slot of the loader-layer dispatch table.
    Layer = 1,
    /// A wrapper handed out by `clGetExtensionFunctionAddress(ForPlatform)`.
    Extension = 2,
}
