//! [`Chunked`]: a growable array stored in fixed-size, cache-line-aligned chunks.
//!
//! A `Vec` that doubles leaves up to half its capacity unused, and in WebAssembly, whose
//! memory never shrinks, the buffer it grew out of stays allocated too. Here the first
//! chunk grows like a `Vec` (from 16 elements, so a small queue stays small) up to 4096
//! elements; after that the array grows one 4096-element chunk at a time and never
//! moves, so the memory a big queue holds tracks its size: at most one partly used chunk
//! and one spare. Chunks start on a 64-byte boundary, which lets the heap keep each
//! node's four 16-byte children in one cache line. Indexing costs a shift, a mask and a
//! load more than a `Vec`. (How the wasm memory under the allocator grows: `binding/growth.rs`.)

use ::alloc::alloc::{self, Layout};
use ::alloc::vec::Vec;
use core::ptr::NonNull;

const BITS: u32 = 12;
const CHUNK: usize = 1 << BITS;
const MASK: usize = CHUNK - 1;
const FIRST: usize = 16;
const ALIGN: usize = 64;

pub(crate) struct Chunked<T> {
    chunks: Vec<NonNull<T>>,
    /// Capacity of chunk 0 (the others hold `CHUNK`).
    first_cap: usize,
    // Elements 0..len are initialised.
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        assert!(core::mem::size_of::<T>() > 0, "no zero-sized elements");
        Self { chunks: Vec::new(), first_cap: 0, len: 0 }
    }
}

fn layout<T>(cap: usize) -> Layout {
    Layout::from_size_align(cap * core::mem::size_of::<T>(), ALIGN.max(core::mem::align_of::<T>()))
        .expect("chunk layout")
}

impl<T> Chunked<T> {
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn push(&mut self, value: T) {
        let i = self.len;
        if i & MASK == 0 && i >> BITS == self.chunks.len() || i == self.first_cap && i < CHUNK {
            self.grow();
        }
        // SAFETY: grow() made room for element i: its chunk exists and holds i & MASK.
        unsafe { self.slot(i).write(value) };
        self.len = i + 1;
    }

    #[cold]
    fn grow(&mut self) {
        let i = self.len;
        if i < CHUNK {
            // Chunk 0 grows like a Vec.
            let cap = if self.first_cap == 0 { FIRST } else { self.first_cap * 2 };
            let new = if self.first_cap == 0 {
                // SAFETY: the layout has a non-zero size.
                unsafe { alloc::alloc(layout::<T>(cap)) }
            } else {
                // SAFETY: chunk 0 was allocated with the layout of `first_cap`.
                unsafe {
                    alloc::realloc(self.chunks[0].as_ptr().cast(), layout::<T>(self.first_cap), layout::<T>(cap).size())
                }
            };
            let new = NonNull::new(new.cast()).unwrap_or_else(|| alloc::handle_alloc_error(layout::<T>(cap)));
            if self.first_cap == 0 {
                self.chunks.push(new);
            } else {
                self.chunks[0] = new;
            }
            self.first_cap = cap;
        } else {
            // SAFETY: the layout has a non-zero size.
            let new = unsafe { alloc::alloc(layout::<T>(CHUNK)) };
            self.chunks.push(NonNull::new(new.cast()).unwrap_or_else(|| alloc::handle_alloc_error(layout::<T>(CHUNK))));
        }
    }

    /// Where element i lives (initialised or not).
    #[inline(always)]
    unsafe fn slot(&self, i: usize) -> *mut T {
        self.chunks.get_unchecked(i >> BITS).as_ptr().add(i & MASK)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        let i = self.len;
        // SAFETY: element i was initialised and is now outside 0..len, so it is read once.
        let value = unsafe { self.slot(i).read() };
        // Chunk i >> BITS just became empty: keep it as the one spare, free any beyond.
        if i & MASK == 0 && i > 0 {
            self.free_chunks_from((i >> BITS) + 1);
        }
        Some(value)
    }

