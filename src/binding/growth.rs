//! How the wasm build's memory grows: the global allocator is dlmalloc (the allocator
//! Rust's standard library uses on `wasm32-unknown-unknown`), but once the memory holds
//! 32 MiB it asks the host for memory in geometric steps, an eighth of what the memory
//! already holds, instead of exactly what the allocation needs.
//!
//! Why: V8 (Node 20 and 24) answers `memory.grow` on a memory of more than about 64 MiB
//! with a full mark-compact of the JS heap (it accounts the grown memory as new external
//! memory). Growing one heap chunk at a time (64 KiB steps) makes that one full collection
//! per step once the memory is past that size, a number of steps linear in the memory's
//! size, and a cost per offer that grows with the queue (`npm run bench`'s growth curve).
//! Geometric steps make the number of steps logarithmic in the memory's size, so the
//! collection work per offer stays flat; in exchange the memory holds up to an eighth more
//! than it uses (on average half that). Below 32 MiB, where growth costs few collections,
//! steps stay exact, so that small queues hold no more than they use. Memory is never
//! given back to the host (WebAssembly cannot shrink a memory); freed blocks go back to
//! dlmalloc and are reused.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;

use dlmalloc::Dlmalloc;

#[cfg(target_feature = "atomics")]
compile_error!("the allocator assumes one thread: build without the atomics target feature");

/// The size of a WebAssembly page.
const PAGE: usize = 64 * 1024;

/// From this size on (in pages: 32 MiB), memory grows by at least 1/`STEP_DIVISOR` of itself.
const GEOMETRIC_FROM: usize = (32 << 20) / PAGE;
const STEP_DIVISOR: usize = 8;

/// Pages to ask the host for when the allocator needs `bytes` more and the memory holds
/// `pages`: what the request needs, or from 32 MiB on an eighth of the memory if that is more.
pub(crate) fn step_pages(pages: usize, bytes: usize) -> usize {
    let needed = bytes.div_ceil(PAGE);
    if pages < GEOMETRIC_FROM {
        needed
    } else {
        needed.max(pages / STEP_DIVISOR)
    }
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
    fn steps_are_exact_below_32_mib_then_an_eighth_of_the_memory() {
        assert_eq!(step_pages(17, 1), 1, "a small memory grows by what it needs");
        assert_eq!(step_pages(511, 2 * PAGE), 2);
        assert_eq!(step_pages(512, 1), 64, "32 MiB and more: by an eighth");
        assert_eq!(step_pages(800, 1), 100);
        assert_eq!(step_pages(800, 300 * PAGE + 1), 301, "unless the request is bigger");
    }

    /// Allocates 64 KiB blocks until the memory holds `mib` MiB more than at the start.
    fn grow_by(mib: usize, blocks: &mut Vec<Vec<u8>>) {
        let target = core::arch::wasm32::memory_size(0) + (mib << 20) / PAGE;
        while core::arch::wasm32::memory_size(0) < target {
            blocks.push(Vec::with_capacity(PAGE));
        }
    }

    #[wasm_bindgen_test]
    fn a_growing_heap_grows_the_memory_in_few_steps_past_32_mib() {
        let mut blocks = Vec::new();
        grow_by(33, &mut blocks); // past 32 MiB, whatever the other tests left
        let before = (growths(), core::arch::wasm32::memory_size(0));
        let held = blocks.len();
        grow_by(64, &mut blocks);
        let grows = growths() - before.0;
        // One step per block would be ~1,000 steps; geometric steps from >= 33 MiB need < 12.
        assert!(grows <= 12, "{grows} steps to grow by 64 MiB past {} pages", before.1);
        let pages = core::arch::wasm32::memory_size(0);
        assert!(
            pages * PAGE <= (blocks.len() * (PAGE + 64)) * 9 / 8 + (2 << 20),
            "{pages} pages hold {} blocks",
            blocks.len()
        );
        blocks.truncate(held);
        grow_by(0, &mut blocks);
        let again = growths();
        let mut more = Vec::new();
        for _ in 0..(64 << 20) / PAGE / 2 {
            more.push(Vec::<u8>::with_capacity(PAGE));
        }
        assert_eq!(growths(), again, "freed memory is reused, not grown again");
    }
}
