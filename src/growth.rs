//! How the wasm build's memory grows: the global allocator is dlmalloc (the allocator
//! Rust's standard library uses on `wasm32-unknown-unknown`), but it asks the host for
//! memory in geometric steps, an eighth of what the memory already holds, instead of
//! exactly what the allocation needs.
//!
//! Why: every `memory.grow` makes the host account the memory's whole size as new external
//! memory (V8 attaches a fresh `ArrayBuffer` to the grown memory), and once that exceeds
//! its external-memory limit (64 MiB above the amount at the last full collection) V8
//! runs a full mark-compact of the JS heap. Growing one chunk of the heap at a time (64 KiB
//! steps) made that one full collection per step past ~3·10⁶ pending items on Node 20: ~1,000
//! collections while offering 10⁷ items, and a cost per offer that grew with the queue.
//! Geometric steps make the number of steps logarithmic in the memory's size, so the
//! collection work per offer stays flat; in exchange the memory holds up to an eighth more
//! than it uses (on average half that). Memory is never given back to the host
//! (WebAssembly cannot shrink a memory); freed blocks go back to dlmalloc and are reused.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;

use dlmalloc::Dlmalloc;

#[cfg(target_feature = "atomics")]
compile_error!("the allocator assumes one thread: build without the atomics target feature");

/// The size of a WebAssembly page.
const PAGE: usize = 64 * 1024;

/// Memory grows by at least this fraction (1/8) of its current size.
const STEP_DIVISOR: usize = 8;

/// Pages to ask the host for when the allocator needs `bytes` more and the memory holds
/// `pages`: what the request needs, or an eighth of the memory if that is more.
pub(crate) fn step_pages(pages: usize, bytes: usize) -> usize {
    bytes.div_ceil(PAGE).max(pages / STEP_DIVISOR)
}

/// dlmalloc's source of memory: `memory.grow` in geometric steps.
struct Geometric {
    /// How many times the memory was grown (read by tests and `growths()`).
    grows: UnsafeCell<usize>,
}

// SAFETY: the wasm build has one thread (see the compile_error above).
unsafe impl Send for Geometric {}

// SAFETY: dlmalloc's contract for a system allocator: `alloc` returns a fresh region of at
// least `size` bytes (or null) that nothing else uses; the other methods decline to give
// memory back, which dlmalloc handles by keeping it.
unsafe impl dlmalloc::Allocator for Geometric {
    fn alloc(&self, size: usize) -> (*mut u8, usize, u32) {
        let current = core::arch::wasm32::memory_size(0);
        let step = step_pages(current, size);
        let needed = size.div_ceil(PAGE);
        // Near the 4 GiB limit a full step may not fit where the bare request still does.
        for pages in [step, needed] {
            let previous = core::arch::wasm32::memory_grow(0, pages);
            if previous != usize::MAX {
                // SAFETY: single-threaded, and no reference to the counter outlives this line.
                unsafe { *self.grows.get() += 1 };
                let size = pages * PAGE;
                // The very top of the 4 GiB address space: a pointer must not wrap to 0.
                let size = if (previous * PAGE).wrapping_add(size) == 0 { size - 16 } else { size };
                return ((previous * PAGE) as *mut u8, size, 0);
            }
        }
        (std::ptr::null_mut(), 0, 0)
    }

    fn remap(&self, _ptr: *mut u8, _old: usize, _new: usize, _can_move: bool) -> *mut u8 {
        std::ptr::null_mut()
    }

    fn free_part(&self, _ptr: *mut u8, _old: usize, _new: usize) -> bool {
        false
    }

    fn free(&self, _ptr: *mut u8, _size: usize) -> bool {
        false
    }

    fn can_release_part(&self, _flags: u32) -> bool {
        false
    }

    fn allocates_zeros(&self) -> bool {
        true
    }

    fn page_size(&self) -> usize {
        PAGE
    }
}

struct Allocator(UnsafeCell<Dlmalloc<Geometric>>);

// SAFETY: the wasm build has one thread, so no two calls ever overlap.
unsafe impl Sync for Allocator {}

#[global_allocator]
static ALLOCATOR: Allocator =
    Allocator(UnsafeCell::new(Dlmalloc::new_with_allocator(Geometric { grows: UnsafeCell::new(0) })));

impl Allocator {
    /// SAFETY: one thread, and the allocator never calls back into itself, so this is the
    /// only live reference while a `GlobalAlloc` method runs.
    #[allow(clippy::mut_from_ref)]
    unsafe fn dlmalloc(&self) -> &mut Dlmalloc<Geometric> {
        &mut *self.0.get()
    }
}

unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.dlmalloc().malloc(layout.size(), layout.align())
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.dlmalloc().calloc(layout.size(), layout.align())
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.dlmalloc().free(ptr, layout.size(), layout.align())
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.dlmalloc().realloc(ptr, layout.size(), layout.align(), new_size)
    }
}

/// How many times the allocator has grown the memory so far.
#[cfg(test)]
fn growths() -> usize {
    // SAFETY: single-threaded; a copy is read.
    unsafe { *ALLOCATOR.dlmalloc().allocator().grows.get() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test]
    fn steps_are_an_eighth_of_the_memory_or_the_request() {
        assert_eq!(step_pages(17, 1), 2, "a small memory grows by what it needs");
        assert_eq!(step_pages(800, 1), 100, "a big one by an eighth");
        assert_eq!(step_pages(800, 300 * PAGE + 1), 301, "unless the request is bigger");
    }

    #[wasm_bindgen_test]
    fn a_growing_heap_grows_the_memory_in_few_steps() {
        // 64 MiB in 64 KiB blocks, as the heap's chunks come: one step per block would be
        // 1,024 steps; geometric steps from ~1 MiB need about 40.
        let before = (growths(), core::arch::wasm32::memory_size(0));
        let blocks: Vec<Vec<u8>> = (0..1024).map(|_| Vec::with_capacity(PAGE)).collect();
        let grows = growths() - before.0;
        let pages = core::arch::wasm32::memory_size(0) - before.1;
        assert!(grows <= 45, "{grows} steps to grow by {pages} pages");
        assert!(pages <= 1024 + 1024 / 8 + 2 * before.1 / 8 + 16, "{pages} pages for 1,024 blocks of a page");
        drop(blocks);
        let again: Vec<Vec<u8>> = (0..1024).map(|_| Vec::with_capacity(PAGE)).collect();
        assert_eq!(growths() - before.0, grows, "freed memory is reused, not grown again");
        drop(again);
    }
}
