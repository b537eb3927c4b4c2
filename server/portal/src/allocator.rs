//! How the process's allocator treats the large buffers a server holds for a moment (an upload's
//! bytes, a document read back for its reader): each of them is mapped on its own and given back
//! to the system when freed.
//!
//! glibc's malloc otherwise raises its mapping threshold each time it frees a mapped buffer, up
//! to 32 MiB, so later 16 MiB uploads land in its per-thread heaps, which keep what they free:
//! twelve 16 MB PDFs uploaded at once raised the server's peak by 352 to 552 MiB from run to run,
//! and by 239 MiB with the threshold fixed (server/portal/tests/attack_memory.rs).

/// Buffers from this size up are mapped on their own. **Decision:** 1 MiB: a message or a page of
/// the conversation list stays in the heaps, an upload, a PDF or a picture does not.
const MAPPED_FROM: usize = 1024 * 1024;

/// Fixes glibc's mapping threshold at [`MAPPED_FROM`] for the whole process; other allocators
/// are left alone. Calling it again changes nothing.
pub(crate) fn return_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let threshold = libc::c_int::try_from(MAPPED_FROM).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only sets a parameter of glibc's allocator; M_MMAP_THRESHOLD takes any
        // size up to 32 MiB, and setting it turns the moving threshold off.
        #[allow(unsafe_code)]
        let accepted = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, threshold) };
        if accepted != 1 {
            tracing::warn!("the allocator refused a mapping threshold of {MAPPED_FROM} bytes");
        }
    }
}
