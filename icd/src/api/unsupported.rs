//! Entry points of GL sharing, which this device does not support. Each validates what
//! it can and returns the error the spec names for a device without the feature, so the
//! dispatch table has no holes a host program could fall into.

use std::ffi::c_void;

use ferrocl_macros::cl_entry_point;
use opencl_sys::*;

use super::icd::from_handle;
use super::util::CLResult;
use crate::core::context::Context;
use crate::core::memory::Mem;
use crate::core::queue::Queue;

/// GL sharing: no context of ours is created from a GL context ("CL_INVALID_CONTEXT if
/// context is not a valid context or was not created from a GL context").
fn not_gl_context(context: cl_context) -> CLResult<*mut c_void> {
    from_handle::<Context>(context)?;
    Err(CL_INVALID_CONTEXT)
}

#[cl_entry_point]
fn clCreateFromGLBuffer(context: cl_context, _flags: cl_mem_flags, _bufobj: cl_GLuint) -> CLResult<cl_mem> {
    not_gl_context(context)
}

#[cl_entry_point]
fn clCreateFromGLTexture(
    context: cl_context,
    _flags: cl_mem_flags,
    _target: cl_GLenum,
    _miplevel: cl_GLint,
    _texture: cl_GLuint,
) -> CLResult<cl_mem> {
    not_gl_context(context)
}

#[cl_entry_point]
fn clCreateFromGLTexture2D(
    context: cl_context,
    _flags: cl_mem_flags,
    _target: cl_GLenum,
    _miplevel: cl_GLint,
    _texture: cl_GLuint,
) -> CLResult<cl_mem> {
    not_gl_context(context)
}

#[cl_entry_point]
fn clCreateFromGLTexture3D(
    context: cl_context,
    _flags: cl_mem_flags,
    _target: cl_GLenum,
    _miplevel: cl_GLint,
    _texture: cl_GLuint,
) -> CLResult<cl_mem> {
    not_gl_context(context)
}

#[cl_entry_point]
fn clCreateFromGLRenderbuffer(context: cl_context, _flags: cl_mem_flags, _renderbuffer: cl_GLuint) -> CLResult<cl_mem> {
    not_gl_context(context)
}

#[cl_entry_point]
fn clGetGLObjectInfo(
    memobj: cl_mem,
    _gl_object_type: *mut cl_gl_object_type,
    _gl_object_name: *mut cl_GLuint,
) -> CLResult<()> {
    // "CL_INVALID_GL_OBJECT if there is no GL object associated with memobj."
    from_handle::<Mem>(memobj).and(Err(CL_INVALID_GL_OBJECT))
}

#[cl_entry_point]
fn clGetGLTextureInfo(
    memobj: cl_mem,
    _param_name: cl_gl_texture_info,
    _size: usize,
    _value: *mut c_void,
    _size_ret: *mut usize,
) -> CLResult<()> {
    from_handle::<Mem>(memobj).and(Err(CL_INVALID_GL_OBJECT))
}

#[cl_entry_point]
fn clEnqueueAcquireGLObjects(
    queue: cl_command_queue,
    _num_objects: cl_uint,
    _mem_objects: *const cl_mem,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> CLResult<()> {
    from_handle::<Queue>(queue).and(Err(CL_INVALID_CONTEXT))
}

#[cl_entry_point]
fn clEnqueueReleaseGLObjects(
    queue: cl_command_queue,
    _num_objects: cl_uint,
    _mem_objects: *const cl_mem,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> CLResult<()> {
    from_handle::<Queue>(queue).and(Err(CL_INVALID_CONTEXT))
}

#[cl_entry_point]
fn clGetGLContextInfoKHR(
    _properties: *const cl_context_properties,
    _param_name: cl_gl_context_info,
    _size: usize,
    _value: *mut c_void,
    _size_ret: *mut usize,
) -> CLResult<()> {
    // "CL_INVALID_OPERATION if ... no GL sharing extension is supported."
    Err(CL_INVALID_OPERATION)
}

#[cl_entry_point]
fn clCreateEventFromGLsyncKHR(context: cl_context, _sync: cl_GLsync) -> CLResult<cl_event> {
    not_gl_context(context)
}
