//! The wasm build's global allocator, and how it grows the memory.
//!
//! Blocks come in power-of-two sizes (16 B up), one free list per size: a freed block goes
//! to the front of its size's list and the next allocation of that size takes it; a size
//! whose list is empty is cut from the end of the memory, aligned to its size (up to a
//! page), the gap before it going to the free lists as the largest blocks that fit. No
//! block carries a header, and no two blocks are ever merged. That suits what the binding allocates: the heap's chunks
//! (`src/chunked.rs`: 4096 entries of 16 B, 4096 slots of 8 B, and below a chunk a first one
//! doubling from 16 elements, all powers of two, so none wastes a byte), the vector of
//! chunk pointers, and the short-lived vectors of a batch call. It is also about 7 kB
//! smaller than dlmalloc, the allocator Rust's standard library uses here, in a module
//! every page loads. The cost: a block of a size between two powers of two holds up to
//! twice what it needs while it lives, and a size's freed blocks serve only that size.
//!
//! Once the memory holds 32 MiB it asks the host for memory in geometric steps, an eighth
//! of what the memory already holds, instead of exactly what the allocation needs. Why: V8
//! (Node 20 and 24) answers `memory.grow` on a memory of more than about 64 MiB with a full
//! mark-compact of the JS heap (it accounts the grown memory as new external memory).
//! Growing one heap chunk at a time (64 KiB steps) makes that one full collection per step
//! once the memory is past that size, a number of steps linear in the memory's size, and a
//! cost per offer that grows with the queue (`npm run bench`'s growth curve). Geometric
//! steps make the number of steps logarithmic in the memory's size, so the collection work
//! per offer stays flat; in exchange the memory holds up to an eighth more than it uses (on
//! average half that). Below 32 MiB, where growth costs few collections, steps stay exact,
//! so that small queues hold no more than they use. Memory is never given back to the host
//! (WebAssembly cannot shrink a memory); freed blocks stay on their lists and are reused.

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;

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

/// The smallest block: room for the free list's link, and the alignment of most types.
const MIN_CLASS: u32 = 4;
/// Blocks are addressed below 4 GiB: sizes up to 2³¹.
const CLASSES: usize = 32;

/// The size class of a layout: the power of two its block has (`1 << class`).
#[inline]
fn class_of(layout: Layout) -> u32 {
    let size = layout.size().max(layout.align()).max(1 << MIN_CLASS);
    usize::BITS - (size - 1).leading_zeros()
}

struct Blocks {
    /// free[c] is the address of the first free block of size 2^c, 0 for none; each free
    /// block holds the address of the next in its first word.
    free: [usize; CLASSES],
    /// Memory from `cut` to `end` belongs to no block yet.
    cut: usize,
    end: usize,
    /// How many times the memory was grown (read by tests).
    grows: usize,
}

impl Blocks {
    /// A block of 2^class bytes aligned to `align`, or null when the host has no memory left.
    unsafe fn alloc(&mut self, class: u32, align: usize) -> *mut u8 {
        if class as usize >= CLASSES {
            return core::ptr::null_mut();
        }
        let head = self.free[class as usize];
        if head != 0 {
            // SAFETY: a free block's first word is the next one's address.
            self.free[class as usize] = unsafe { *(head as *const usize) };
            return head as *mut u8;
        }
        let size = 1usize << class;
        // Every block is aligned to its size (up to a page), so that any block of a class
        // serves any layout of that class; more is refused (nothing here asks for it).
        if align > PAGE {
            return core::ptr::null_mut();
        }
        let align = size.min(PAGE);
        if !matches!(self.cut.next_multiple_of(align).checked_add(size), Some(top) if top <= self.end)
            && !self.grow(size + align)
        {
            return core::ptr::null_mut();
        }
        let at = self.cut.next_multiple_of(align);
        // The gap before `at` goes to the free lists as the largest aligned blocks that fit.
        while self.cut < at {
            let fit = (at - self.cut).ilog2().min(self.cut.trailing_zeros());
            // SAFETY: the gap is memory no block holds.
            unsafe { self.free(self.cut as *mut u8, fit) };
            self.cut += 1 << fit;
        }
        self.cut = at + size;
        at as *mut u8
    }

    /// Adds memory past `end` for a block of `bytes`; false when the host refuses.
    fn grow(&mut self, bytes: usize) -> bool {
        let current = core::arch::wasm32::memory_size(0);
        // Near the 4 GiB limit a full step may not fit where the bare request still does.
        for pages in [step_pages(current, bytes), bytes.div_ceil(PAGE)] {
            let previous = core::arch::wasm32::memory_grow(0, pages);
            if previous != usize::MAX {
                self.grows += 1;
                let start = previous * PAGE;
                // Only this allocator grows the memory, so the new pages follow `end` (but for
                // the first growth, which starts past the module's own data and stack).
                if start != self.end {
                    self.cut = start;
                }
                // The very top of the 4 GiB address space: an address must not wrap to 0.
                let top = start.wrapping_add(pages * PAGE);
                self.end = if top == 0 { usize::MAX - 15 } else { top };
                return true;
            }
        }
        false
    }