    fn free_chunks_from(&mut self, keep: usize) {
        while self.chunks.len() > keep.max(1) {
            let chunk = self.chunks.pop().expect("a chunk beyond keep");
            // SAFETY: chunks past the first were allocated with CHUNK's layout.
            unsafe { alloc::dealloc(chunk.as_ptr().cast(), layout::<T>(CHUNK)) };
        }
    }

    /// Drops every element and frees every chunk.
    pub fn clear(&mut self) {
        while self.pop().is_some() {}
        self.free_chunks_from(1);
        if let Some(first) = self.chunks.pop() {
            // SAFETY: chunk 0 was allocated with the layout of `first_cap`.
            unsafe { alloc::dealloc(first.as_ptr().cast(), layout::<T>(self.first_cap)) };
        }
        self.first_cap = 0;
    }

    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        (0..self.len).map(move |i| &self[i])
    }

    /// Bytes held by the chunks.
    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub fn allocated_bytes(&self) -> usize {
        let chunks = self.chunks.len().saturating_sub(1) * CHUNK + self.first_cap;
        chunks * core::mem::size_of::<T>()
    }

    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub fn address_of(&self, i: usize) -> usize {
        &self[i] as *const T as usize
    }
}

impl<T> core::ops::Index<usize> for Chunked<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        debug_assert!(i < self.len, "index {i} out of bounds ({})", self.len);
        // SAFETY: callers (the heap) index only below len, which the debug assertion and
        // the property tests check; so the chunk exists and the element is initialised.
        unsafe { &*self.slot(i) }
    }
}

impl<T> core::ops::IndexMut<usize> for Chunked<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < self.len, "index {i} out of bounds ({})", self.len);
        // SAFETY: as in `index`.
        unsafe { &mut *self.slot(i) }
    }
}

impl<T> Drop for Chunked<T> {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn small_stays_small_big_grows_by_chunks() {
        let mut c = Chunked::default();
        for i in 0..10u64 {
            c.push(i);
        }
        assert_eq!(c.allocated_bytes(), FIRST * 8, "a small array holds little");
        for i in 10..3 * CHUNK as u64 + 5 {
            c.push(i);
        }
        assert_eq!(c.len(), 3 * CHUNK + 5);
        assert!(c.iter().copied().eq(0..3 * CHUNK as u64 + 5), "every element where it was put");
        c[3] = 99;
        assert_eq!(c[3], 99);
        assert_eq!(c.allocated_bytes(), 4 * CHUNK * 8);
        while c.len() > 10 {
            c.pop();
        }
        assert_eq!(c.allocated_bytes(), 2 * CHUNK * 8, "one chunk in use and one spare");
        c.clear();
        assert_eq!(c.allocated_bytes(), 0);
        for i in 0..CHUNK as u64 * 2 {
            c.push(i);
        }
        assert_eq!(c[CHUNK * 2 - 1], CHUNK as u64 * 2 - 1);
    }

    #[test]
    fn chunks_are_cache_line_aligned() {
        let mut c = Chunked::default();
        for i in 0..CHUNK as u64 * 2 + 1 {
            c.push(i);
            if i % 512 == 0 {
                assert_eq!(c.address_of(0) % ALIGN, 0);
            }
        }
        assert_eq!(c.address_of(CHUNK) % ALIGN, 0);
        assert_eq!(c.address_of(2 * CHUNK) % ALIGN, 0);
    }

    #[test]
    fn drops_what_it_holds_exactly_once() {
        let token = Rc::new(());
        {
            let mut c = Chunked::default();
            for _ in 0..CHUNK + 1 {
                c.push(token.clone());
            }
            drop(c.pop());
            assert_eq!(Rc::strong_count(&token), CHUNK + 1);
        }
        assert_eq!(Rc::strong_count(&token), 1);
    }
}
