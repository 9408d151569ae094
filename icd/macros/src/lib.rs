//! `#[cl_entry_point]`: an OpenCL entry point written once, as a Rust function that
//! returns `CLResult`, becomes the `extern "C"` function the dispatch table points to.
//!
//! - `fn clF(args) -> CLResult<()>` returns the error code: `unsafe extern "C" fn
//!   clF(args) -> cl_int`.
//! - `fn clF(args) -> CLResult<T>` reports it through a trailing `errcode_ret`, as every
//!   OpenCL function returning an object does: `unsafe extern "C" fn clF(args,
//!   errcode_ret: *mut cl_int) -> T`, returning a null `T` on failure.
//!
//! Either way a panic becomes `CL_OUT_OF_HOST_MEMORY` instead of unwinding into C
//! (`api::util::status` and `with_errcode`). The parameter lists are the spec's, however
//! long, so the shim allows clippy's `too_many_arguments`.

use proc_macro::TokenStream;
use quote::quote;
use syn::{parse_macro_input, GenericArgument, ItemFn, PathArguments, ReturnType, Type};

#[proc_macro_attribute]
pub fn cl_entry_point(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        return syn::Error::new(proc_macro2::Span::call_site(), "cl_entry_point takes no arguments")
            .to_compile_error()
            .into();
    }
    let f = parse_macro_input!(item as ItemFn);
    match expand(f) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `T` of a `CLResult<T>` return type.
fn result_type(ret: &ReturnType) -> syn::Result<Type> {
    let ReturnType::Type(_, ty) = ret else {
        return Err(syn::Error::new_spanned(ret, "an entry point returns CLResult<T>"));
    };
    if let Type::Path(p) = &**ty {
        if let Some(last) = p.path.segments.last().filter(|s| s.ident == "CLResult") {
            if let PathArguments::AngleBracketed(a) = &last.arguments {
                if let Some(GenericArgument::Type(t)) = a.args.first() {
                    return Ok(t.clone());
                }
            }
        }
    }
    Err(syn::Error::new_spanned(ty, "an entry point returns CLResult<T>"))
}

fn expand(f: ItemFn) -> syn::Result<proc_macro2::TokenStream> {
    let ItemFn { attrs, sig, block, .. } = f;
    let name = &sig.ident;
    let inputs = &sig.inputs;
    let ok = result_type(&sig.output)?;
    let unit = matches!(&ok, Type::Tuple(t) if t.elems.is_empty());
    Ok(if unit {
        quote! {
            #(#attrs)*
            #[allow(clippy::too_many_arguments)]
            pub(super) unsafe extern "C" fn #name(#inputs) -> opencl_sys::cl_int {
                crate::api::util::status(|| -> crate::api::util::CLResult<()> #block)
            }
        }
    } else {
        let comma = if inputs.is_empty() || inputs.trailing_punct() { quote!() } else { quote!(,) };
        quote! {
            #(#attrs)*
            #[allow(clippy::too_many_arguments)]
            pub(super) unsafe extern "C" fn #name(#inputs #comma errcode_ret: *mut opencl_sys::cl_int) -> #ok {
                crate::api::util::with_errcode(
                    errcode_ret,
                    ::std::ptr::null_mut(),
                    || -> crate::api::util::CLResult<#ok> #block,
                )
            }
        }
    })
}
