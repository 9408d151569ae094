//! Gives the driver a SONAME, as Debian expects of a shared object in the multiarch
//! library directory (the package installs it as libferrocl.so.1; see packaging/).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libferrocl.so.1");
}