    /// Grows the block at `ptr` of 2^`from` bytes (at least a page, so page-aligned, which
    /// is all a block that size needs) to 2^`to` in place if it is the block cut last;
    /// false if it is not, or the host has no memory for it.
    fn extend(&mut self, ptr: *mut u8, from: u32, to: u32) -> bool {
        let end_of_block = ptr as usize + (1 << from);
        if to as usize >= CLASSES || end_of_block != self.cut {
            return false;
        }
        let Some(top) = (ptr as usize).checked_add(1 << to) else { return false };
        if top > self.end && !self.grow(top - self.end) {
            return false;
        }
        // If the new memory did not follow, the block stays as it is and the caller moves it.
        if self.cut != end_of_block || top > self.end {
            return false;
        }
        self.cut = top;
        true
    }

    /// Puts a block of 2^class bytes back on its list.
    unsafe fn free(&mut self, ptr: *mut u8, class: u32) {
        // Below 4 GiB a block is at most 2³¹ bytes, so the class is below 32 (the mask only
        // spares the bounds check its panic).
        let class = class as usize & (CLASSES - 1);
        // SAFETY: the block is at least a word and no longer in use.
        unsafe { *(ptr as *mut usize) = self.free[class] };
        self.free[class] = ptr as usize;
    }
}

struct Allocator(UnsafeCell<Blocks>);

// SAFETY: the wasm build has one thread, so no two calls ever overlap.
unsafe impl Sync for Allocator {}

#[global_allocator]
static ALLOCATOR: Allocator = Allocator(UnsafeCell::new(Blocks { free: [0; CLASSES], cut: 0, end: 0, grows: 0 }));

impl Allocator {
    /// SAFETY: one thread, and the allocator never calls back into itself, so this is the
    /// only live reference while a `GlobalAlloc` method runs.
    #[allow(clippy::mut_from_ref)]
    unsafe fn blocks(&self) -> &mut Blocks {
        unsafe { &mut *self.0.get() }
    }
}

unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { self.blocks().alloc(class_of(layout), layout.align()) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.blocks().free(ptr, class_of(layout)) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: GlobalAlloc's contract for realloc makes this layout valid.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        let (old_class, new_class) = (class_of(layout), class_of(new));
        if new_class == old_class {
            return ptr;
        }
        // A vector that doubles past a page is usually the block cut last: it grows in place,
        // so that doubling to n bytes asks the host for n, not for 2n in blocks left behind.
        // SAFETY: single-threaded (see `blocks`).
        if new_class > old_class
            && old_class >= PAGE.ilog2()
            && unsafe { self.blocks().extend(ptr, old_class, new_class) }
        {
            return ptr;
        }
        let out = unsafe { self.alloc(new) };
        if !out.is_null() {
            unsafe {
                core::ptr::copy_nonoverlapping(ptr, out, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        out
    }
}

/// How many times the allocator has grown the memory so far.
#[cfg(test)]
fn growths() -> usize {
    // SAFETY: single-threaded; a copy is read.
    unsafe { ALLOCATOR.blocks().grows }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test]
    fn a_freed_block_serves_the_next_allocation_of_its_size_and_blocks_are_aligned() {
        let a = Vec::<u64>::with_capacity(100); // 800 B: a 1 KiB block
        let at = a.as_ptr() as usize;
        drop(a);
        let b = Vec::<u8>::with_capacity(1000);
        assert_eq!(b.as_ptr() as usize, at, "the same size class takes the freed block");
        for align in [1, 8, 16, 64, 256, 4096] {
            let layout = Layout::from_size_align(24, align).unwrap();
            let p = unsafe { ALLOCATOR.alloc(layout) };
            assert!(!p.is_null() && p as usize % align == 0, "{p:?} aligned to {align}");
            unsafe { ALLOCATOR.dealloc(p, layout) };
        }
        let mut v = vec![7u32; 5]; // a 32 B block: growing within it keeps it
        let first = v.as_ptr();
        v.reserve_exact(3);
        assert_eq!(v.as_ptr(), first, "a realloc within the block's size stays put");
        v.extend([8; 100]);
        assert_eq!(v[..6], [7, 7, 7, 7, 7, 8], "a realloc to a bigger size keeps the contents");
        // A vector doubling past a page from the top of the memory stays where it is.
        let mut big = Vec::<u8>::with_capacity(2 * PAGE);
        let first = big.as_ptr();
        big.resize(8 * PAGE, 1);
        assert_eq!(big.as_ptr(), first, "the block cut last grows in place");
        assert!(big.iter().all(|&b| b == 1));
    }

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
